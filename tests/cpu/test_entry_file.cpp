// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "wyjit/error.hpp"

using namespace wyjit::detail;

namespace {

namespace fs = std::filesystem;
using Status = EntryRead::Status;
using Bytes = std::vector<std::uint8_t>;
using Names = std::vector<std::string>;

/// A fresh directory under the system temp dir, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "wyjit-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) FAIL("mkdtemp failed for " << pattern);
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const std::string kKey = "schema 1\nvariant gdn_verify.k4.io_bf16.st_f32.strided.vk.d128\n";

CacheEntry make_entry(std::size_t payload_size = 100) {
  CacheEntry entry{kKey, "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", "sm_90",
                   Names{"_Z10gdn_verifyILi4EEvPv", "_Z3fooi"}, Bytes(payload_size)};
  for (std::size_t i = 0; i < payload_size; ++i)
    entry.payload[i] = static_cast<std::uint8_t>(i * 7);
  return entry;
}

void check_same(const CacheEntry& a, const CacheEntry& b) {
  CHECK(a.key_text == b.key_text);
  CHECK(a.variant == b.variant);
  CHECK(a.target == b.target);
  CHECK(a.lowered_names == b.lowered_names);
  CHECK(a.payload == b.payload);
}

Bytes read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Sets the modification time of `path` (not of a symlink's target) to `seconds` ago.
void make_old(const fs::path& path, int seconds) {
  const timespec ago{std::time(nullptr) - seconds, 0};
  const timespec times[2] = {ago, ago};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

void write_bytes(const fs::path& path, const Bytes& bytes, int age_seconds = 0) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (age_seconds != 0) make_old(path, age_seconds);
}

Names names_in(const fs::path& dir) {
  Names names;
  for (const auto& item : fs::directory_iterator(dir)) names.push_back(item.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

/// A file with an arbitrary header text but a valid checksum, to reach the field checks.
Bytes build_file(const std::string& header, const Bytes& payload) {
  Bytes out = {'W', 'Y', 'J', 'I', 'T', 'C', 'E', '\0', 1, 0, 0, 0};
  for (int shift = 0; shift < 32; shift += 8) out.push_back(std::uint8_t(header.size() >> shift));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  const Digest checksum = sha256(out.data(), out.size());
  out.insert(out.end(), checksum.begin(), checksum.end());
  return out;
}

nlohmann::json good_header(std::uint64_t payload_size) {
  return {{"key_text", kKey},  {"key_sha256", sha256_hex(kKey)}, {"variant", "v"},
          {"target", "sm_90"}, {"lowered_names", {"a", "b"}},    {"payload_size", payload_size}};
}

/// The message of the cache_io error that writing `entry` to `path` throws ("" if none).
std::string write_error(const fs::path& path, const CacheEntry& entry) {
  try {
    write_entry_file_atomic(path, entry);
  } catch (const wyjit::Error& e) {
    if (e.code() == wyjit::ErrorCode::cache_io) return e.what();
    return std::string("wrong code: ") + wyjit::to_string(e.code());
  }
  return {};
}

}  // namespace

TEST_CASE("cache entry encodes to the documented layout and decodes back", "[cache]") {
  CacheEntry entry = make_entry();
  const Bytes bytes = encode_entry(entry);
  REQUIRE(bytes.size() > 16 + 32 + 100);
  CHECK(std::equal(bytes.begin(), bytes.begin() + 8, std::string_view("WYJITCE\0", 8).begin()));
  CHECK(Bytes(bytes.begin() + 8, bytes.begin() + 12) == Bytes{1, 0, 0, 0});
  const std::uint32_t header_size =
      bytes[12] | (bytes[13] << 8) | (bytes[14] << 16) | (bytes[15] << 24);
  CHECK(bytes.size() == 16 + header_size + 100 + 32);
  const auto header = nlohmann::json::parse(bytes.begin() + 16, bytes.begin() + 16 + header_size);
  CHECK(header.at("key_sha256") == sha256_hex(kKey));
  CHECK(header.at("payload_size") == 100);

  const EntryRead read = decode_entry(bytes, kKey);
  REQUIRE(read.status == Status::ok);
  check_same(read.entry, entry);

  CacheEntry empty = make_entry(0);
  empty.lowered_names.clear();
  const EntryRead empty_read = decode_entry(encode_entry(empty), kKey);
  REQUIRE(empty_read.status == Status::ok);
  check_same(empty_read.entry, empty);
}

TEST_CASE("cache entry file round-trips and is replaced by a second write", "[cache]") {
  ScratchDir scratch;
  const fs::path path = scratch.path() / "sm_90" / "gdn_verify.k4.0123456789abcdef.cubin";
  for (const std::size_t size : {std::size_t{100}, std::size_t{5000}}) {
    const CacheEntry entry = make_entry(size);
    write_entry_file_atomic(path, entry);
    const EntryRead read = read_entry_file(path, kKey);
    REQUIRE(read.status == Status::ok);
    check_same(read.entry, entry);
  }
  CHECK(names_in(path.parent_path()) == Names{path.filename()});
}

TEST_CASE("cache entry truncated anywhere is corrupt", "[cache]") {
  const Bytes bytes = encode_entry(make_entry());
  const std::size_t header_end = bytes.size() - 32 - 100;
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{8}, std::size_t{15},
                                std::size_t{16}, std::size_t{20}, header_end / 2, header_end - 1,
                                header_end, header_end + 50, bytes.size() - 32, bytes.size() - 1}) {
    INFO("cut at " << cut << " of " << bytes.size());
    const EntryRead read = decode_entry(std::span(bytes).first(cut), kKey);
    CHECK(read.status == Status::corrupt);
    CHECK(read.reason.rfind(cut == 0 ? "empty file" : "truncated: ", 0) == 0);
  }
  CHECK(decode_entry(std::span(bytes).first(header_end + 50), kKey).reason ==
        "truncated: header says 100 payload bytes plus a 32-byte checksum, "
        "file has 50 bytes after the header");
}

TEST_CASE("cache entry: every single-bit flip is detected", "[cache]") {
  const Bytes good = encode_entry(make_entry(100));
  Bytes bytes = good;
  std::size_t undetected = 0;
  for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] ^ (1u << (bit % 8)));
    const EntryRead read = decode_entry(bytes, kKey);
    if (read.status != Status::corrupt || read.reason.empty()) {
      ++undetected;
      UNSCOPED_INFO("bit " << bit << " not detected");
    }
    bytes[bit / 8] = good[bit / 8];
  }
  CHECK(undetected == 0);
}

TEST_CASE("cache entry with a bad preamble or key is corrupt with a precise reason", "[cache]") {
  const Bytes good = encode_entry(make_entry());
  Bytes bytes = good;
  bytes[0] = 'X';
  CHECK(decode_entry(bytes, kKey).reason == "bad magic");
  bytes = good;
  bytes[8] = 7;
  CHECK(decode_entry(bytes, kKey).reason == "format version 7, expected 1");
  bytes = good;
  std::fill(bytes.begin() + 12, bytes.begin() + 16, std::uint8_t{0xff});
  CHECK(decode_entry(bytes, kKey).reason.rfind("absurd header length 4294967295", 0) == 0);

  const EntryRead other_key = decode_entry(good, kKey + "nvrtc 12.8\n");
  CHECK(other_key.status == Status::corrupt);
  CHECK(other_key.reason == "key mismatch");
}

TEST_CASE("cache entry header fields are validated", "[cache]") {
  const Bytes payload(10, 0xab);
  auto reason_for = [&](const nlohmann::json& header) {
    const EntryRead read = decode_entry(build_file(header.dump(), payload), kKey);
    CHECK(read.status == Status::corrupt);
    return read.reason;
  };
  REQUIRE(decode_entry(build_file(good_header(10).dump(), payload), kKey).status == Status::ok);

  for (const char* field : {"key_text", "key_sha256", "variant", "target"}) {
    const std::string expected =
        std::string("header field '") + field + "' missing or not a string";
    nlohmann::json header = good_header(10);
    header[field] = 42;
    CHECK(reason_for(header) == expected);
    header.erase(field);
    CHECK(reason_for(header) == expected);
  }
  nlohmann::json header = good_header(10);
  header["lowered_names"] = "a";
  CHECK(reason_for(header) == "header field 'lowered_names' missing or not an array");
  header["lowered_names"] = {"a", 1};
  CHECK(reason_for(header) == "header field 'lowered_names' holds a non-string");
  for (const nlohmann::json& bad :
       {nlohmann::json(-1), nlohmann::json(10.0), nlohmann::json("10")}) {
    header = good_header(10);
    header["payload_size"] = bad;
    CHECK(reason_for(header) == "header field 'payload_size' missing or not an unsigned integer");
  }
  CHECK(reason_for(good_header(11)).rfind("truncated: header says 11 payload bytes", 0) == 0);
  CHECK(reason_for(good_header(9)) == "trailing bytes: header says 9 payload bytes, file has 10");
  CHECK(reason_for(good_header(std::uint64_t{1} << 63)).rfind("truncated: ", 0) == 0);
  header = good_header(10);
  header["key_sha256"] = sha256_hex("something else");
  CHECK(reason_for(header) == "key_sha256 does not match key_text");
  CHECK(reason_for(nlohmann::json::array({1, 2})) == "header is not a JSON object");

  CHECK(decode_entry(build_file("{\"key_text\": [[", payload), kKey).reason ==
        "header is not valid JSON");
  CHECK(decode_entry(build_file(std::string(100000, '['), payload), kKey).reason ==
        "header is not valid JSON");
}

TEST_CASE("cache entry decode never throws on random bytes", "[cache]") {
  std::mt19937 rng(20240611);
  const Bytes good = encode_entry(make_entry(40));
  for (int round = 0; round < 3000; ++round) {
    Bytes bytes(rng() % 300);
    for (auto& byte : bytes) byte = static_cast<std::uint8_t>(rng());
    if (round % 2 == 0) {  // keep a valid preamble so the header parser is exercised
      std::copy_n(good.begin(), std::min<std::size_t>(16, bytes.size()), bytes.begin());
      if (bytes.size() >= 16) bytes[12] = static_cast<std::uint8_t>(rng() % 200);
    }
    EntryRead read;
    REQUIRE_NOTHROW(read = decode_entry(bytes, kKey));
    CHECK(read.status == Status::corrupt);
  }
}

TEST_CASE("cache entry files that are missing, empty or not files", "[cache]") {
  ScratchDir scratch;
  const fs::path& dir = scratch.path();
  CHECK(read_entry_file(dir / "nope.cubin", kKey).status == Status::missing);
  write_bytes(dir / "empty", {});
  CHECK(read_entry_file(dir / "empty" / "x.cubin", kKey).status == Status::missing);
  const EntryRead empty = read_entry_file(dir / "empty", kKey);
  CHECK(empty.status == Status::corrupt);
  CHECK(empty.reason == "empty file");

  fs::create_directory(dir / "dir.cubin");
  const EntryRead directory = read_entry_file(dir / "dir.cubin", kKey);
  CHECK(directory.status == Status::corrupt);
  CHECK(directory.reason == "not a regular file");
  REQUIRE(::mkfifo((dir / "fifo.cubin").c_str(), 0644) == 0);  // must not block
  CHECK(read_entry_file(dir / "fifo.cubin", kKey).reason == "not a regular file");
}

TEST_CASE("cache entry write replaces a planted symlink instead of following it", "[cache]") {
  ScratchDir scratch;
  const fs::path victim = scratch.path() / "victim.txt";
  const Bytes precious = {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'};
  write_bytes(victim, precious);
  const fs::path path = scratch.path() / "entry.cubin";
  fs::create_symlink(victim, path);

  write_entry_file_atomic(path, make_entry());
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  CHECK(read_bytes(victim) == precious);
  CHECK(read_entry_file(path, kKey).status == Status::ok);
  CHECK(names_in(scratch.path()) == Names{"entry.cubin", "victim.txt"});
}

TEST_CASE("cache entry write failures throw cache_io and leave no temp file", "[cache]") {
  ScratchDir scratch;
  const fs::path& dir = scratch.path();

  SECTION("parent is a regular file") {
    write_bytes(dir / "file", {'x'});
    const fs::path path = dir / "file" / "sub" / "entry.cubin";
    const std::string message = write_error(path, make_entry());
    CHECK(message.find(path.string()) != std::string::npos);
    CHECK((message.find("Not a directory") != std::string::npos ||
           message.find("File exists") != std::string::npos));
    CHECK(names_in(dir) == Names{"file"});
    CHECK(read_bytes(dir / "file") == Bytes{'x'});
  }

  SECTION("final path is a directory: the rename fails and the temp file is removed") {
    fs::create_directory(dir / "entry.cubin");
    const std::string message = write_error(dir / "entry.cubin", make_entry());
    CHECK(message.find("Is a directory") != std::string::npos);
    // The message names the temp file: check it has the sweepable shape.
    const auto quote = message.find("temp file '") + 11;
    const fs::path temp = message.substr(quote, message.find('\'', quote) - quote);
    CHECK(temp.parent_path() == dir);
    CHECK(is_temp_file_name(temp.filename().string()));
    CHECK(names_in(dir) == Names{"entry.cubin"});
  }

  SECTION("file size limit hit mid-write keeps the previous entry") {
    // NOTE: we run as root, so a chmod 0555 directory would not stop the write; RLIMIT_FSIZE
    // does. It is set in a forked child so the test runner keeps its limits.
    const fs::path path = dir / "entry.cubin";
    write_entry_file_atomic(path, make_entry(10));
    const Bytes before = read_bytes(path);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // no Catch macros in the child, only _exit codes
      const rlimit limit{4096, 4096};
      std::signal(SIGXFSZ, SIG_IGN);
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
      const std::string message = write_error(path, make_entry(64 * 1024));
      if (message.find("File too large") == std::string::npos) ::_exit(11);
      ::_exit(message.find(path.string()) == std::string::npos ? 12 : 0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(names_in(dir) == Names{"entry.cubin"});
    CHECK(read_bytes(path) == before);
  }
}

TEST_CASE("sweep_temp_files removes only stale temp files", "[cache]") {
  ScratchDir scratch;
  const fs::path& dir = scratch.path();
  const std::string stale = ".a.cubin.tmp.1234.0123456789abcdef";
  const Names kept = {".a.cubin.tmp..0123456789abcdef",    ".a.cubin.tmp.1234.0123456789abcdeg",
                      ".b.cubin.tmp.99.fedcba9876543210",  ".d.cubin.tmp.5.0123456789abcdef",
                      ".l.cubin.tmp.5.0123456789abcdef",   "a.cubin",
                      "a.cubin.tmp.1234.0123456789abcdef", "sm_90"};
  for (const auto& name : {kept[0], kept[1], kept[5], kept[6], stale})
    write_bytes(dir / name, {'k'}, 7200);
  write_bytes(dir / kept[2], {'n'});  // a temp file, but fresh: maybe still being written
  fs::create_directory(dir / kept[3]);
  fs::create_symlink(dir / "a.cubin", dir / kept[4]);
  fs::create_directory(dir / "sm_90");
  write_bytes(dir / "sm_90" / stale, {'k'}, 7200);  // subdirectories are not visited
  make_old(dir / kept[3], 7200);
  make_old(dir / kept[4], 7200);

  CHECK(sweep_temp_files(dir, std::chrono::seconds(3600)) == 1);
  CHECK(names_in(dir) == kept);
  CHECK(fs::exists(dir / "sm_90" / stale));
  CHECK(read_bytes(dir / "a.cubin") == Bytes{'k'});
  CHECK(sweep_temp_files(dir, std::chrono::seconds(3600)) == 0);
  CHECK(sweep_temp_files(dir / "missing", std::chrono::seconds(0)) == 0);
}

TEST_CASE("is_temp_file_name recognises exactly the temp file pattern", "[cache]") {
  CHECK(is_temp_file_name(".x.cubin.tmp.1.0123456789abcdef"));
  CHECK(is_temp_file_name(".gdn verify.ü.ptx.tmp.4194304.ffffffffffffffff"));
  CHECK(is_temp_file_name("..tmp.tmp.1.0123456789abcdef"));
  for (const char* name : {".tmp.1.0123456789abcdef", "x.cubin.tmp.1.0123456789abcdef",
                           ".x.cubin.tmp.1.0123456789ABCDEF", ".x.cubin.tmp.1.0123456789abcde",
                           ".x.cubin.tmp.1a.0123456789abcdef", ".x.cubin.tmp.0123456789abcdef",
                           ".x.cubin.tmp.1.0123456789abcdef.cubin", "", "."}) {
    CHECK_FALSE(is_temp_file_name(name));
  }
}

TEST_CASE("cache entry paths with spaces and non-ASCII characters work", "[cache]") {
  ScratchDir scratch;
  const fs::path path = scratch.path() / "my cache ü" / "sm_90a" / "gdn verify ✓.k4.0123.cubin";
  CacheEntry entry = make_entry();
  entry.key_text = "schema 1\nsource // ünïcødé comment ✓\n";
  write_entry_file_atomic(path, entry);
  const EntryRead read = read_entry_file(path, entry.key_text);
  REQUIRE(read.status == Status::ok);
  check_same(read.entry, entry);
  CHECK(names_in(path.parent_path()) == Names{"gdn verify ✓.k4.0123.cubin"});
}

TEST_CASE("cache entry: invalid UTF-8 in the key is a cache_io error, not a crash", "[cache]") {
  ScratchDir scratch;
  CacheEntry entry = make_entry();
  entry.key_text = "bad \xff\xfe byte";
  CHECK(write_error(scratch.path() / "e.cubin", entry).find("cannot encode") != std::string::npos);
  CHECK(names_in(scratch.path()).empty());
}

TEST_CASE("concurrent writers of one entry leave one valid file", "[cache]") {
  ScratchDir scratch;
  const fs::path path = scratch.path() / "sm_90" / "race.cubin";
  auto writer = [&](std::size_t size) {
    for (int i = 0; i < 10; ++i) write_entry_file_atomic(path, make_entry(size));
  };
  std::thread a(writer, 300);
  std::thread b(writer, 7000);
  a.join();
  b.join();
  const EntryRead read = read_entry_file(path, kKey);
  REQUIRE(read.status == Status::ok);
  CHECK((read.entry.payload.size() == 300 || read.entry.payload.size() == 7000));
  CHECK(names_in(path.parent_path()) == Names{"race.cubin"});
}

TEST_CASE("cache entry decoded without an expected key accepts any consistent key", "[cache]") {
  const Bytes bytes = encode_entry(make_entry());
  const EntryRead any = decode_entry(bytes, std::nullopt);
  REQUIRE(any.status == Status::ok);
  CHECK(any.entry.key_text == kKey);
  CHECK(decode_entry(bytes, std::string_view("another key")).reason == "key mismatch");
  Bytes flipped = bytes;
  flipped[20] ^= 1;
  CHECK(decode_entry(flipped, std::nullopt).status == Status::corrupt);
}

TEST_CASE("write_file_atomic writes arbitrary bytes the same careful way", "[cache]") {
  ScratchDir scratch;
  const fs::path path = scratch.path() / "sm_90" / "entry.cubin.cu";
  const Bytes text = {'/', '/', ' ', 's', 'r', 'c', '\n'};
  write_file_atomic(path, text);
  CHECK(read_bytes(path) == text);
  write_file_atomic(path, Bytes{});
  CHECK(read_bytes(path).empty());
  CHECK(names_in(path.parent_path()) == Names{"entry.cubin.cu"});
}
