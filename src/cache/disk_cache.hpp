// SPDX-License-Identifier: Apache-2.0
// One cache root on disk: ROOT/<target>/<variant>.<hash16>.cubin (or .ptx) entries.
#pragma once

#include <filesystem>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"

namespace wyjit::detail {

class DiskCache {
 public:
  /// `read_only`: searched, never written (a precompiled root, or one that cannot be written).
  DiskCache(std::filesystem::path root, bool read_only)
      : root_(std::move(root)), read_only_(read_only) {}

  const std::filesystem::path& root() const noexcept { return root_; }
  bool read_only() const noexcept { return read_only_; }
  std::filesystem::path entry_path(const Target& target, const CacheKey& key) const;

  /// Reads the entry for `key`: ok, missing, or corrupt with the reason. Never throws.
  EntryRead load(const Target& target, const CacheKey& key) const;

  /// Writes the entry atomically and returns its path. Throws Error(cache_io) naming the path
  /// and the system error (nothing is left behind), Error(internal) on a read-only root.
  std::filesystem::path store(const Target& target, const CacheKey& key,
                              const CacheEntry& entry) const;

 private:
  std::filesystem::path root_;
  bool read_only_ = false;
};

/// Why nothing can be written under `root` (empty when something can): creates the directory,
/// then creates and removes a probe file in it. Never throws.
std::string probe_writable(const std::filesystem::path& root);

}  // namespace wyjit::detail
