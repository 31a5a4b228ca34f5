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
  /// Padding between rows, sequences and states (poisoned, checked untouched). With table or
  /// slot addressing and batch >= 3 it also pads sequence 1 (null S_1 / read slot -1: nothing of
  /// it may be written) and skips Hi_0 of sequence 0 (null pointer / write slot -1).
  bool padded = false;
  std::uint64_t seed = 1;
};

struct CheckedTensor {
  std::string name;  ///< "out", "state after token 3", "final state", "padding written", ...
  Comparison comparison;
  double tolerance = 0;
  bool passed() const { return comparison.passed(tolerance); }
};

struct VerifyResult {
  std::vector<CheckedTensor> checks;
  /// What the kernel wrote, as raw bytes in an order independent of addressing: out rows
  /// (HV*dv elements each) and state tiles (HV*dk*dv elements, the variant's layout); padded
  /// sequences and skipped states are left empty.
  std::vector<std::vector<std::uint8_t>> out_rows;     ///< [b*K + t]
  std::vector<std::vector<std::uint8_t>> state_bytes;  ///< [b*K + t]
};

/// Runs the case on device 0: every output, every intermediate state, the final state, and the
/// memory that must stay untouched.
VerifyResult run_verify_case(const VerifyCase& c);

std::string describe(const VerifyCase& c);

}  // namespace wyjit::test
