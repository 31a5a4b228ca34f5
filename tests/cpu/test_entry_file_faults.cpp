// SPDX-License-Identifier: Apache-2.0
// Cache entry files that are damaged or cannot be written: truncation, bit flips, bad preambles
// and header fields, random bytes, files that are not files, planted symlinks, write failures.
// Every fault is reported (corrupt with a precise reason, or cache_io), never a crash.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <random>
#include <span>

#include "entry_file_support.hpp"

using namespace wyjit::detail;
using namespace wyjit::test;

TEST_CASE("cache entry truncated anywhere is corrupt", "[cache]") {
  const Bytes bytes = encode_entry(make_entry());
  const std::size_t header_end = bytes.size() - 32 - 100;
  for (const std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{8}, std::size_t{15},
                                std::size_t{16}, std::size_t{20}, header_end / 2, header_end - 1,
                                header_end, header_end + 50, bytes.size() - 32, bytes.size() - 1}) {
    INFO("cut at " << cut << " of " << bytes.size());
    const EntryRead read = decode_entry(std::span(bytes).first(cut), kEntryKey);
    CHECK(read.status == Status::corrupt);
    CHECK(read.reason.rfind(cut == 0 ? "empty file" : "truncated: ", 0) == 0);
  }
  CHECK(decode_entry(std::span(bytes).first(header_end + 50), kEntryKey).reason ==
        "truncated: header says 100 payload bytes plus a 32-byte checksum, "
        "file has 50 bytes after the header");
}

TEST_CASE("cache entry: every single-bit flip is detected", "[cache]") {
  const Bytes good = encode_entry(make_entry(100));
  Bytes bytes = good;
  std::size_t undetected = 0;
  for (std::size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    bytes[bit / 8] = static_cast<std::uint8_t>(bytes[bit / 8] ^ (1u << (bit % 8)));
    const EntryRead read = decode_entry(bytes, kEntryKey);
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
  CHECK(decode_entry(bytes, kEntryKey).reason == "bad magic");
  bytes = good;
  bytes[8] = 7;
  CHECK(decode_entry(bytes, kEntryKey).reason == "format version 7, expected 2");
  bytes = good;
  std::fill(bytes.begin() + 12, bytes.begin() + 16, std::uint8_t{0xff});
  CHECK(decode_entry(bytes, kEntryKey).reason.rfind("absurd header length 4294967295", 0) == 0);

  const EntryRead other_key = decode_entry(good, kEntryKey + "nvrtc 12.8\n");
  CHECK(other_key.status == Status::corrupt);
  CHECK(other_key.reason == "key mismatch");
}

TEST_CASE("cache entry header fields are validated", "[cache]") {
  const Bytes payload(10, 0xab);
  auto reason_for = [&](const nlohmann::json& header) {
    const EntryRead read = decode_entry(build_file(header.dump(), payload), kEntryKey);
    CHECK(read.status == Status::corrupt);
    return read.reason;
  };
  REQUIRE(decode_entry(build_file(good_header(10).dump(), payload), kEntryKey).status ==
          Status::ok);

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
  header["roles"] = "a";
  CHECK(reason_for(header) == "header field 'roles' missing or not an array");
  using Json = nlohmann::json;
  for (const Json& bad : {Json::array({Json::array({"verify", 1})}), Json::array({"a", "b"}),
                          Json::array({Json::array({"verify", "a", "b"})})}) {
    header["roles"] = bad;
    CHECK(reason_for(header) ==
          "header field 'roles' holds something other than [role, lowered name]");
  }
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

  CHECK(decode_entry(build_file("{\"key_text\": [[", payload), kEntryKey).reason ==
        "header is not valid JSON");
  CHECK(decode_entry(build_file(std::string(100000, '['), payload), kEntryKey).reason ==
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
    REQUIRE_NOTHROW(read = decode_entry(bytes, kEntryKey));
    CHECK(read.status == Status::corrupt);
  }
}

TEST_CASE("cache entry files that are missing, empty or not files", "[cache]") {
  ScratchDir scratch;
  const fs::path& dir = scratch.path();
  CHECK(read_entry_file(dir / "nope.cubin", kEntryKey).status == Status::missing);
  write_bytes(dir / "empty", {});
  CHECK(read_entry_file(dir / "empty" / "x.cubin", kEntryKey).status == Status::missing);
  const EntryRead empty = read_entry_file(dir / "empty", kEntryKey);
  CHECK(empty.status == Status::corrupt);
  CHECK(empty.reason == "empty file");

  fs::create_directory(dir / "dir.cubin");
  const EntryRead directory = read_entry_file(dir / "dir.cubin", kEntryKey);
  CHECK(directory.status == Status::corrupt);
  CHECK(directory.reason == "not a regular file");
  REQUIRE(::mkfifo((dir / "fifo.cubin").c_str(), 0644) == 0);  // must not block
  CHECK(read_entry_file(dir / "fifo.cubin", kEntryKey).reason == "not a regular file");
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
  CHECK(read_entry_file(path, kEntryKey).status == Status::ok);
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

TEST_CASE("cache entry: invalid UTF-8 in the key is a cache_io error, not a crash", "[cache]") {
  ScratchDir scratch;
  CacheEntry entry = make_entry();
  entry.key_text = "bad \xff\xfe byte";
  CHECK(write_error(scratch.path() / "e.cubin", entry).find("cannot encode") != std::string::npos);
  CHECK(names_in(scratch.path()).empty());
}
