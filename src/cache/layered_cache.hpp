// SPDX-License-Identifier: Apache-2.0
// The disk tiers of a Jit: read-only precompiled roots, then one writable root; per-key
// process locks; temp-file sweeping and the size bound of the writable root.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/cache_lock.hpp"
#include "cache/disk_cache.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::detail {

class LayeredCache {
 public:
  /// Resolves the roots of `options` (disk_cache must be on). A writable root that cannot be
  /// created or written is used read-only, with one warning; nothing here throws for I/O.
  explicit LayeredCache(const JitOptions& options);

  /// Search order: the read-only roots, then the writable root.
  const std::vector<CacheRootInfo>& roots() const noexcept { return infos_; }
  /// The writable root's path, also when it turned out not to be writable.
  const std::filesystem::path& writable_root() const noexcept { return writable_path_; }
  /// True when entries can be written.
  bool writable() const noexcept { return writable_ != nullptr; }

  struct Hit {
    CacheEntry entry;
    std::filesystem::path path;
    bool read_only = false;  ///< found in one of the read-only roots (WYJIT_CACHE_RO_DIRS)
  };
  struct Lookup {
    std::optional<Hit> hit;
    std::size_t corrupt = 0;  ///< entries found unusable on the way (each logged)
  };
  /// Searches every root in order (only the writable one when `writable_only`) for an entry of
  /// `key` holding the kernels `roles` (the family's, in order). A hit in the writable root
  /// records its use (touch_entry) for the LRU bound. Never throws for I/O.
  Lookup lookup(const Target& target, const CacheKey& key, std::span<const std::string_view> roles,
                bool writable_only) const;

  struct KeyLock {
    FileLock lock;           ///< held() false when locks are off, failed or timed out
    bool waited = false;     ///< another process held it first
    bool timed_out = false;  ///< ... and kept it past the timeout
    double wait_ms = 0.0;
  };
  /// Takes the process lock of `key` (JitOptions::process_locks, lock_dir, lock_timeout_ms).
  KeyLock lock_key(const CacheKey& key);

  struct Stored {
    std::filesystem::path path;  ///< empty when the entry could not be written
    std::size_t evicted = 0;     ///< entries removed by the size bound after this write
  };
  /// Writes `entry` into the writable root (and `source` as `<entry>.cu` when save_source is
  /// on), then enforces the size bound. A failure is logged (a warning the first time) and
  /// reported as an empty path, never thrown.
  Stored store(const Target& target, const CacheKey& key, const CacheEntry& entry,
               std::string_view source);

  /// "'/a' (read-only), '/b'": for error messages.
  std::string describe_roots() const;

 private:
  std::filesystem::path lock_dir();  // empty when locks are unusable (warned once)

  JitOptions options_;
  std::vector<DiskCache> roots_;  // search order
  std::vector<CacheRootInfo> infos_;
  const DiskCache* writable_ = nullptr;
  std::filesystem::path writable_path_;

  std::once_flag lock_dir_once_;
  std::filesystem::path lock_dir_;
  std::atomic<bool> warned_write_failure_{false};

  std::mutex accounting_mutex_;  // guards the two below; never held across a compile
  std::optional<std::uint64_t> approx_bytes_;
  std::set<std::string> swept_targets_;
};

}  // namespace wyjit::detail
