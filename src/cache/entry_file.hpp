// SPDX-License-Identifier: Apache-2.0
/// @file entry_file.hpp
/// @brief The on-disk cache entry format, its validating decoder and its atomic writer.
///
/// Layout (integers little-endian):
///   8 bytes magic "WYJITCE\0" | u32 format version | u32 header length |
///   header (compact JSON: key_text, key_sha256, variant, target, lowered_names, payload_size) |
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

namespace wyjit::detail {

/// One compiled variant as stored in a cache file.
struct CacheEntry {
  /// Full canonical key text (multi-line); its SHA-256 names the file.
  std::string key_text;
  /// Canonical variant name, e.g. gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.
  std::string variant;
  /// "sm_90", "sm_90a" or "compute_90".
  std::string target;
  /// Mangled kernel names inside the payload, so a load needs only the driver.
  std::vector<std::string> lowered_names;
  /// Cubin or PTX bytes.
  std::vector<std::uint8_t> payload;
};

/// Version written after the magic; any other version reads as corrupt (a miss).
inline constexpr std::uint32_t kEntryFormatVersion = 1;

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

/// Writes `entry` to `path` atomically: parent directories are created, the bytes go to a
/// unique temp file in the same directory (never through a symlink), are fsync'ed, and the
/// temp file is renamed over `path`. On any failure the temp file is removed, `path` is left
/// as it was, and Error(cache_io) is thrown naming the path and the system error.
void write_entry_file_atomic(const std::filesystem::path& path, const CacheEntry& entry);

/// write_entry_file_atomic for arbitrary bytes (e.g. the `<entry>.cu` saved source).
void write_file_atomic(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

/// Removes temp files (see is_temp_file_name) directly inside `dir` whose modification time
/// is more than `older_than` ago; subdirectories are not visited. Best effort: never throws.
/// Returns how many files were removed.
std::size_t sweep_temp_files(const std::filesystem::path& dir, std::chrono::seconds older_than);

/// True when `file_name` has the shape write_entry_file_atomic gives its temp files:
/// ".<final-name>.tmp.<pid>.<16 lowercase hex digits>".
bool is_temp_file_name(std::string_view file_name);

}  // namespace wyjit::detail
