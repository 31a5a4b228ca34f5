// SPDX-License-Identifier: Apache-2.0
/// @file conv1d_reference.hpp
/// @brief Double-precision reference of the K-token causal conv1d update (DESIGN.md "Conv1d
///        update"), token by token, and a deterministic random problem generator.
#pragma once

#include <cstdint>
#include <vector>

#include "common/half_types.hpp"

namespace wyjit::test {

/// One conv1d_update problem: shapes, options and dense host copies of exactly what the GPU
/// reads (already rounded to the io or weight dtype).
struct Conv1dProblem {
  int batch = 1, channels = 1, k = 1, width = 4;  ///< k = K, tokens per sequence
  bool bias = false;                              ///< add bias[c]
  bool silu = false;                              ///< apply silu(v) = v / (1 + e^-v)
  std::vector<float> x;                           ///< [batch*K][channels]
  std::vector<float> weight;                      ///< [channels][width]
  std::vector<float> bias_values;                 ///< [channels] (read when bias)
  std::vector<float> state0;  ///< [batch][channels][width-1]: the previous inputs, oldest first
};

/// Result of the reference.
struct Conv1dReference {
  std::vector<double> y;  ///< [batch*K][channels]
  /// [batch][K][channels][width-1]: the state after token t (t = K-1 is the final state). The
  /// state holds inputs, so these are exact copies of x and state0 values.
  std::vector<float> states;
  /// [batch][channels][width-1+K]: the window z = state0 then x_0..x_{K-1}.
  std::vector<float> window;
};

/// Runs the update token by token in double: for each t the window of the last `width` inputs
/// ending at x_t is multiplied by weight[c] (weight[c][width-1] multiplies x_t), bias added,
/// silu applied. Throws std::invalid_argument when a dimension is not positive or a vector has
/// the wrong size.
Conv1dReference conv1d_reference(const Conv1dProblem& p);

/// silu(v) = v / (1 + e^-v).
double conv1d_silu(double v);

/// Shape and options for make_random_conv1d_problem.
struct Conv1dShape {
  int batch, channels, k, width;
  bool bias = false;
  bool silu = false;
};

/// Deterministic random problem (std::mt19937_64 with hand-written uniform/normal transforms, so
/// identical on every standard library). x, state0 ~ N(0,1) rounded to `io`; weight ~ U[-0.6,
/// 0.6] and bias ~ U[-0.5, 0.5] rounded to `weight`. No value is zero. bias_values is always
/// filled.
Conv1dProblem make_random_conv1d_problem(const Conv1dShape& shape, IoType io, IoType weight,
                                         std::uint64_t seed);

}  // namespace wyjit::test
