// SPDX-License-Identifier: Apache-2.0
// One named comparison of a launch's result, and how a test case reports a list of them.
#pragma once

#include <string>
#include <vector>

#include "common/compare.hpp"

namespace wyjit::test {

struct CheckedTensor {
  std::string name;  ///< "out", "state after token 3", "final state", "padding written", ...
  Comparison comparison;
  double tolerance = 0;
  bool passed() const { return comparison.passed(tolerance); }
  std::string describe() const;
};

/// One Catch2 CHECK per entry (with its comparison as INFO), under `what`; and that there is at
/// least one entry.
void check_all(const std::string& what, const std::vector<CheckedTensor>& checks);

/// The entries that failed, one line each ("" when all passed): for threads, where Catch2
/// assertions are not allowed.
std::string failures(const std::vector<CheckedTensor>& checks);

}  // namespace wyjit::test
