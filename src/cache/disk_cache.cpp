// SPDX-License-Identifier: Apache-2.0
#include "cache/disk_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace fs = std::filesystem;

fs::path DiskCache::entry_path(const Target& target, const CacheKey& key) const {
  return root_ / target.name() / key.file_name;
}

EntryRead DiskCache::load(const Target& target, const CacheKey& key) const {
  return read_entry_file(entry_path(target, key), key.text);
}

fs::path DiskCache::store(const Target& target, const CacheKey& key,
                          const CacheEntry& entry) const {
  const fs::path path = entry_path(target, key);
  if (read_only_) {
    throw Error(ErrorCode::internal,
                fmt::format("wyjit cache: refusing to write '{}' into the read-only root '{}'",
                            path.string(), root_.string()));
  }
  write_entry_file_atomic(path, entry);
  return path;
}

std::string probe_writable(const fs::path& root) {
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return fmt::format("cannot create '{}': {}", root.string(), ec.message());
  if (!fs::is_directory(root, ec)) return fmt::format("'{}' is not a directory", root.string());
  std::uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
    nonce = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull;
  }
  // NOTE: named like a temp file, so that a process killed between the two calls below leaves
  // something a prune sweeps.
  const fs::path probe = root / fmt::format(".write-probe.tmp.{}.{:016x}", ::getpid(), nonce);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    return fmt::format("cannot create a file in '{}': {}", root.string(),
                       std::system_category().message(err));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

}  // namespace wyjit::detail
