// SPDX-License-Identifier: Apache-2.0
/// @file gdn_reference.hpp
/// @brief Double-precision SEQUENTIAL reference of the gated delta rule (DESIGN.md "The math"),
///        and a deterministic random problem generator for kernel tests.
#pragma once

#include <cstdint>
#include <vector>

#include "common/half_types.hpp"

namespace wyjit::test {

/// One verify problem: shapes, options and dense host copies of exactly what the GPU reads
/// (already rounded to the io dtype). Token rows are packed (stride = heads * dim).
struct GdnProblem {
  int batch = 1, hk = 1, hv = 1, k = 1, dk = 128, dv = 128;  ///< k = K, tokens per sequence
  double scale = 0;                   ///< multiplies q (used literally; 0 gives zero outputs)
  bool l2norm_qk = false;             ///< q <- q / sqrt(sum q^2 + 1e-6), same for k, before use
  bool fused_gating = false;          ///< when true g, beta are computed from a, b, a_log, dt_bias
  std::vector<float> q;               ///< [batch*K][HK][dk]
  std::vector<float> k_in;            ///< [batch*K][HK][dk] keys (named like GdnVerifyArgs::k_in;
                                      ///< `k` is the token count K)
  std::vector<float> v;               ///< [batch*K][HV][dv]
  std::vector<float> g, beta;         ///< [batch*K][HV]   (used when !fused_gating)
  std::vector<float> a, b;            ///< [batch*K][HV]   (used when fused_gating)
  std::vector<float> a_log, dt_bias;  ///< [HV]      (used when fused_gating)
  std::vector<float> state0;  ///< [batch][HV][dk][dv]: element (i over dk, j over dv) at i*dv + j
  /// When not empty, the initial state in double instead of state0 (same layout): a reference
  /// carried over many steps (replay mode) keeps its state exact.
  std::vector<double> state0_exact;
};

/// Result of the sequential reference.
struct GdnReference {
  std::vector<double> out;     ///< [batch*K][HV][dv]
  std::vector<double> states;  ///< [batch][K][HV][dk][dv]: states[t] is the state after token t
                               ///< (t = K-1 is the final state)
  /// [batch*K][HV][dv]: each token's update u = beta (v - S'^T k) with S' = e^g S, so that the
  /// state after it is S' + k u^T (what replay mode logs instead of the state).
  std::vector<double> u;
  std::vector<double> g;     ///< [batch*K][HV]: each token's log-decay as used (fused or not)
  std::vector<double> keys;  ///< [batch*K][HK][dk]: the keys as used (normalised with l2norm_qk)
};

/// Shape and options for make_random_problem.
struct GdnShape {
  int batch, hk, hv, k, dk, dv;
  bool l2norm_qk = false;
  bool fused_gating = false;
};

/// Runs the gated delta rule token by token in double. Throws std::invalid_argument when a
/// dimension is not positive, HV % HK != 0, or a vector the options need has the wrong size
/// (g/beta are only checked when !fused_gating; a/b/a_log/dt_bias only when fused_gating).
GdnReference gdn_reference(const GdnProblem& p);

/// Softplus as the kernel defines it: x for x > 20, else log1p(exp(x)).
double gdn_softplus(double x);
/// Fused-gating decay: -exp(a_log) * softplus(a + dt_bias).
double gdn_fused_g(double a, double a_log, double dt_bias);
/// Fused-gating beta: sigmoid(b) = 1 / (1 + exp(-b)).
double gdn_fused_beta(double b);

/// Deterministic random problem (std::mt19937_64 with hand-written uniform/normal transforms,
/// so identical on every standard library). No value is zero. q, k ~ N(0,1): rows normalised to
/// unit L2 norm when !l2norm_qk, else scaled by a random factor in [0.5, 3]; v ~ N(0,1);
/// g ~ U[-1, -0.01]; beta ~ U[0.05, 0.95]; a, b ~ N(0,1); a_log, dt_bias ~ U[-1, 1];
/// state0 ~ N(0, 0.5^2). q, k_in, v, a, b are rounded to `io`; g, beta, a_log, dt_bias, state0 stay
/// fp32. All of g, beta, a, b, a_log, dt_bias are filled whatever fused_gating says.
/// scale = float(1/sqrt(dk)), i.e. exactly the fp32 value a kernel is given.
GdnProblem make_random_problem(const GdnShape& shape, IoType io, std::uint64_t seed);

}  // namespace wyjit::test
