// SPDX-License-Identifier: Apache-2.0
// One writable cache root on disk: ROOT/<target>/<variant>.<hash16>.cubin entries.
#pragma once

#include <filesystem>
#include <optional>

#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"

namespace wyjit::detail {

class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const noexcept { return root_; }
  std::filesystem::path entry_path(const Target& target, const CacheKey& key) const;

  enum class Lookup { hit, miss, corrupt };
  /// Reads the entry for `key`. A corrupt or mismatched entry is logged and reported as
  /// `corrupt` (the caller recompiles and overwrites it); it never throws for bad files.
  Lookup load(const Target& target, const CacheKey& key, CacheEntry& entry) const;

  /// Writes atomically. Returns false (after one log line) when the root cannot be written.
  bool store(const Target& target, const CacheKey& key, const CacheEntry& entry) const;

 private:
  std::filesystem::path root_;
};

/// $WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit, else $HOME/.cache/wyjit, else ./.wyjit-cache.
std::filesystem::path default_cache_root();

}  // namespace wyjit::detail
