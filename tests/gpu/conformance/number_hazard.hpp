// SPDX-License-Identifier: Apache-2.0
// A hostile number in the inputs of a launch (suite_hostile_numbers.cpp): NaN, +-inf, a huge or
// zero decay, beta outside [0, 1], a zero or huge q/k row. The family puts it into its random
// problem before the float64 reference is computed, so that the launch and the reference read
// the same numbers, and its results then compare by class: non-finite exactly where the
// reference is, and the finite ones within the usual tolerance where the case is
// well-conditioned.
#pragma once

#include <optional>
#include <string>

#include "common/compare.hpp"

namespace wyjit::test::conformance {

struct NumberHazard {
  std::string input;  ///< the buffer's name (BufferSpec::name): "q", "g", "x"
  /// false: one element set to `value`; true: every element of one row multiplied by `value` (a
  /// row: what the kernel takes one L2 norm of, q or k of one token and key head).
  bool row = false;
  double value = 0.0;
  bool every_token = false;  ///< at that place in every token of the sequence, not in one
  /// The finite results are well-conditioned: within the usual tolerance of the reference.
  /// Otherwise (NaN, +-inf) only whether each one is finite is checked.
  bool conditioned = true;

  /// "g = -inf", "q row * 1e+20", "g = -1e+30 at every token".
  std::string describe() const;
};

/// NaN or +-inf in one element (conditioned = false), or another value (conditioned).
NumberHazard hazard_element(std::string input, double value, bool every_token = false);
/// One row multiplied by `factor` (0: a zero row).
NumberHazard hazard_row(std::string input, double factor);

/// How a launch under `hazard` (none: an ordinary launch) compares non-finite values.
NonFinite nonfinite_rule(const std::optional<NumberHazard>& hazard);
/// `tolerance`, or no bound on the finite results where the hazard is not well-conditioned.
double hazard_tolerance(const std::optional<NumberHazard>& hazard, double tolerance);

}  // namespace wyjit::test::conformance
