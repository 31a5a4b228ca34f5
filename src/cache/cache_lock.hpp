// SPDX-License-Identifier: Apache-2.0
// Advisory locks between processes: one lock file per cache key in a node-local directory,
// so N processes starting at once compile each variant once.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>

namespace wyjit::detail {

/// An exclusive flock on one lock file, released on destruction, which also removes the file
/// (so lock files do not pile up). Move-only; a default-constructed lock holds nothing.
class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { release(); }

  bool held() const noexcept { return fd_ >= 0; }

  enum class Outcome {
    acquired,   ///< held() is true
    timed_out,  ///< another holder kept it past the timeout
    failed,     ///< the lock file could not be opened or locked; `error` says why
  };

  /// Opens (creating, mode 0600, never through a symlink) the lock file at `path` and takes an
  /// exclusive flock, polling until `timeout` (0: one try). NOTE: never blocks in the kernel,
  /// so a stuck holder costs a waiter at most `timeout`; a holder that dies releases at once.
  static FileLock acquire(const std::filesystem::path& path, std::chrono::milliseconds timeout,
                          Outcome& outcome, std::string& error);

 private:
  FileLock(int fd, std::filesystem::path path) noexcept : fd_(fd), path_(std::move(path)) {}
  void release() noexcept;

  int fd_ = -1;
  std::filesystem::path path_;
};

/// Where lock files go when JitOptions::lock_dir is empty: $XDG_RUNTIME_DIR/wyjit-locks, else
/// <temp dir>/wyjit-locks-<uid>. Both are node-local: flock on a network file system can leave
/// stale locks behind a crashed client, which is why locks never live beside a shared cache.
std::filesystem::path default_lock_base();

/// Creates (mode 0700) and returns `base/<16 hex digits of SHA-256 of root's absolute path>`,
/// the lock directory of one cache root. Throws Error(cache_io) naming the path when it cannot
/// be created, or when it is a symlink or owned by another user (a planted directory).
std::filesystem::path prepare_lock_dir(const std::filesystem::path& base,
                                       const std::filesystem::path& root);

}  // namespace wyjit::detail
