// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_prune.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <system_error>
#include <unordered_map>

#include "cache/entry_file.hpp"
#include "common/log.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSourceSuffix = ".cu";

bool is_target_name(const std::string& name) {
  try {
    return Target::parse(name).name() == name;
  } catch (const std::exception&) {
    return false;
  }
}

bool lstat_regular(const fs::path& path, struct stat& st) {
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// unlink(path); true when it is gone. An error other than "already gone" goes to `errors`.
bool remove_file(const fs::path& path, std::vector<std::string>& errors) {
  if (::unlink(path.c_str()) == 0) return true;
  const int err = errno;
  if (err == ENOENT) return true;
  errors.push_back(
      fmt::format("cannot remove '{}': {}", path.string(), std::system_category().message(err)));
  return false;
}

void scan_target_dir(const fs::path& dir, const std::string& target, RootScan& scan) {
  std::error_code ec;
  std::vector<fs::path> sources;
  const std::size_t first_entry = scan.entries.size();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    const std::string name = path.filename().string();
    if (is_temp_file_name(name)) {
      scan.temps.push_back(path);
      continue;
    }
    if (name.size() > kSourceSuffix.size() && name.ends_with(kSourceSuffix)) {
      sources.push_back(path);
      continue;
    }
    EntryFileInfo info;
    struct stat st {};
    if (!parse_entry_file_name(name, info.variant, info.hash16) || !lstat_regular(path, st)) {
      scan.others.push_back(path);
      continue;
    }
    info.path = path;
    info.target = target;
    info.bytes = static_cast<std::uint64_t>(st.st_size);
    info.last_used = static_cast<std::int64_t>(st.st_mtime);
    scan.entries.push_back(std::move(info));
  }
  if (ec) logger().debug("cache: cannot list '{}': {}", dir.string(), ec.message());
  // Saved sources count with their entry; the others are orphans.
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = first_entry; i < scan.entries.size(); ++i) {
    by_name.emplace(scan.entries[i].path.filename().string(), i);
  }
  for (const fs::path& source : sources) {
    const std::string name = source.filename().string();
    const auto owner = by_name.find(name.substr(0, name.size() - kSourceSuffix.size()));
    struct stat st {};
    if (owner == by_name.end() || !lstat_regular(source, st)) {
      scan.orphan_sources.push_back(source);
      continue;
    }
    EntryFileInfo& entry = scan.entries[owner->second];
    entry.bytes += static_cast<std::uint64_t>(st.st_size);
    entry.has_saved_source = true;
  }
}

}  // namespace

bool parse_entry_file_name(std::string_view name, std::string& variant, std::string& hash16) {
  std::string_view rest = name;
  if (rest.ends_with(".cubin")) {
    rest.remove_suffix(6);
  } else if (rest.ends_with(".ptx")) {
    rest.remove_suffix(4);
  } else {
    return false;
  }
  constexpr std::size_t kHashDigits = 16;
  if (rest.size() < kHashDigits + 2 || rest[rest.size() - kHashDigits - 1] != '.') return false;
  const std::string_view hash = rest.substr(rest.size() - kHashDigits);
  if (!std::all_of(hash.begin(), hash.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
    return false;
  }
  variant = std::string(rest.substr(0, rest.size() - kHashDigits - 1));
  hash16 = std::string(hash);
  return true;
}

RootScan scan_root(const fs::path& root) {
  RootScan scan;
  std::error_code ec;
  scan.exists = fs::is_directory(root, ec);
  if (!scan.exists) return scan;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    // NOTE: symlink_status: a symlinked target directory is not followed, so a prune never
    // deletes files outside the root.
    if (!fs::is_directory(it->symlink_status(type_ec)) || !is_target_name(name)) continue;
    scan_target_dir(it->path(), name, scan);
  }
  if (ec) logger().debug("cache: cannot list '{}': {}", root.string(), ec.message());
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const EntryFileInfo& a, const EntryFileInfo& b) { return a.path < b.path; });
  for (const EntryFileInfo& e : scan.entries) scan.bytes += e.bytes;
  return scan;
}

void touch_entry(const fs::path& path) noexcept {
  if (::utimensat(AT_FDCWD, path.c_str(), nullptr, 0) != 0) {
    const int err = errno;
    logger().debug("cache: cannot record the use of '{}': {}", path.string(),
                   std::system_category().message(err));
  }
}

PruneResult prune_root(const fs::path& root, std::uint64_t max_bytes, const fs::path& keep) {
  PruneResult result;
  RootScan scan = scan_root(root);
  if (!scan.exists) return result;

  // Step 1: leftovers of interrupted writes.
  result.swept += sweep_temp_files(root, kStaleAfter);
  std::vector<std::string> target_dirs;
  for (const EntryFileInfo& e : scan.entries) target_dirs.push_back(e.target);
  for (const fs::path& t : scan.temps) target_dirs.push_back(t.parent_path().filename().string());
  std::sort(target_dirs.begin(), target_dirs.end());
  target_dirs.erase(std::unique(target_dirs.begin(), target_dirs.end()), target_dirs.end());
  for (const std::string& target : target_dirs) {
    result.swept += sweep_temp_files(root / target, kStaleAfter);
  }
  const std::time_t now = std::time(nullptr);
  for (const fs::path& source : scan.orphan_sources) {
    struct stat st {};
    if (::lstat(source.c_str(), &st) != 0 || now - st.st_mtime <= kStaleAfter.count()) continue;
    if (remove_file(source, result.errors)) ++result.swept;
  }

  // Step 2: least recently used first, until the bound holds.
  result.bytes_before = scan.bytes;
  result.bytes_after = scan.bytes;
  std::sort(scan.entries.begin(), scan.entries.end(),
            [](const EntryFileInfo& a, const EntryFileInfo& b) {
              return a.last_used != b.last_used ? a.last_used < b.last_used : a.path < b.path;
            });
  for (const EntryFileInfo& e : scan.entries) {
    if (result.bytes_after <= max_bytes) break;
    if (!keep.empty() && e.path == keep) continue;
    if (!remove_file(e.path, result.errors)) continue;
    fs::path source = e.path;
    source += kSourceSuffix;
    if (e.has_saved_source) remove_file(source, result.errors);
    result.bytes_after -= e.bytes;
    ++result.evicted;
    logger().info("cache: evicted {} ({} bytes, last used {} s ago) to stay under {} bytes",
                  e.path.string(), e.bytes, now - e.last_used, max_bytes);
  }
  return result;
}

}  // namespace wyjit::detail
