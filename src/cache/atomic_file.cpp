// SPDX-License-Identifier: Apache-2.0
#include "cache/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <system_error>

#include "common/log.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kTempRandomDigits = 16;

std::atomic<std::uint64_t> g_temp_counter{0};

std::string errno_text(int err) { return std::system_category().message(err); }

/// Throws the cache_io error for a failed write; `err` must be captured before any call
/// that may clobber errno (formatting the step allocates).
[[noreturn]] void throw_io(const fs::path& path, std::string_view step, int err) {
  throw Error(ErrorCode::cache_io, fmt::format("wyjit cache: cannot write '{}': {}: {}",
                                               path.string(), step, errno_text(err)));
}

std::uint64_t random_u64() {
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof value))
    return value;
  // NOTE: fallback when the entropy pool is unavailable; uniqueness (not secrecy) is all we
  // need, and O_EXCL catches the rare collision.
  const auto ticks =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (ticks * 0x9e3779b97f4a7c15ull) ^ (g_temp_counter.fetch_add(1) << 32) ^
         static_cast<std::uint64_t>(::getpid());
}

/// The temp file being written; unless committed, it is closed and unlinked on scope exit.
struct TempFile {
  fs::path path;
  int fd = -1;
  bool committed = false;

  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!committed && !path.empty()) ::unlink(path.c_str());
  }
};

void fsync_directory_best_effort(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_file_atomic(const fs::path& path, std::span<const std::uint8_t> bytes) {
  const fs::path file_name = path.filename();
  if (file_name.empty() || file_name == "." || file_name == "..") {
    throw Error(ErrorCode::cache_io,
                fmt::format("wyjit cache: cannot write '{}': not a file path", path.string()));
  }
  const fs::path dir = path.parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw_io(path, fmt::format("creating directory '{}'", dir.string()), ec.value());
  }

  // Step 1: a unique temp file beside the final path.
  // NOTE: same directory, so rename() is an atomic replace on one file system. O_EXCL and
  // O_NOFOLLOW: never open something another process (or an attacker) put at that name.
  TempFile temp;
  int open_errno = EEXIST;
  for (int attempt = 0; attempt < 8 && temp.fd < 0 && open_errno == EEXIST; ++attempt) {
    temp.path =
        dir / fmt::format(".{}.tmp.{}.{:016x}", file_name.string(), ::getpid(), random_u64());
    temp.fd = ::open(temp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    open_errno = temp.fd < 0 ? errno : 0;
  }
  if (temp.fd < 0) {
    const fs::path failed = std::exchange(temp.path, fs::path{});  // not ours: do not unlink
    throw_io(path, fmt::format("creating temp file '{}'", failed.string()), open_errno);
  }

  // Step 2: write everything, then make it durable.
  const std::uint8_t* cursor = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(temp.fd, cursor, left);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      throw_io(path, fmt::format("writing temp file '{}'", temp.path.string()), err);
    }
    if (n == 0) throw_io(path, fmt::format("writing temp file '{}'", temp.path.string()), EIO);
    cursor += n;
    left -= static_cast<std::size_t>(n);
  }
  // NOTE: fsync before rename. Without it a crash soon after the rename can leave the final
  // name pointing at a zero-length or partly written file (delayed allocation on ext4/xfs):
  // readers would see a corrupt entry where a good one was promised.
  while (::fsync(temp.fd) != 0) {
    const int err = errno;
    if (err != EINTR)
      throw_io(path, fmt::format("syncing temp file '{}'", temp.path.string()), err);
  }
  const int fd = std::exchange(temp.fd, -1);
  // NOTE: on Linux the descriptor is released even when close() reports EINTR; never retry.
  if (::close(fd) != 0) {
    const int err = errno;
    if (err != EINTR)
      throw_io(path, fmt::format("closing temp file '{}'", temp.path.string()), err);
  }

  // Step 3: publish. rename() replaces whatever is at `path` (a symlink included, which it
  // does not follow); a concurrent writer of the same key may win instead, which is fine.
  if (::rename(temp.path.c_str(), path.c_str()) != 0) {
    const int err = errno;
    throw_io(path, fmt::format("renaming temp file '{}'", temp.path.string()), err);
  }
  temp.committed = true;
  // NOTE: the rename is durable only once the directory is synced; failure here loses at
  // most this entry after a crash (a recompile), so it is not an error.
  fsync_directory_best_effort(dir);
}

std::size_t sweep_temp_files(const fs::path& dir, std::chrono::seconds older_than) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec != std::errc::no_such_file_or_directory) {
      logger().debug("cache: cannot sweep '{}': {}", dir.string(), ec.message());
    }
    return 0;
  }
  const std::time_t now = std::time(nullptr);
  std::size_t removed = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      logger().debug("cache: sweep of '{}' stopped: {}", dir.string(), ec.message());
      break;
    }
    const fs::path& candidate = it->path();
    if (!is_temp_file_name(candidate.filename().string())) continue;
    struct stat st {};
    if (::lstat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    // NOTE: age, not owner pid: the writer may be on another host sharing the directory.
    if (now - st.st_mtime <= older_than.count()) continue;
    if (::unlink(candidate.c_str()) == 0) {
      ++removed;
      logger().debug("cache: removed stale temp file '{}'", candidate.string());
    } else if (const int err = errno; err != ENOENT) {
      logger().debug("cache: cannot remove stale temp file '{}': {}", candidate.string(),
                     errno_text(err));
    }
  }
  return removed;
}

bool is_temp_file_name(std::string_view name) {
  // ".<final-name>.tmp.<pid>.<16 hex>"
  constexpr std::string_view kTmp = ".tmp.";
  if (name.size() < 1 + 1 + kTmp.size() + 1 + 1 + kTempRandomDigits || name.front() != '.')
    return false;
  const std::string_view random = name.substr(name.size() - kTempRandomDigits);
  if (!std::all_of(random.begin(), random.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
    return false;
  }
  std::string_view rest = name.substr(0, name.size() - kTempRandomDigits);
  if (rest.back() != '.') return false;
  rest.remove_suffix(1);
  std::size_t pid_digits = 0;
  while (pid_digits < rest.size() && rest[rest.size() - 1 - pid_digits] >= '0' &&
         rest[rest.size() - 1 - pid_digits] <= '9') {
    ++pid_digits;
  }
  if (pid_digits == 0) return false;
  rest.remove_suffix(pid_digits);
  return rest.size() > 1 + kTmp.size() && rest.ends_with(kTmp);
}

}  // namespace wyjit::detail
