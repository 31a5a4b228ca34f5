// SPDX-License-Identifier: Apache-2.0
// The family cases every shared suite runs. Adding a family: its case file
// (tests/gpu/families/<family>/<family>_case.cpp, defining family_case<Spec>()) and its entry
// here, a declaration and a line in the list.
#include <string>
#include <variant>

#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

// The cases the families' case files define.
template <>
const FamilyCase& family_case<GdnVerifySpec>();
template <>
const FamilyCase& family_case<GdnReplaySpec>();
template <>
const FamilyCase& family_case<Conv1dUpdateSpec>();

std::span<const FamilyCase* const> family_cases() {
  static const std::vector<const FamilyCase*> cases{
      &family_case<GdnVerifySpec>(),
      &family_case<GdnReplaySpec>(),
      &family_case<Conv1dUpdateSpec>(),
  };
  return cases;
}

std::vector<std::string> families_without_case() {
  std::vector<std::string> missing;
  for (const std::string_view family : family_names()) {
    bool found = false;
    for (const FamilyCase* c : family_cases()) found = found || c->name() == family;
    if (!found) missing.emplace_back(family);
  }
  return missing;
}

KernelSpec with_addressing(const KernelSpec& spec, Addressing addressing) {
  return std::visit(
      [&](auto s) -> KernelSpec {
        s.addressing = addressing;
        return s;
      },
      spec);
}

Addressing addressing_of(const KernelSpec& spec) {
  return std::visit([](const auto& s) { return s.addressing; }, spec);
}

std::vector<std::string> role_names(const KernelSpec& spec) {
  std::vector<std::string> names;
  for (const std::string_view role : Kernel(spec).roles()) names.emplace_back(role);
  return names;
}

}  // namespace wyjit::test::conformance
