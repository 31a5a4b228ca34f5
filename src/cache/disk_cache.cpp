// SPDX-License-Identifier: Apache-2.0
#include "cache/disk_cache.hpp"

#include <cstdlib>

#include "common/log.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

std::filesystem::path DiskCache::entry_path(const Target& target, const CacheKey& key) const {
  return root_ / target.name() / key.file_name;
}

DiskCache::Lookup DiskCache::load(const Target& target, const CacheKey& key,
                                  CacheEntry& entry) const {
  const std::filesystem::path path = entry_path(target, key);
  EntryRead read = read_entry_file(path, key.text);
  switch (read.status) {
    case EntryRead::Status::ok:
      entry = std::move(read.entry);
      return Lookup::hit;
    case EntryRead::Status::missing:
      return Lookup::miss;
    case EntryRead::Status::corrupt:
      logger().warn("cache entry {} is unusable ({}): recompiling and overwriting it",
                    path.string(), read.reason);
      return Lookup::corrupt;
  }
  return Lookup::miss;
}

bool DiskCache::store(const Target& target, const CacheKey& key, const CacheEntry& entry) const {
  const std::filesystem::path path = entry_path(target, key);
  try {
    write_entry_file_atomic(path, entry);
    return true;
  } catch (const Error& e) {
    logger().warn("cannot write cache entry {}: {} (the kernel is kept in memory only)",
                  path.string(), e.what());
    return false;
  }
}

std::filesystem::path default_cache_root() {
  const auto env = [](const char* name) -> const char* {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
  };
  if (const char* dir = env("WYJIT_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(xdg) / "wyjit";
  if (const char* home = env("HOME")) return std::filesystem::path(home) / ".cache" / "wyjit";
  return ".wyjit-cache";
}

}  // namespace wyjit::detail
