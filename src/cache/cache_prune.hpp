// SPDX-License-Identifier: Apache-2.0
// What is in a cache root (scan), and keeping it small (sweep, evict least recently used).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wyjit::detail {

/// Temp files and orphaned saved sources younger than this are left alone: they may belong to
/// a write in progress.
inline constexpr std::chrono::seconds kStaleAfter{3600};

/// One entry file found under ROOT/<target>/.
struct EntryFileInfo {
  std::filesystem::path path;
  std::string target;             ///< the directory name, e.g. "sm_90"
  std::string variant;            ///< from the file name
  std::string hash16;             ///< from the file name
  std::uint64_t bytes = 0;        ///< the entry file plus its saved source, if any
  std::int64_t last_used = 0;     ///< modification time (seconds since the epoch): see touch_entry
  bool has_saved_source = false;  ///< `<entry>.cu` exists
};

/// Everything under a root, classified. Only directories named like a target are visited.
struct RootScan {
  bool exists = false;
  std::vector<EntryFileInfo> entries;        ///< sorted by path
  std::vector<std::filesystem::path> temps;  ///< temp files of interrupted or running writes
  std::vector<std::filesystem::path> orphan_sources;  ///< `<entry>.cu` without its entry
  std::vector<std::filesystem::path> others;          ///< anything else in a target directory
  std::uint64_t bytes = 0;                            ///< sum of entries[i].bytes
};

/// Lists ROOT/<target>/ for every directory whose name is a target; never throws.
RootScan scan_root(const std::filesystem::path& root);

/// Splits `<variant>.<16 hex>.cubin` or `.ptx`; false (outputs untouched) for other names.
bool parse_entry_file_name(std::string_view file_name, std::string& variant, std::string& hash16);

/// Records a use of an entry: sets its modification time to now. NOTE: recency is recorded
/// explicitly, never read from atime (noatime/relatime mounts make atime useless), and kept in
/// the entry file itself, so an entry stays one file. Best effort, never throws.
void touch_entry(const std::filesystem::path& path) noexcept;

struct PruneResult {
  std::uint64_t bytes_before = 0;
  std::uint64_t bytes_after = 0;
  std::size_t evicted = 0;          ///< entries removed (with their saved sources)
  std::size_t swept = 0;            ///< stale temp files and orphaned saved sources removed
  std::vector<std::string> errors;  ///< files that could not be removed, with the reason
};

/// Sweeps temp files and orphaned saved sources older than kStaleAfter from the root and every
/// ROOT/<target>/, then removes entries least recently used first until the entries take at
/// most `max_bytes`. `keep` (an entry just written) is never evicted. Never throws.
PruneResult prune_root(const std::filesystem::path& root, std::uint64_t max_bytes,
                       const std::filesystem::path& keep = {});

}  // namespace wyjit::detail
