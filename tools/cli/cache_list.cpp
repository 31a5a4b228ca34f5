// SPDX-License-Identifier: Apache-2.0
// `wyjit list` (what each cache root holds) and `wyjit prune` (sweep and size bound).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/cache_env.hpp"
#include "cache/cache_lock.hpp"
#include "cache/cache_prune.hpp"
#include "cli/cli.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kListHelp = R"(Usage: wyjit list [--cache-dir DIR] [--json]

Lists the entries of every cache root, in search order: the read-only roots of
WYJIT_CACHE_RO_DIRS, then the writable root. One line per entry: target,
variant, size (with the saved source, if any) and when it was last used (UTC).
Reads the file names and sizes only; `wyjit verify` checks the contents.

Options:
  --cache-dir DIR   list DIR only
  --json            one JSON document: {"roots": [{"path", "read_only", "exists",
                    "bytes", "entries": [{"target", "variant", "hash16", "path",
                    "bytes", "last_used", "saved_source"}], "temp_files",
                    "orphan_sources", "other_files"}]}
  -h, --help        this text

Exit status: 0 ok, 2 usage error.
)";

constexpr const char* kPruneHelp = R"(Usage: wyjit prune [--max-bytes N] [--cache-dir DIR]

Keeps the writable cache root small: removes temp files and saved sources left
behind for more than an hour, then removes entries, least recently used first,
until the entries take at most N bytes. Read-only roots are never touched.

Options:
  --max-bytes N     the bound: a byte count such as 1073741824, 512M or 1G
                    (default: $WYJIT_CACHE_MAX_BYTES, else 1G); 0 removes every entry
  --cache-dir DIR   the root to prune (default: $WYJIT_CACHE_DIR, else
                    $XDG_CACHE_HOME/wyjit, else ~/.cache/wyjit)
  -h, --help        this text

Exit status: 0 ok, 1 a file could not be removed, 2 usage error.
)";

std::string utc_time(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return "?";
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

int run_list(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kListHelp);
    return kExitOk;
  }
  ArgReader reader("list", args);
  std::string cache_dir;
  bool json = false;
  while (!reader.done()) {
    if (reader.option("--cache-dir", cache_dir)) continue;
    if (reader.flag("--json")) {
      json = true;
      continue;
    }
    reader.reject();
  }

  nlohmann::ordered_json doc;
  doc["roots"] = nlohmann::ordered_json::array();
  for (const CacheRootInfo& root : roots_of(reader_options(cache_dir))) {
    const detail::RootScan scan = detail::scan_root(root.path);
    if (json) {
      nlohmann::ordered_json r;
      r["path"] = root.path;
      r["read_only"] = root.read_only;
      r["exists"] = scan.exists;
      r["bytes"] = scan.bytes;
      r["entries"] = nlohmann::ordered_json::array();
      for (const detail::EntryFileInfo& e : scan.entries) {
        r["entries"].push_back({{"target", e.target},
                                {"variant", e.variant},
                                {"hash16", e.hash16},
                                {"path", e.path.string()},
                                {"bytes", e.bytes},
                                {"last_used", utc_time(e.last_used)},
                                {"saved_source", e.has_saved_source}});
      }
      r["temp_files"] = scan.temps.size();
      r["orphan_sources"] = scan.orphan_sources.size();
      r["other_files"] = scan.others.size();
      doc["roots"].push_back(std::move(r));
      continue;
    }
    fmt::print("{:<9}  {}  ", root.read_only ? "read-only" : "writable", root.path);
    if (!scan.exists) {
      fmt::print("(does not exist)\n");
      continue;
    }
    fmt::print("({} entries, {})\n", scan.entries.size(), detail::format_bytes(scan.bytes));
    std::size_t target_width = 0;
    std::size_t variant_width = 0;
    for (const detail::EntryFileInfo& e : scan.entries) {
      target_width = std::max(target_width, e.target.size());
      variant_width = std::max(variant_width, e.variant.size());
    }
    for (const detail::EntryFileInfo& e : scan.entries) {
      fmt::print("  {:<{}}  {:<{}}  {:>10}  {}{}\n", e.target, target_width, e.variant,
                 variant_width, detail::format_bytes(e.bytes), utc_time(e.last_used),
                 e.has_saved_source ? "  +source" : "");
    }
    if (!scan.temps.empty()) fmt::print("  ({} temp file(s))\n", scan.temps.size());
  }
  if (json) fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  return kExitOk;
}

int run_prune(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kPruneHelp);
    return kExitOk;
  }
  ArgReader reader("prune", args);
  std::string cache_dir;
  std::optional<std::uint64_t> max_bytes;
  std::string value;
  while (!reader.done()) {
    if (reader.option("--cache-dir", cache_dir)) {
      if (cache_dir.empty()) throw UsageError("prune", "bad value '' for --cache-dir: empty path");
      continue;
    }
    if (reader.option("--max-bytes", value)) {
      max_bytes = parse_bytes("prune", "--max-bytes", value);
      continue;
    }
    reader.reject();
  }
  const JitOptions options = writer_options(cache_dir);
  const std::string root = roots_of(options).back().path;
  const std::uint64_t bound = max_bytes.value_or(options.max_bytes);
  if (!detail::scan_root(root).exists) {
    fmt::print("nothing to prune: '{}' does not exist\n", root);
    return kExitOk;
  }

  // NOTE: the same lock a Jit takes before evicting, so two pruners never race.
  detail::FileLock lock;
  try {
    const std::filesystem::path dir =
        detail::prepare_lock_dir(options.lock_dir.empty() ? detail::default_lock_base()
                                                          : std::filesystem::path(options.lock_dir),
                                 root);
    detail::FileLock::Outcome outcome = detail::FileLock::Outcome::failed;
    std::string error;
    lock = detail::FileLock::acquire(dir / "prune.lock", std::chrono::seconds(30), outcome, error);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wyjit prune: {}: pruning without the lock\n", e.what());
  }
  const detail::PruneResult result = detail::prune_root(root, bound);
  fmt::print("pruned '{}': removed {} stale temp file(s), evicted {} entr{}: {} -> {} (bound {})\n",
             root, result.swept, result.evicted, result.evicted == 1 ? "y" : "ies",
             detail::format_bytes(result.bytes_before), detail::format_bytes(result.bytes_after),
             detail::format_bytes(bound));
  for (const std::string& error : result.errors) fmt::print(stderr, "wyjit prune: {}\n", error);
  return result.errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace wyjit::cli
