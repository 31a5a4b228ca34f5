// SPDX-License-Identifier: Apache-2.0
// One gdn_verify launch on random data, checked against the double-precision sequential reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/compare.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::test {

struct VerifyCase {
  KernelSpec spec;
  int batch = 1;
  int hk = 1;
  int hv = 1;
  bool padded = false;  ///< padding between rows, heads' rows and sequences (poisoned, checked)
  std::uint64_t seed = 1;
};

struct CheckedTensor {
  std::string name;  ///< "out", "state after token 3", "final state", "padding of out", ...
  Comparison comparison;
  double tolerance = 0;
  bool passed() const { return comparison.passed(tolerance); }
};

/// Runs the case on device 0 and returns every comparison made (outputs, each intermediate
/// state, the final state, and untouched padding).
std::vector<CheckedTensor> run_verify_case(const VerifyCase& c);

std::string describe(const VerifyCase& c);

}  // namespace wyjit::test
