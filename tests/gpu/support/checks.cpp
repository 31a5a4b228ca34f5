// SPDX-License-Identifier: Apache-2.0
#include "gpu/support/checks.hpp"

#include <catch2/catch.hpp>

namespace wyjit::test {

std::string CheckedTensor::describe() const {
  return comparison.describe(name) + " tolerance " + std::to_string(tolerance);
}

void check_all(const std::string& what, const std::vector<CheckedTensor>& checks) {
  INFO(what);
  CHECK(!checks.empty());
  for (const CheckedTensor& t : checks) {
    INFO(t.describe());
    CHECK(t.passed());
  }
}

std::string failures(const std::vector<CheckedTensor>& checks) {
  std::string report;
  for (const CheckedTensor& t : checks) {
    if (!t.passed()) report += (report.empty() ? "" : "; ") + t.describe();
  }
  return report;
}

}  // namespace wyjit::test
