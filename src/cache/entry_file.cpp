// SPDX-License-Identifier: Apache-2.0
#include "cache/entry_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "cache/sha256.hpp"
#include "common/log.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::array<std::uint8_t, 8> kMagic = {'W', 'Y', 'J', 'I', 'T', 'C', 'E', '\0'};
constexpr std::size_t kPreambleSize = 16;  // magic + version + header length
constexpr std::size_t kChecksumSize = 32;
// NOTE: the header holds the full key text, which embeds the stamped source, so it may be
// large; anything past this limit is a corrupted length field, not a real header.
constexpr std::uint32_t kMaxHeaderBytes = 64u << 20;
// NOTE: a cubin is tens of MB at most; refusing larger files keeps a stray huge file
// planted in the cache from exhausting memory.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 30;
constexpr std::size_t kTempRandomDigits = 16;

std::atomic<std::uint64_t> g_temp_counter{0};

std::string errno_text(int err) { return std::system_category().message(err); }

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<std::uint8_t>(value >> shift));
}

std::uint32_t get_u32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

EntryRead corrupt(std::string reason) {
  EntryRead read;
  read.status = EntryRead::Status::corrupt;
  read.reason = std::move(reason);
  return read;
}

/// Copies header field `name` into `out`; returns an error reason, empty on success.
std::string take_string(const Json& header, const char* name, std::string& out) {
  const auto it = header.find(name);
  if (it == header.end() || !it->is_string())
    return fmt::format("header field '{}' missing or not a string", name);
  out = it->get_ref<const std::string&>();
  return {};
}

EntryRead decode_unchecked(std::span<const std::uint8_t> bytes,
                           std::optional<std::string_view> expected_key_text) {
  const std::size_t size = bytes.size();
  if (size == 0) return corrupt("empty file");
  if (size < kPreambleSize) {
    return corrupt(
        fmt::format("truncated: {} bytes, shorter than the {}-byte preamble", size, kPreambleSize));
  }
  if (!std::equal(kMagic.begin(), kMagic.end(), bytes.begin())) return corrupt("bad magic");
  const std::uint32_t version = get_u32(bytes.data() + 8);
  if (version != kEntryFormatVersion) {
    return corrupt(fmt::format("format version {}, expected {}", version, kEntryFormatVersion));
  }
  const std::uint32_t header_size = get_u32(bytes.data() + 12);
  if (header_size > kMaxHeaderBytes) {
    return corrupt(fmt::format("absurd header length {} (limit {})", header_size, kMaxHeaderBytes));
  }
  if (size - kPreambleSize < std::size_t{header_size} + kChecksumSize) {
    return corrupt(fmt::format(
        "truncated: header length {} plus a {}-byte checksum, file has {} bytes after the preamble",
        header_size, kChecksumSize, size - kPreambleSize));
  }

  // Header: compact JSON, parsed without exceptions.
  const auto header_bytes = bytes.subspan(kPreambleSize, header_size);
  const Json header =
      Json::parse(header_bytes.begin(), header_bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return corrupt("header is not valid JSON");
  if (!header.is_object()) return corrupt("header is not a JSON object");

  CacheEntry entry;
  std::string key_sha256;
  for (const auto& [name, field] :
       {std::pair<const char*, std::string*>{"key_text", &entry.key_text},
        {"key_sha256", &key_sha256},
        {"variant", &entry.variant},
        {"target", &entry.target}}) {
    if (std::string reason = take_string(header, name, *field); !reason.empty())
      return corrupt(std::move(reason));
  }
  const auto names = header.find("lowered_names");
  if (names == header.end() || !names->is_array())
    return corrupt("header field 'lowered_names' missing or not an array");
  for (const Json& name : *names) {
    if (!name.is_string()) return corrupt("header field 'lowered_names' holds a non-string");
    entry.lowered_names.push_back(name.get_ref<const std::string&>());
  }
  const auto payload_field = header.find("payload_size");
  if (payload_field == header.end() || !payload_field->is_number_unsigned()) {
    return corrupt("header field 'payload_size' missing or not an unsigned integer");
  }
  const std::uint64_t payload_size = payload_field->get<std::uint64_t>();
  const std::size_t after_header = size - kPreambleSize - header_size;
  const std::size_t available = after_header - kChecksumSize;
  if (payload_size > available) {
    return corrupt(
        fmt::format("truncated: header says {} payload bytes plus a {}-byte checksum, file has {} "
                    "bytes after the header",
                    payload_size, kChecksumSize, after_header));
  }
  if (payload_size < available) {
    return corrupt(fmt::format("trailing bytes: header says {} payload bytes, file has {}",
                               payload_size, available));
  }

  // NOTE: the checksum covers magic through payload, so any flipped bit anywhere that the
  // structural checks above let through is caught here.
  const Digest checksum = sha256(bytes.data(), size - kChecksumSize);
  if (!std::equal(checksum.begin(), checksum.end(), bytes.end() - kChecksumSize))
    return corrupt("checksum mismatch");
  if (key_sha256 != sha256_hex(entry.key_text))
    return corrupt("key_sha256 does not match key_text");
  if (expected_key_text && entry.key_text != *expected_key_text) return corrupt("key mismatch");

  const auto payload = bytes.subspan(kPreambleSize + header_size, available);
  entry.payload.assign(payload.begin(), payload.end());
  EntryRead read;
  read.status = EntryRead::Status::ok;
  read.entry = std::move(entry);
  return read;
}

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

/// Closes a read-only descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

void fsync_directory_best_effort(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::vector<std::uint8_t> encode_entry(const CacheEntry& entry) {
  const Json header = {
      {"key_text", entry.key_text},
      {"key_sha256", sha256_hex(entry.key_text)},
      {"variant", entry.variant},
      {"target", entry.target},
      {"lowered_names", entry.lowered_names},
      {"payload_size", static_cast<std::uint64_t>(entry.payload.size())},
  };
  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const Json::exception& e) {
    throw Error(
        ErrorCode::cache_io,
        fmt::format("wyjit cache: cannot encode the entry for '{}': {}", entry.variant, e.what()));
  }
  if (header_text.size() > kMaxHeaderBytes) {
    throw Error(ErrorCode::cache_io,
                fmt::format("wyjit cache: the header for '{}' is {} bytes, over the {}-byte limit",
                            entry.variant, header_text.size(), kMaxHeaderBytes));
  }

  std::vector<std::uint8_t> out;
  out.reserve(kPreambleSize + header_text.size() + entry.payload.size() + kChecksumSize);
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  put_u32(out, kEntryFormatVersion);
  put_u32(out, static_cast<std::uint32_t>(header_text.size()));
  out.insert(out.end(), header_text.begin(), header_text.end());
  out.insert(out.end(), entry.payload.begin(), entry.payload.end());
  const Digest checksum = sha256(out.data(), out.size());
  out.insert(out.end(), checksum.begin(), checksum.end());
  return out;
}

EntryRead decode_entry(std::span<const std::uint8_t> bytes,
                       std::optional<std::string_view> expected_key_text) {
  try {
    return decode_unchecked(bytes, expected_key_text);
  } catch (const std::exception& e) {
    // NOTE: decode_unchecked validates before every access; this is a backstop so a bad
    // entry is always a miss (e.g. out of memory copying a payload), never a crash.
    return corrupt(fmt::format("undecodable: {}", e.what()));
  }
}

EntryRead read_entry_file(const fs::path& path, std::optional<std::string_view> expected_key_text) {
  // NOTE: O_NONBLOCK so a FIFO planted at the path cannot hang us; it is rejected below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      EntryRead read;
      read.reason = "no such file";
      return read;
    }
    return corrupt(fmt::format("cannot open: {}", errno_text(err)));
  }
  const FdCloser closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    return corrupt(fmt::format("cannot stat: {}", errno_text(err)));
  }
  if (!S_ISREG(st.st_mode)) return corrupt("not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
    return corrupt(
        fmt::format("file is {} bytes, over the {}-byte limit", st.st_size, kMaxFileBytes));
  }

  // +1 so that a file read to its stat size sees EOF without growing the buffer.
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t used = 0;
  for (;;) {
    if (used == bytes.size()) {
      if (used > kMaxFileBytes) return corrupt("file grew past the size limit while being read");
      bytes.resize(bytes.size() * 2);
    }
    const ssize_t n = ::read(fd, bytes.data() + used, bytes.size() - used);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return corrupt(fmt::format("cannot read: {}", errno_text(err)));
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  bytes.resize(used);
  return decode_entry(bytes, expected_key_text);
}

void write_entry_file_atomic(const fs::path& path, const CacheEntry& entry) {
  write_file_atomic(path, encode_entry(entry));
}

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
