// SPDX-License-Identifier: Apache-2.0
// Hand-written argument reading and value parsing for the `wyjit` CLI.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cache/cache_env.hpp"
#include "cli/cli.hpp"
#include "wyjit/error.hpp"

namespace wyjit::cli {

namespace {

[[noreturn]] void bad_value(const std::string& command, std::string_view option,
                            const std::string& value, std::string_view why) {
  throw UsageError(command, fmt::format("bad value '{}' for {}: {}", value, option, why));
}

}  // namespace

bool ArgReader::flag(std::string_view name) {
  if (done() || args_[pos_] != name) return false;
  ++pos_;
  return true;
}

bool ArgReader::option(std::string_view name, std::string& value, std::string_view short_name) {
  if (done()) return false;
  const std::string& arg = args_[pos_];
  const bool exact = arg == name || (!short_name.empty() && arg == short_name);
  if (exact) {
    if (pos_ + 1 >= args_.size()) {
      throw UsageError(command_, fmt::format("option {} needs a value", arg));
    }
    value = args_[pos_ + 1];
    pos_ += 2;
    return true;
  }
  if (arg.size() > name.size() + 1 && arg.starts_with(name) && arg[name.size()] == '=') {
    value = arg.substr(name.size() + 1);
    ++pos_;
    return true;
  }
  // `-j4`: a short option glued to its value.
  if (!short_name.empty() && arg.size() > short_name.size() && arg.starts_with(short_name) &&
      arg[short_name.size()] != '=') {
    value = arg.substr(short_name.size());
    ++pos_;
    return true;
  }
  return false;
}

bool ArgReader::next_is_value() const noexcept {
  return pos_ + 1 < args_.size() && !args_[pos_ + 1].starts_with("-");
}

std::string ArgReader::positional() {
  if (done() || (args_[pos_].size() > 1 && args_[pos_][0] == '-')) reject();
  return args_[pos_++];
}

void ArgReader::reject() const {
  if (done()) throw UsageError(command_, "missing argument");
  const std::string& arg = args_[pos_];
  if (arg.size() > 1 && arg[0] == '-') {
    throw UsageError(command_, fmt::format("unknown option '{}'", arg));
  }
  throw UsageError(command_, fmt::format("unexpected argument '{}'", arg));
}

bool wants_help(std::span<const std::string> args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "--help" || a == "-h"; });
}

std::vector<std::string> split_list(const std::string& command, const std::string& option,
                                    const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) bad_value(command, option, text, "empty item in the comma-separated list");
    items.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

int parse_int(const std::string& command, const std::string& option, const std::string& text,
              int min, int max) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || text.empty()) {
    bad_value(command, option, text, "not a whole number");
  }
  if (value < min || value > max) {
    bad_value(command, option, text, fmt::format("must be in {}..{}", min, max));
  }
  return value;
}

std::uint64_t parse_bytes(const std::string& command, const std::string& option,
                          const std::string& text) {
  const std::optional<std::uint64_t> bytes = detail::parse_byte_size(text);
  if (!bytes) {
    bad_value(command, option, text,
              "expected a byte count such as 1073741824, 512M or 1G (K, M, G, T: powers of 1024)");
  }
  return *bytes;
}

JitOptions writer_options(const std::string& cache_dir) {
  JitOptions options = JitOptions::from_env();
  if (!cache_dir.empty()) options.cache_dir = cache_dir;
  options.read_only_dirs.clear();
  options.no_jit = false;
  return options;
}

JitOptions reader_options(const std::string& cache_dir) {
  JitOptions options = JitOptions::from_env();
  if (!cache_dir.empty()) {
    options.cache_dir = cache_dir;
    options.read_only_dirs.clear();
  }
  return options;
}

std::vector<CacheRootInfo> roots_of(const JitOptions& options) {
  std::vector<CacheRootInfo> roots;
  if (!options.disk_cache) return roots;
  for (const std::string& dir : options.read_only_dirs) {
    roots.push_back({dir, true, "WYJIT_CACHE_RO_DIRS"});
  }
  roots.push_back(
      {options.cache_dir.empty() ? detail::default_cache_root().string() : options.cache_dir, false,
       ""});
  return roots;
}

KernelSpec parse_variant(const std::string& command, const std::string& text) {
  try {
    KernelSpec spec = parse_spec(text);
    validate_spec(spec);
    return spec;
  } catch (const Error& e) {
    throw UsageError(command, fmt::format("bad variant '{}': {}", text, e.what()));
  }
}

Target parse_target(const std::string& command, const std::string& text) {
  Target target;
  try {
    target = Target::parse(text);
  } catch (const Error& e) {
    bad_value(command, "--arch", text, e.what());
  }
  const std::vector<int> supported = nvrtc_supported_archs();
  // NOTE: an empty list means NVRTC could not tell us; the compile itself will then judge.
  if (!supported.empty() &&
      std::find(supported.begin(), supported.end(), target.arch) == supported.end()) {
    std::string list;
    for (int arch : supported) list += fmt::format("{}sm_{}", list.empty() ? "" : " ", arch);
    bad_value(
        command, "--arch", text,
        fmt::format("NVRTC {} does not support it; supported: {}", nvrtc_version_text(), list));
  }
  return target;
}

}  // namespace wyjit::cli
