// SPDX-License-Identifier: Apache-2.0
/// @file gdn_verify.hpp
/// @brief The gdn_verify family: its spec and its typed, checked launch.
///
/// Canonical names: `gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]` (`dkA.dvB`
/// when the head dims differ), e.g. `gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.l2norm`.
///
/// For one sequence and value head, tokens t = 0..K-1 with q_t, k_t (dk), v_t (dv), g_t <= 0 and
/// beta_t (optionally q, k L2-normalised and g, beta computed from raw gates in the kernel):
///
///     S <- exp(g_t) S;  u_t = beta_t (v_t - S^T k_t);  S <- S + k_t u_t^T;  o_t = S^T (scale q_t)
///
/// The launch writes every o_t and the state after every token (DESIGN.md, "The math").
#pragma once

#include <cuda.h>

#include <compare>

#include "wyjit/gdn_verify.h"
#include "wyjit/types.hpp"

namespace wyjit {

class Kernel;
namespace detail {
class Family;
}  // namespace detail

/// A gdn_verify variant: every compile-time choice.
struct GdnVerifySpec {
  int k = 4;                 ///< tokens verified per sequence, 1..32
  DType io = DType::bf16;    ///< q, k, v, out (and raw gating inputs)
  DType state = DType::f32;  ///< recurrent state storage
  Addressing addressing = Addressing::strided;
  Layout layout = Layout::vk;
  int dk = 128;               ///< key head dim: 64, 128 or 256
  int dv = 128;               ///< value head dim: 64, 128 or 256
  bool l2norm_qk = false;     ///< normalise q and k rows in the kernel
  bool fused_gating = false;  ///< compute g and beta from raw a, b, A_log, dt_bias

  friend auto operator<=>(const GdnVerifySpec&, const GdnVerifySpec&) = default;
  /// The family's descriptor (library-internal: not exported).
  static const detail::Family& family() noexcept;
};

/// The launch arguments (wyjit/gdn_verify.h): the same struct as C's.
using GdnVerifyArgs = ::wyjit_gdn_verify_args;

/// Checks `args` against `spec` and the data contract; throws Error(invalid_argument) naming
/// the argument and its value. Touches no device memory and no driver.
WYJIT_API void check_gdn_verify_args(const GdnVerifySpec& spec, const GdnVerifyArgs& args);

/// Checks, then launches on `stream`. Allocates nothing and never synchronises, so it can be
/// captured in a CUDA graph. The kernel must come from Jit::kernel for a gdn_verify spec.
WYJIT_API void launch_gdn_verify(const Kernel& kernel, const GdnVerifyArgs& args, CUstream stream);

}  // namespace wyjit
