// SPDX-License-Identifier: Apache-2.0
/// @file entry_file.hpp
/// @brief The on-disk cache entry format and its validating decoder (the atomic write:
///        cache/atomic_file.hpp).
///
/// Layout (integers little-endian):
///   8 bytes magic "WYJITCE\0" | u32 format version | u32 header length |
///   header (compact JSON: key_text, key_sha256, variant, target, roles (each [role, lowered
///   name]), payload_size) |
///   payload | 32 bytes SHA-256 of everything before it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/atomic_file.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::detail {

/// One compiled variant as stored in a cache file.
struct CacheEntry {
  /// Full canonical key text (multi-line); its SHA-256 names the file.
  std::string key_text;
  /// Canonical variant name, e.g. gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.
  std::string variant;
  /// "sm_90", "sm_90a" or "compute_90".
  std::string target;
  /// Every kernel of the variant, by role, with its mangled name inside the payload, so a load
  /// needs only the driver.
  std::vector<CompiledRole> roles;
  /// Cubin or PTX bytes.
  std::vector<std::uint8_t> payload;
};

/// Version written after the magic; any other version reads as corrupt (a miss).
inline constexpr std::uint32_t kEntryFormatVersion = 2;

/// Serialises `entry` into the file format. Throws Error(cache_io) if a string
/// field is not valid UTF-8 (the JSON header cannot hold it).
std::vector<std::uint8_t> encode_entry(const CacheEntry& entry);

/// Result of reading an entry: ok, missing, or corrupt with a human-readable reason.
struct EntryRead {
  enum class Status { ok, missing, corrupt } status = Status::missing;
  /// Why missing or corrupt, e.g. "bad magic", "key mismatch", "checksum mismatch".
  std::string reason;
  /// Filled only when status is ok.
  CacheEntry entry;
};

/// Validates and decodes `bytes`; never throws or crashes on arbitrary input.
/// Any inconsistency, including a key text different from `expected_key_text`, is `corrupt`.
/// With std::nullopt any self-consistent key is accepted (what `wyjit verify` checks).
EntryRead decode_entry(std::span<const std::uint8_t> bytes,
                       std::optional<std::string_view> expected_key_text);

/// Reads and decodes the file at `path` (symlinks are followed). A file that does not
/// exist is `missing`; one that cannot be opened or read is `corrupt` with the errno text.
EntryRead read_entry_file(const std::filesystem::path& path,
                          std::optional<std::string_view> expected_key_text);

/// Writes `entry` to `path` with write_file_atomic (cache/atomic_file.hpp).
void write_entry_file_atomic(const std::filesystem::path& path, const CacheEntry& entry);

}  // namespace wyjit::detail
