// SPDX-License-Identifier: Apache-2.0
// The token inputs and output both GDN benchmarks (gdn_verify, gdn_replay) set up the same way:
// their argument structs name these fields alike.
#pragma once

#include <cmath>
#include <cstddef>

#include "wyjit/types.hpp"

namespace wyjit::bench {

/// The sizes and the q, k, v, out rows (and g/beta, or a, b, a_log, dt_bias with fused gating)
/// of one launch of N sequences, each buffer from `alloc(bytes, fill value)`; dense rows.
template <class Args, class Spec, class Alloc>
void fill_gdn_token_args(Args& a, const Spec& spec, int N, int HK, int HV, Alloc&& alloc) {
  const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
  const std::size_t rows = static_cast<std::size_t>(N) * spec.k;
  a.batch = N;
  a.num_k_heads = HK;
  a.num_v_heads = HV;
  a.k = spec.k;
  a.dk = spec.dk;
  a.dv = spec.dv;
  a.scale = 1.0f / std::sqrt(static_cast<float>(spec.dk));
  a.qk_stride = HK * spec.dk;
  a.v_stride = HV * spec.dv;
  a.gb_stride = HV;
  a.o_stride = HV * spec.dv;
  a.q = alloc(rows * HK * spec.dk * io, 0.03f);
  a.k_in = alloc(rows * HK * spec.dk * io, 0.02f);
  a.v = alloc(rows * HV * spec.dv * io, 0.5f);
  if (spec.fused_gating) {
    a.a = alloc(rows * HV * io, -0.5f);
    a.b = alloc(rows * HV * io, 0.25f);
    a.a_log = static_cast<const float*>(alloc(HV * 4, 0.1f));
    a.dt_bias = static_cast<const float*>(alloc(HV * 4, 0.2f));
  } else {
    a.g = static_cast<const float*>(alloc(rows * HV * 4, -0.05f));
    a.beta = static_cast<const float*>(alloc(rows * HV * 4, 0.4f));
  }
  a.out = alloc(rows * HV * spec.dv * io, 0.0f);
}

}  // namespace wyjit::bench
