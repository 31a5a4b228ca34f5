// SPDX-License-Identifier: Apache-2.0
// `wyjit verify [--repair]`: read and check every cache entry; rebuild the bad ones.
#include <fmt/format.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/cache_prune.hpp"
#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "cli/cli.hpp"
#include "stamp/stamp.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kVerifyHelp = R"(Usage: wyjit verify [--cache-dir DIR] [--repair]

Reads every entry of every cache root (the read-only roots of WYJIT_CACHE_RO_DIRS,
then the writable root) and checks its structure and checksum, that its file
name and directory match the key inside it, and whether this build of wyjit
(its kernel sources and NVRTC) looks it up:

  ok      valid, and used by this build
  stale   valid, but built by another wyjit or NVRTC: this build never reads it
          (the size bound evicts it once it is the least recently used)
  bad     unreadable, truncated, corrupt or misnamed

Options:
  --cache-dir DIR   check DIR only
  --repair          remove each bad entry of a writable root and compile its
                    variant again (bad entries of read-only roots are reported only)
  -h, --help        this text

Exit status: 0 no bad entries, 3 bad entries were found (and, with --repair, all
of them repaired), 1 a repair failed, 2 usage error.
)";

struct Check {
  enum class Kind { ok, stale, bad, gone } kind = Kind::ok;
  std::string reason;
  std::optional<KernelSpec> spec;  // what the file name says, when this build knows it
  std::optional<Target> target;
};

Check check_entry(const detail::EntryFileInfo& info) {
  Check check;
  try {
    KernelSpec spec = parse_spec(info.variant);
    validate_spec(spec);
    check.spec = spec;
  } catch (const std::exception&) {
  }
  try {
    check.target = Target::parse(info.target);
  } catch (const std::exception&) {
  }
  const auto bad = [&](std::string reason) {
    check.kind = Check::Kind::bad;
    check.reason = std::move(reason);
    return check;
  };
  detail::EntryRead read = detail::read_entry_file(info.path, std::nullopt);
  switch (read.status) {
    case detail::EntryRead::Status::missing:
      check.kind = Check::Kind::gone;  // removed while we looked (a concurrent prune)
      return check;
    case detail::EntryRead::Status::corrupt:
      return bad(read.reason);
    case detail::EntryRead::Status::ok:
      break;
  }
  const detail::CacheEntry& entry = read.entry;
  if (entry.target != info.target) {
    return bad(fmt::format("header target '{}' in directory '{}'", entry.target, info.target));
  }
  if (entry.variant != info.variant) {
    return bad(fmt::format("header variant '{}' under file name variant '{}'", entry.variant,
                           info.variant));
  }
  if (detail::sha256_hex(entry.key_text).substr(0, 16) != info.hash16) {
    return bad("the file name's hash is not the hash of the key inside");
  }
  const bool ptx_name = info.path.extension() == ".ptx";
  if (check.target && check.target->ptx != ptx_name) {
    return bad(fmt::format("a {} file for target {}", ptx_name ? ".ptx" : ".cubin", info.target));
  }
  if (entry.roles.empty()) return bad("no kernels in the entry");
  if (!check.spec || !check.target) {
    check.kind = Check::Kind::stale;
    check.reason = "variant or target unknown to this build";
    return check;
  }
  const KernelSpec& spec = *check.spec;
  if (detail::make_cache_key(spec, detail::stamp(spec), *check.target).text != entry.key_text) {
    check.kind = Check::Kind::stale;
    check.reason = "built by another wyjit or NVRTC";
  }
  return check;
}

/// Removes the bad entry at `path` and compiles its variant into `root`; "" or the error.
std::string repair(const std::string& root, const std::filesystem::path& path, const Check& check,
                   std::string& new_path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return fmt::format("cannot remove it: {}", std::system_category().message(errno));
  }
  std::filesystem::path source = path;
  source += ".cu";
  ::unlink(source.c_str());
  if (!check.spec || !check.target)
    return "removed; its variant or target is unknown to this build";
  try {
    JitOptions options = writer_options(root);
    options.max_bytes = 0;
    Jit jit(options);
    const auto compiled = jit.compile(*check.spec, *check.target);
    if (compiled->path.empty()) return "removed; compiled, but the new entry could not be written";
    new_path = compiled->path;
  } catch (const std::exception& e) {
    return fmt::format("removed; compiling it failed: {}", e.what());
  }
  return {};
}

}  // namespace

int run_verify(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kVerifyHelp);
    return kExitOk;
  }
  ArgReader reader("verify", args);
  std::string cache_dir;
  bool repair_bad = false;
  while (!reader.done()) {
    if (reader.option("--cache-dir", cache_dir)) continue;
    if (reader.flag("--repair")) {
      repair_bad = true;
      continue;
    }
    reader.reject();
  }

  std::size_t total_bad = 0;
  std::size_t repair_failures = 0;
  for (const CacheRootInfo& root : roots_of(reader_options(cache_dir))) {
    const detail::RootScan scan = detail::scan_root(root.path);
    fmt::print("{:<9}  {}\n", root.read_only ? "read-only" : "writable", root.path);
    if (!scan.exists) {
      fmt::print("  (does not exist)\n");
      continue;
    }
    std::size_t ok = 0;
    std::size_t stale = 0;
    std::size_t bad = 0;
    for (const detail::EntryFileInfo& info : scan.entries) {
      const Check check = check_entry(info);
      switch (check.kind) {
        case Check::Kind::ok:
          ++ok;
          continue;
        case Check::Kind::gone:
          continue;
        case Check::Kind::stale:
          ++stale;
          fmt::print("  stale  {}: {}\n", info.path.filename().string(), check.reason);
          continue;
        case Check::Kind::bad:
          ++bad;
          break;
      }
      fmt::print("  bad    {}: {}\n", info.path.string(), check.reason);
      if (!repair_bad) continue;
      if (root.read_only) {
        fmt::print("         not repaired: the root is read-only\n");
        continue;
      }
      std::string new_path;
      if (const std::string error = repair(root.path, info.path, check, new_path); !error.empty()) {
        fmt::print("         not repaired: {}\n", error);
        ++repair_failures;
      } else {
        fmt::print("         repaired: {}\n", new_path);
      }
    }
    total_bad += bad;
    fmt::print("  {} entries: {} ok, {} stale, {} bad", scan.entries.size(), ok, stale, bad);
    if (!scan.temps.empty()) fmt::print("; {} temp file(s)", scan.temps.size());
    fmt::print("\n");
  }
  if (repair_failures > 0) return kExitFailure;
  return total_bad > 0 ? kExitBadEntry : kExitOk;
}

}  // namespace wyjit::cli
