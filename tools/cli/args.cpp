// SPDX-License-Identifier: Apache-2.0
// Hand-written argument reading and value parsing for the `wyjit` CLI.
#include <fmt/format.h>

#include <algorithm>
#include <array>
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

// NOTE: the lists spell out every enumerator; the names come from the library's to_string,
// so the CLI accepts exactly what format_spec prints.
constexpr std::array kAllDTypes = {DType::f32, DType::f16, DType::bf16};
constexpr std::array kAllLayouts = {Layout::vk, Layout::kv};
constexpr std::array kAllAddressings = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr std::array kAllFamilies = {Family::gdn_verify, Family::conv1d_update};
constexpr std::array kAllRollbacks = {Rollback::intermediate, Rollback::window};

template <typename Enum, std::size_t N>
std::string names_of(const std::array<Enum, N>& values) {
  std::string out;
  for (Enum v : values) {
    if (!out.empty()) out += ", ";
    out += to_string(v);
  }
  return out;
}

template <typename Enum, std::size_t N>
std::vector<Enum> parse_enum_list(const std::string& command, const std::string& option,
                                  const std::string& text, const std::array<Enum, N>& all) {
  std::vector<Enum> out;
  for (const std::string& item : split_list(command, option, text)) {
    const auto* found =
        std::find_if(all.begin(), all.end(), [&](Enum v) { return item == to_string(v); });
    if (found == all.end()) {
      bad_value(command, option, item, fmt::format("expected one of {}", names_of(all)));
    }
    if (std::find(out.begin(), out.end(), *found) == out.end()) out.push_back(*found);
  }
  return out;
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

std::vector<int> parse_k_list(const std::string& command, const std::string& text) {
  constexpr int kMinK = 1;
  constexpr int kMaxK = 32;
  std::vector<int> ks;
  for (const std::string& item : split_list(command, "--k", text)) {
    const std::size_t dash = item.find('-', 1);
    if (dash == std::string::npos) {
      ks.push_back(parse_int(command, "--k", item, kMinK, kMaxK));
      continue;
    }
    const int lo = parse_int(command, "--k", item.substr(0, dash), kMinK, kMaxK);
    const int hi = parse_int(command, "--k", item.substr(dash + 1), kMinK, kMaxK);
    if (lo > hi) bad_value(command, "--k", item, "a range must run low-high");
    for (int k = lo; k <= hi; ++k) ks.push_back(k);
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

std::vector<DType> parse_dtype_list(const std::string& command, const std::string& option,
                                    const std::string& text) {
  return parse_enum_list(command, option, text, kAllDTypes);
}

std::vector<Layout> parse_layout_list(const std::string& command, const std::string& text) {
  return parse_enum_list(command, "--layout", text, kAllLayouts);
}

std::vector<Addressing> parse_addressing_list(const std::string& command, const std::string& text) {
  return parse_enum_list(command, "--addressing", text, kAllAddressings);
}

std::vector<Family> parse_family_list(const std::string& command, const std::string& text) {
  return parse_enum_list(command, "--family", text, kAllFamilies);
}

std::vector<Rollback> parse_rollback_list(const std::string& command, const std::string& text) {
  return parse_enum_list(command, "--rollback", text, kAllRollbacks);
}

std::vector<bool> parse_switch_list(const std::string& command, const std::string& option,
                                    const std::string& text) {
  std::vector<bool> out;
  for (const std::string& item : split_list(command, option, text)) {
    if (item != "on" && item != "off") bad_value(command, option, item, "expected on or off");
    const bool on = item == "on";
    if (std::find(out.begin(), out.end(), on) == out.end()) out.push_back(on);
  }
  return out;
}

std::vector<int> parse_width_list(const std::string& command, const std::string& text) {
  std::vector<int> widths;
  for (const std::string& item : split_list(command, "--width", text)) {
    const int w = parse_int(command, "--width", item, 2, 8);
    if (std::find(widths.begin(), widths.end(), w) == widths.end()) widths.push_back(w);
  }
  return widths;
}

std::vector<int> parse_dim_list(const std::string& command, const std::string& option,
                                const std::string& text) {
  std::vector<int> dims;
  for (const std::string& item : split_list(command, option, text)) {
    const int d = parse_int(command, option, item, 1, 1 << 20);
    if (d != 64 && d != 128 && d != 256)
      bad_value(command, option, item, "expected 64, 128 or 256");
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
  }
  return dims;
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
