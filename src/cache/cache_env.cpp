// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_env.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace wyjit::detail {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::filesystem::path default_cache_root() {
  if (auto dir = env_value("WYJIT_CACHE_DIR")) return *dir;
  if (auto xdg = env_value("XDG_CACHE_HOME")) return std::filesystem::path(*xdg) / "wyjit";
  if (auto home = env_value("HOME")) return std::filesystem::path(*home) / ".cache" / "wyjit";
  return ".wyjit-cache";
}

std::vector<std::string> split_path_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t colon = text.find(':');
    const std::string_view item = text.substr(0, colon);
    if (!item.empty()) out.emplace_back(item);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  return out;
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr == text.data()) return std::nullopt;
  const std::string suffix = lower(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
  constexpr std::array<std::pair<std::string_view, int>, 13> kSuffixes = {{
      {"", 0},
      {"b", 0},
      {"k", 10},
      {"kb", 10},
      {"kib", 10},
      {"m", 20},
      {"mb", 20},
      {"mib", 20},
      {"g", 30},
      {"gb", 30},
      {"gib", 30},
      {"t", 40},
      {"tib", 40},
  }};
  const auto* found = std::find_if(kSuffixes.begin(), kSuffixes.end(),
                                   [&](const auto& s) { return s.first == suffix; });
  if (found == kSuffixes.end()) return std::nullopt;
  const int shift = found->second;
  if (shift > 0 && value > (~std::uint64_t{0} >> shift)) return std::nullopt;
  return value << shift;
}

std::optional<bool> parse_flag(std::string_view text) {
  const std::string value = lower(text);
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  return std::nullopt;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  constexpr std::array<const char*, 4> kUnits = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

}  // namespace wyjit::detail
