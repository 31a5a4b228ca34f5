// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <thread>

#include "cache/cache_env.hpp"
#include "cache/sha256.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace fs = std::filesystem;

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

void FileLock::release() noexcept {
  if (fd_ < 0) return;
  // NOTE: unlink while still holding the lock, then close (which releases it). A waiter that
  // opened this file before the unlink gets the lock on a file that no longer has a name; it
  // notices (the inode check in acquire) and starts over on a fresh file.
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

FileLock FileLock::acquire(const fs::path& path, std::chrono::milliseconds timeout,
                           Outcome& outcome, std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  const auto fail = [&](std::string_view step, int err) {
    outcome = Outcome::failed;
    error = fmt::format("cannot {} lock file '{}': {}", step, path.string(),
                        std::system_category().message(err));
    return FileLock();
  };
  int fd = -1;
  for (;;) {
    if (fd < 0) {
      fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) return fail("open", errno);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // The lock counts only if the file still has this name (see release()).
      struct stat held {};
      struct stat named {};
      if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
          held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
        outcome = Outcome::acquired;
        return FileLock(fd, path);
      }
      ::close(fd);
      fd = -1;
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return fail("lock", err);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      ::close(fd);
      outcome = Outcome::timed_out;
      return FileLock();
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

fs::path default_lock_base() {
  if (auto runtime = env_value("XDG_RUNTIME_DIR")) return fs::path(*runtime) / "wyjit-locks";
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return tmp / fmt::format("wyjit-locks-{}", ::getuid());
}

namespace {

/// mkdir -m 0700 `dir` unless it exists; then it must be a real directory we own.
void make_private_dir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    const int err = errno;
    throw Error(ErrorCode::cache_io,
                fmt::format("cannot create lock directory '{}': {}", dir.string(),
                            std::system_category().message(err)));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(ErrorCode::cache_io,
                fmt::format("cannot stat lock directory '{}': {}", dir.string(),
                            std::system_category().message(err)));
  }
  if (!S_ISDIR(st.st_mode)) {
    throw Error(
        ErrorCode::cache_io,
        fmt::format("lock directory '{}' is not a directory (a symlink or a file)", dir.string()));
  }
  if (st.st_uid != ::geteuid()) {
    throw Error(ErrorCode::cache_io,
                fmt::format("lock directory '{}' belongs to uid {}, not to us (uid {})",
                            dir.string(), st.st_uid, ::geteuid()));
  }
}

}  // namespace

fs::path prepare_lock_dir(const fs::path& base, const fs::path& root) {
  std::error_code ec;
  fs::path absolute = fs::absolute(root, ec);
  if (ec) absolute = root;
  absolute = absolute.lexically_normal();
  if (!absolute.has_filename() && absolute.has_parent_path()) absolute = absolute.parent_path();
  // NOTE: only the last two levels are made private; `base`'s parents (e.g. /tmp or
  // $XDG_RUNTIME_DIR) are created if missing, with the usual permissions.
  if (base.has_parent_path()) fs::create_directories(base.parent_path(), ec);
  make_private_dir(base);
  const fs::path dir = base / sha256_hex(absolute.string()).substr(0, 16);
  make_private_dir(dir);
  return dir;
}

}  // namespace wyjit::detail
