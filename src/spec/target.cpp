// SPDX-License-Identifier: Apache-2.0
// Target names: sm_90, sm_90a, compute_90.
#include <charconv>

#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"

namespace wyjit {

std::string Target::name() const {
  return std::string(ptx ? "compute_" : "sm_") + std::to_string(arch) + (arch_specific ? "a" : "");
}

Target Target::parse(const std::string& text) {
  Target t;
  std::string_view rest = text;
  if (rest.starts_with("sm_")) {
    rest.remove_prefix(3);
  } else if (rest.starts_with("compute_")) {
    rest.remove_prefix(8);
    t.ptx = true;
  } else {
    throw Error(ErrorCode::invalid_argument,
                "target '" + text + "' is not sm_XX, sm_XXa or compute_XX (e.g. sm_90)");
  }
  if (rest.ends_with("a")) {
    t.arch_specific = true;
    rest.remove_suffix(1);
  }
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), t.arch);
  if (ec != std::errc() || end != rest.data() + rest.size() || rest.empty() || t.arch < 10 ||
      rest[0] == '0') {
    throw Error(ErrorCode::invalid_argument,
                "target '" + text + "' has no valid architecture number (e.g. sm_90)");
  }
  return t;
}

}  // namespace wyjit
