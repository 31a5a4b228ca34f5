// SPDX-License-Identifier: Apache-2.0
#include "cache/layered_cache.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>

#include "cache/cache_env.hpp"
#include "cache/cache_prune.hpp"
#include "common/log.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// NOTE: the key text covers the name expressions of every role, so a mismatch here is an entry
// written by something other than this library.
bool same_roles(const std::vector<CompiledRole>& got, std::span<const std::string_view> roles) {
  if (got.size() != roles.size()) return false;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (got[i].role != roles[i] || got[i].lowered_name.empty()) return false;
  }
  return true;
}

std::string role_names(const std::vector<CompiledRole>& roles) {
  std::string out;
  for (const CompiledRole& r : roles) out += (out.empty() ? "" : ", ") + r.role;
  return out.empty() ? "none" : out;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

fs::path normal_absolute(const fs::path& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return (ec ? path : absolute).lexically_normal();
}

std::uint64_t file_size_or_zero(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

}  // namespace

LayeredCache::LayeredCache(const JitOptions& options) : options_(options) {
  writable_path_ = options.cache_dir.empty() ? default_cache_root() : fs::path(options.cache_dir);
  const fs::path writable_normal = normal_absolute(writable_path_);
  for (const std::string& dir : options.read_only_dirs) {
    // NOTE: a root listed as read-only and writable is the writable one (searched last).
    if (normal_absolute(dir) == writable_normal) continue;
    roots_.emplace_back(dir, /*read_only=*/true);
    infos_.push_back({dir, true, "WYJIT_CACHE_RO_DIRS"});
  }

  std::string reason;
  if (options.no_jit) {
    reason = "no_jit";  // NOTE: never create or write anything when compiling is forbidden
  } else if (std::string why = probe_writable(writable_path_); !why.empty()) {
    reason = why;
    logger().warn(
        "cache root '{}' cannot be written ({}): using it read-only; kernels compiled by this "
        "process are kept in memory only",
        writable_path_.string(), why);
  }
  roots_.emplace_back(writable_path_, !reason.empty());
  infos_.push_back({writable_path_.string(), !reason.empty(), reason});
  if (reason.empty()) writable_ = &roots_.back();
}

LayeredCache::Lookup LayeredCache::lookup(const Target& target, const CacheKey& key,
                                          std::span<const std::string_view> roles,
                                          bool writable_only) const {
  Lookup result;
  for (const DiskCache& root : roots_) {
    if (writable_only && &root != writable_) continue;
    EntryRead read = root.load(target, key);
    const fs::path path = root.entry_path(target, key);
    switch (read.status) {
      case EntryRead::Status::missing:
        continue;
      case EntryRead::Status::corrupt:
        ++result.corrupt;
        logger().warn(
            "cache entry '{}' is unusable ({}): {}", path.string(), read.reason,
            root.read_only() ? "skipping it (read-only root)" : "recompiling and overwriting it");
        continue;
      case EntryRead::Status::ok:
        break;
    }
    if (!same_roles(read.entry.roles, roles)) {
      ++result.corrupt;
      logger().warn("cache entry '{}' holds {} kernels ({}), expected {}: ignoring it",
                    path.string(), read.entry.roles.size(), role_names(read.entry.roles),
                    roles.size());
      continue;
    }
    if (&root == writable_) touch_entry(path);
    // NOTE: the tier is the root's role: the writable root counts as "disk" also when it
    // turned out not to be writable, or under no_jit.
    result.hit = Hit{std::move(read.entry), path, &root != &roots_.back()};
    return result;
  }
  return result;
}

fs::path LayeredCache::lock_dir() {
  std::call_once(lock_dir_once_, [this] {
    const fs::path base =
        options_.lock_dir.empty() ? default_lock_base() : fs::path(options_.lock_dir);
    try {
      lock_dir_ = prepare_lock_dir(base, writable_path_);
    } catch (const Error& e) {
      logger().warn("{}: compiling without cross-process locks", e.what());
    }
  });
  return lock_dir_;
}

LayeredCache::KeyLock LayeredCache::lock_key(const CacheKey& key) {
  KeyLock result;
  if (!options_.process_locks || writable_ == nullptr) return result;
  const fs::path dir = lock_dir();
  if (dir.empty()) return result;
  const fs::path path = dir / (key.hash + ".lock");
  FileLock::Outcome outcome = FileLock::Outcome::failed;
  std::string error;
  result.lock = FileLock::acquire(path, std::chrono::milliseconds(0), outcome, error);
  if (outcome == FileLock::Outcome::timed_out) {
    // Another process is compiling this key: wait for it, then the caller re-reads the disk.
    result.waited = true;
    const Clock::time_point start = Clock::now();
    logger().debug("waiting for another process compiling key {}", key.hash.substr(0, 16));
    result.lock = FileLock::acquire(path, std::chrono::milliseconds(options_.lock_timeout_ms),
                                    outcome, error);
    result.wait_ms = ms_since(start);
    if (outcome == FileLock::Outcome::timed_out) {
      result.timed_out = true;
      logger().warn("lock '{}' still held after {} ms: compiling without it", path.string(),
                    options_.lock_timeout_ms);
    }
  }
  if (outcome == FileLock::Outcome::failed) {
    logger().debug("{}: compiling without the lock", error);
  }
  return result;
}

LayeredCache::Stored LayeredCache::store(const Target& target, const CacheKey& key,
                                         const CacheEntry& entry, std::string_view source) {
  Stored result;
  if (writable_ == nullptr) return result;
  const std::string target_name = target.name();
  {
    // Leftovers of killed writers: swept once per target directory and Jit, before writing.
    const std::lock_guard lock(accounting_mutex_);
    if (swept_targets_.insert(target_name).second) {
      if (const std::size_t n = sweep_temp_files(writable_path_ / target_name, kStaleAfter)) {
        logger().info("cache: removed {} stale temp file(s) from '{}'", n,
                      (writable_path_ / target_name).string());
      }
    }
  }
  try {
    result.path = writable_->store(target, key, entry);
  } catch (const Error& e) {
    // NOTE: one warning per Jit: a full disk would otherwise log once per variant.
    const bool first = !warned_write_failure_.exchange(true);
    logger().log(first ? spdlog::level::warn : spdlog::level::debug,
                 "{} (the kernel is kept in memory only{})", e.what(),
                 first ? "; further write failures are logged at debug level" : "");
    return result;
  }
  if (options_.save_source) {
    fs::path source_path = result.path;
    source_path += ".cu";
    try {
      write_file_atomic(source_path, std::span(reinterpret_cast<const std::uint8_t*>(source.data()),
                                               source.size()));
    } catch (const Error& e) {
      logger().warn("cannot save the stamped source: {}", e.what());
    }
  }

  // Size bound: a running estimate, refreshed by a full scan whenever it crosses the bound.
  const std::lock_guard lock(accounting_mutex_);
  if (!approx_bytes_) {
    approx_bytes_ = scan_root(writable_path_).bytes;
  } else {
    fs::path source_path = result.path;
    source_path += ".cu";
    *approx_bytes_ += file_size_or_zero(result.path) +
                      (options_.save_source ? file_size_or_zero(source_path) : 0);
  }
  if (options_.max_bytes == 0 || *approx_bytes_ <= options_.max_bytes) return result;
  // NOTE: one pruner per root at a time; when another process is pruning, skip (its prune
  // covers our entry too, and the next write here checks again).
  FileLock prune_lock;
  if (const fs::path dir = lock_dir(); !dir.empty()) {
    FileLock::Outcome outcome = FileLock::Outcome::failed;
    std::string error;
    prune_lock =
        FileLock::acquire(dir / "prune.lock", std::chrono::milliseconds(0), outcome, error);
    if (outcome == FileLock::Outcome::timed_out) return result;
  }
  const PruneResult pruned = prune_root(writable_path_, options_.max_bytes, result.path);
  for (const std::string& error : pruned.errors) logger().warn("cache: {}", error);
  approx_bytes_ = pruned.bytes_after;
  result.evicted = pruned.evicted;
  return result;
}

std::string LayeredCache::describe_roots() const {
  std::string out;
  for (const CacheRootInfo& info : infos_) {
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}' ({})", info.path,
                       info.read_only ? "read-only: " + info.reason : std::string("writable"));
  }
  return out;
}

}  // namespace wyjit::detail
