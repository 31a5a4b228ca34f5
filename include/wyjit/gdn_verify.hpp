// SPDX-License-Identifier: Apache-2.0
/// @file gdn_verify.hpp
/// @brief Typed launch of the WY gated-delta-rule verify kernel.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "wyjit/jit.hpp"

namespace wyjit {

/// Arguments of one verify launch. Strides are in elements of the pointed-to type.
///
/// Row (b, t) of q/k/v/g/beta/out is `b*K + t`. Per sequence the state holds HV heads of
/// `dk*dv` elements in the variant's layout.
struct GdnVerifyArgs {
  int batch = 0;        ///< sequences
  int num_k_heads = 0;  ///< HK
  int num_v_heads = 0;  ///< HV, a multiple of HK
  int k = 0;            ///< tokens per sequence: must equal the variant's K
  int dk = 0;           ///< must equal the variant's dk
  int dv = 0;           ///< must equal the variant's dv
  float scale = 0.0f;   ///< multiplies q; 1/sqrt(dk) is the usual value

  const void* q = nullptr;      ///< [batch*K, qk_stride] io dtype, head h at h*dk
  const void* k_in = nullptr;   ///< [batch*K, qk_stride] io dtype
  const void* v = nullptr;      ///< [batch*K, v_stride] io dtype, head vh at vh*dv
  const float* g = nullptr;     ///< [batch*K, gb_stride] log-decay (<= 0), fp32
  const float* beta = nullptr;  ///< [batch*K, gb_stride] fp32
  /// Fused gating (variant option `gating`) replaces g and beta: g = -exp(a_log[vh]) *
  /// softplus(a + dt_bias[vh]), beta = sigmoid(b).
  const void* a = nullptr;         ///< [batch*K, gb_stride] io dtype
  const void* b = nullptr;         ///< [batch*K, gb_stride] io dtype
  const float* a_log = nullptr;    ///< [HV]
  const float* dt_bias = nullptr;  ///< [HV]
  void* out = nullptr;             ///< [batch*K, o_stride] io dtype, head vh at vh*dv
  std::int64_t qk_stride = 0;      ///< >= HK*dk
  std::int64_t v_stride = 0;       ///< >= HV*dv
  std::int64_t gb_stride = 0;      ///< >= HV
  std::int64_t o_stride = 0;       ///< >= HV*dv

  /// Strided addressing: S_b = state + b*state_seq_stride (read, then final state written).
  void* state = nullptr;
  std::int64_t state_seq_stride = 0;  ///< >= HV*dk*dv
  /// Hi_t(b) = inter + b*inter_seq_stride + t*inter_tok_stride, t = 0..K-2 (unused when K == 1).
  void* inter = nullptr;
  std::int64_t inter_seq_stride = 0;
  std::int64_t inter_tok_stride = 0;  ///< >= HV*dk*dv
};

/// Checks `args` against `kernel.spec()` and the data contract; throws Error(invalid_argument)
/// naming the argument and its value. Touches no device memory and no driver.
void check_gdn_verify_args(const KernelSpec& spec, const GdnVerifyArgs& args);

/// Checks, then launches on `stream`. Allocates nothing and never synchronises, so it can be
/// captured in a CUDA graph. The kernel must come from Jit::kernel for a gdn_verify spec.
void launch_gdn_verify(const Kernel& kernel, const GdnVerifyArgs& args, CUstream stream);

}  // namespace wyjit
