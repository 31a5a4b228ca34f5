// SPDX-License-Identifier: Apache-2.0
// One token of the gated delta rule on a register-resident vk column strip: shared by the
// classic verify (which stores each updated state vector) and gdn_replay's in-turn verify
// (which stores none). C: a config with kVecs, kLanesPerCol and kPadDk (common/gdn_tile.cuh).
#pragma once

#include "common/gdn_tile.cuh"
#include "common/types.cuh"

namespace wyjit_kernels {

struct GdnTokenResult {
  float u;  // u_t of the column
  float o;  // o_t of the column
};

/// S <- e^{g_t} S;  u_t = beta_t (v_t - S^T k_t);  S <- S + k_t u_t^T;  o_t = S^T q_t
/// on this thread's elements `s` of one column, reduced over the column's lanes (one warp, so
/// every reduction is a shuffle). `v` is the column's v_t; `after_vec(c)` runs once vector c of
/// s holds S_t. Returns u_t and o_t, the same on every lane of the column.
template <class C, class AfterVec>
__device__ __forceinline__ GdnTokenResult gdn_token_step(float (&s)[C::kVecs][4],
                                                         const GdnTileMap<C>& tile,
                                                         const float* k_row, const float* q_row,
                                                         float decay, float beta, float v,
                                                         AfterVec&& after_vec) {
  constexpr int NL = C::kLanesPerCol;
  float kk[C::kVecs][4];
  float kv = 0.0f;
#pragma unroll
  for (int c = 0; c < C::kVecs; ++c) {
    load4(k_row + tile.first_i(c), kk[c]);
#pragma unroll
    for (int e = 0; e < 4; ++e) kv += s[c][e] * kk[c][e];
  }
#pragma unroll
  for (int offset = NL / 2; offset > 0; offset /= 2) kv += __shfl_xor_sync(0xffffffffu, kv, offset);
  const float u = beta * (v - decay * kv);
  float o = 0.0f;
#pragma unroll
  for (int c = 0; c < C::kVecs; ++c) {
    float qq[4];
    load4(q_row + tile.first_i(c), qq);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[c][e] = decay * s[c][e] + kk[c][e] * u;
      o += s[c][e] * qq[e];
    }
    after_vec(c);
  }
#pragma unroll
  for (int offset = NL / 2; offset > 0; offset /= 2) o += __shfl_xor_sync(0xffffffffu, o, offset);
  return {u, o};
}

}  // namespace wyjit_kernels
