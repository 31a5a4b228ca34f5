// SPDX-License-Identifier: Apache-2.0
// Cache settings from the environment, and the small parsers they share with the CLI.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wyjit::detail {

/// WYJIT_CACHE_MAX_BYTES when unset: 1 GiB.
inline constexpr std::uint64_t kDefaultCacheMaxBytes = std::uint64_t{1} << 30;

/// The value of environment variable `name`; nullopt when it is unset or empty.
std::optional<std::string> env_value(const char* name);

/// $WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit, else $HOME/.cache/wyjit, else ./.wyjit-cache.
std::filesystem::path default_cache_root();

/// Splits a colon-separated directory list (WYJIT_CACHE_RO_DIRS); empty items are skipped.
std::vector<std::string> split_path_list(std::string_view text);

/// A byte count: `1073741824`, `64K`, `512M`, `1G`, `2T` (binary multiples; `KiB`, `MiB`, ...
/// also accepted). nullopt for anything else, or a value that does not fit in 64 bits.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

/// `1`, `true`, `yes`, `on` -> true; `0`, `false`, `no`, `off` -> false (any case); else nullopt.
std::optional<bool> parse_flag(std::string_view text);

/// `1536` -> "1.5 KiB"; below 1 KiB, "N B".
std::string format_bytes(std::uint64_t bytes);

}  // namespace wyjit::detail
