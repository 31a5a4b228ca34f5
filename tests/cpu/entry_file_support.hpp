// SPDX-License-Identifier: Apache-2.0
// Helpers of the cache entry file tests (test_entry_file_*.cpp): a sample entry, hand-built
// files, directory listings. Scratch directories and byte I/O come from test_cache_support.hpp.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "test_cache_support.hpp"
#include "wyjit/error.hpp"

namespace wyjit::test {

using Status = detail::EntryRead::Status;
using Names = std::vector<std::string>;

inline const std::string kEntryKey =
    "schema 1\nvariant gdn_verify.k4.io_bf16.st_f32.strided.vk.d128\n";

inline detail::CacheEntry make_entry(std::size_t payload_size = 100) {
  detail::CacheEntry entry{kEntryKey,
                           "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128",
                           "sm_90",
                           {{"verify", "_Z10gdn_verifyILi4EEvPv"}, {"other", "_Z3fooi"}},
                           Bytes(payload_size)};
  for (std::size_t i = 0; i < payload_size; ++i)
    entry.payload[i] = static_cast<std::uint8_t>(i * 7);
  return entry;
}

inline void check_same(const detail::CacheEntry& a, const detail::CacheEntry& b) {
  CHECK(a.key_text == b.key_text);
  CHECK(a.variant == b.variant);
  CHECK(a.target == b.target);
  CHECK(a.roles == b.roles);
  CHECK(a.payload == b.payload);
}

/// Writes `bytes` to `path`, its modification time `age_seconds` ago.
inline void write_aged_bytes(const fs::path& path, const Bytes& bytes, int age_seconds) {
  write_bytes(path, bytes);
  make_old(path, age_seconds);
}

inline Names names_in(const fs::path& dir) {
  Names names;
  for (const auto& item : fs::directory_iterator(dir)) names.push_back(item.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

/// A file with an arbitrary header text but a valid checksum, to reach the field checks.
inline Bytes build_file(const std::string& header, const Bytes& payload) {
  Bytes out = {'W', 'Y', 'J', 'I', 'T', 'C', 'E', '\0', 2, 0, 0, 0};
  for (int shift = 0; shift < 32; shift += 8) out.push_back(std::uint8_t(header.size() >> shift));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  const detail::Digest checksum = detail::sha256(out.data(), out.size());
  out.insert(out.end(), checksum.begin(), checksum.end());
  return out;
}

inline nlohmann::json good_header(std::uint64_t payload_size) {
  return {{"key_text", kEntryKey},
          {"key_sha256", detail::sha256_hex(kEntryKey)},
          {"variant", "v"},
          {"target", "sm_90"},
          {"roles", nlohmann::json::array({nlohmann::json::array({"verify", "a"}),
                                           nlohmann::json::array({"other", "b"})})},
          {"payload_size", payload_size}};
}

/// The message of the cache_io error that writing `entry` to `path` throws ("" if none).
inline std::string write_error(const fs::path& path, const detail::CacheEntry& entry) {
  try {
    detail::write_entry_file_atomic(path, entry);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::cache_io) return e.what();
    return std::string("wrong code: ") + to_string(e.code());
  }
  return {};
}

}  // namespace wyjit::test
