// SPDX-License-Identifier: Apache-2.0
// Cache entry files that round-trip: the documented byte layout, atomic replacement, unusual
// paths, concurrent writers, decoding without an expected key, and the temp files of
// interrupted writes (named so a sweep finds them, and only them).
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "entry_file_support.hpp"

using namespace wyjit::detail;
using namespace wyjit::test;

TEST_CASE("cache entry encodes to the documented layout and decodes back", "[cache]") {
  CacheEntry entry = make_entry();
  const Bytes bytes = encode_entry(entry);
  REQUIRE(bytes.size() > 16 + 32 + 100);
  CHECK(std::equal(bytes.begin(), bytes.begin() + 8, std::string_view("WYJITCE\0", 8).begin()));
  CHECK(Bytes(bytes.begin() + 8, bytes.begin() + 12) == Bytes{2, 0, 0, 0});
  const std::uint32_t header_size =
      bytes[12] | (bytes[13] << 8) | (bytes[14] << 16) | (bytes[15] << 24);
  CHECK(bytes.size() == 16 + header_size + 100 + 32);
  const auto header = nlohmann::json::parse(bytes.begin() + 16, bytes.begin() + 16 + header_size);
  CHECK(header.at("key_sha256") == sha256_hex(kEntryKey));
  CHECK(header.at("payload_size") == 100);

  const EntryRead read = decode_entry(bytes, kEntryKey);
  REQUIRE(read.status == Status::ok);
  check_same(read.entry, entry);

  CacheEntry empty = make_entry(0);
  empty.roles.clear();
  const EntryRead empty_read = decode_entry(encode_entry(empty), kEntryKey);
  REQUIRE(empty_read.status == Status::ok);
  check_same(empty_read.entry, empty);
}

TEST_CASE("cache entry file round-trips and is replaced by a second write", "[cache]") {
  ScratchDir scratch;
  const fs::path path = scratch.path() / "sm_90" / "gdn_verify.k4.0123456789abcdef.cubin";
  for (const std::size_t size : {std::size_t{100}, std::size_t{5000}}) {
    const CacheEntry entry = make_entry(size);
    write_entry_file_atomic(path, entry);
    const EntryRead read = read_entry_file(path, kEntryKey);
    REQUIRE(read.status == Status::ok);
    check_same(read.entry, entry);
  }
  CHECK(names_in(path.parent_path()) == Names{path.filename()});
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
    write_aged_bytes(dir / name, {'k'}, 7200);
  write_bytes(dir / kept[2], {'n'});  // a temp file, but fresh: maybe still being written
  fs::create_directory(dir / kept[3]);
  fs::create_symlink(dir / "a.cubin", dir / kept[4]);
  fs::create_directory(dir / "sm_90");
  write_aged_bytes(dir / "sm_90" / stale, {'k'}, 7200);  // subdirectories are not visited
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
  const EntryRead read = read_entry_file(path, kEntryKey);
  REQUIRE(read.status == Status::ok);
  CHECK((read.entry.payload.size() == 300 || read.entry.payload.size() == 7000));
  CHECK(names_in(path.parent_path()) == Names{"race.cubin"});
}

TEST_CASE("cache entry decoded without an expected key accepts any consistent key", "[cache]") {
  const Bytes bytes = encode_entry(make_entry());
  const EntryRead any = decode_entry(bytes, std::nullopt);
  REQUIRE(any.status == Status::ok);
  CHECK(any.entry.key_text == kEntryKey);
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
