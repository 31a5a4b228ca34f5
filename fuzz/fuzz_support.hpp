// SPDX-License-Identifier: Apache-2.0
// What the libFuzzer targets share: a property check that is a finding when it fails, and the
// one-byte mode tag most inputs start with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wyjit::fuzz {

/// A broken property: printed, then abort(), which libFuzzer reports (and saves the input of)
/// like any crash. NOTE: not assert(): the fuzz tree is built with NDEBUG (RelWithDebInfo).
[[noreturn]] inline void property_failed(const char* file, int line, const char* expr,
                                         const std::string& detail) {
  std::fprintf(stderr, "%s:%d: property failed: %s\n  %s\n", file, line, expr, detail.c_str());
  std::abort();
}

#define WYJIT_FUZZ_REQUIRE(cond, detail)                                            \
  do {                                                                              \
    if (!(cond)) ::wyjit::fuzz::property_failed(__FILE__, __LINE__, #cond, detail); \
  } while (0)

/// The input as text (any bytes, NUL included).
inline std::string_view as_text(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// Splits `text` at every `sep`; an empty text is one empty part.
inline std::vector<std::string> split_at(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

}  // namespace wyjit::fuzz
