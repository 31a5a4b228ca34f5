// SPDX-License-Identifier: Apache-2.0
// Registers a shared suite once per family: one Catch2 test case each, named
// "<family>: <title>" and tagged [gpu][conformance][<family>] plus the suite's own tags, so
// that a family, a suite or one of them can be picked on the command line
// ("[conformance][graph]", "[conv1d_update][threads]").
#pragma once

#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

using SuiteBody = void (*)(const FamilyCase& family);

struct SuiteRegistration {
  SuiteRegistration(const char* title, const char* tags, SuiteBody body, const char* file,
                    int line) noexcept;
};

}  // namespace wyjit::test::conformance

#define WYJIT_SUITE_CONCAT2(a, b) a##b
#define WYJIT_SUITE_CONCAT(a, b) WYJIT_SUITE_CONCAT2(a, b)
/// One test case per family of KernelSpec running `body(const FamilyCase&)`.
#define WYJIT_CONFORMANCE_SUITE(title, tags, body)                               \
  static const ::wyjit::test::conformance::SuiteRegistration WYJIT_SUITE_CONCAT( \
      wyjit_suite_registration_, __LINE__)(title, tags, body, __FILE__, __LINE__)
