// SPDX-License-Identifier: Apache-2.0
#include "cache/entry_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
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
  const auto roles = header.find("roles");
  if (roles == header.end() || !roles->is_array())
    return corrupt("header field 'roles' missing or not an array");
  for (const Json& role : *roles) {
    if (!role.is_array() || role.size() != 2 || !role[0].is_string() || !role[1].is_string()) {
      return corrupt("header field 'roles' holds something other than [role, lowered name]");
    }
    entry.roles.push_back(
        {role[0].get_ref<const std::string&>(), role[1].get_ref<const std::string&>()});
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

/// Closes a read-only descriptor on scope exit.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

std::vector<std::uint8_t> encode_entry(const CacheEntry& entry) {
  Json roles = Json::array();
  for (const CompiledRole& r : entry.roles) roles.push_back({r.role, r.lowered_name});
  const Json header = {
      {"key_text", entry.key_text},
      {"key_sha256", sha256_hex(entry.key_text)},
      {"variant", entry.variant},
      {"target", entry.target},
      {"roles", roles},
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

}  // namespace wyjit::detail
