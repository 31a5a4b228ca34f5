// SPDX-License-Identifier: Apache-2.0
// Files that appear whole or not at all: written to a unique temp file in the same directory,
// fsync'ed and renamed; stale temp files swept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace wyjit::detail {

/// Writes `bytes` to `path` atomically: parent directories are created, the bytes go to a
/// unique temp file in the same directory (never through a symlink), are fsync'ed, and the
/// temp file is renamed over `path`. On any failure the temp file is removed, `path` is left
/// as it was, and Error(cache_io) is thrown naming the path and the system error.
void write_file_atomic(const std::filesystem::path& path, std::span<const std::uint8_t> bytes);

/// Removes temp files (see is_temp_file_name) directly inside `dir` whose modification time
/// is more than `older_than` ago; subdirectories are not visited. Best effort: never throws.
/// Returns how many files were removed.
std::size_t sweep_temp_files(const std::filesystem::path& dir, std::chrono::seconds older_than);

/// True when `file_name` has the shape write_file_atomic gives its temp files:
/// ".<final-name>.tmp.<pid>.<16 lowercase hex digits>".
bool is_temp_file_name(std::string_view file_name);

}  // namespace wyjit::detail
