// SPDX-License-Identifier: Apache-2.0
// gdn_verify, vk layout: the K tokens in turn on the register-resident state strip.
#pragma once

#include "gdn_verify/gdn_verify_shared.cuh"
#include "gdn_verify/gdn_verify_tile.cuh"

namespace wyjit_kernels {

/// vk: the tokens one after another on the state strip in registers (each column's
/// lanes share a warp, so every reduction is a shuffle and no block barrier is needed). Reads S0
/// once and writes every S_t once, like the WY path, with none of its K x K work.
template <class C, class States>
__device__ __forceinline__ void gdn_verify_tokens_in_turn(
    const GdnVerifyParams& p, const GdnTileMap<C>& tile, const States& states,
    float (&s)[C::kVecs][4], const GdnShared<C>& sh, int j0, long long row0, int vh) {
  using TIo = typename C::TIo;
  constexpr int L = C::kLanesPerCol;
  TIo* out = static_cast<TIo*>(p.tokens.out);
  // NOTE: unrolled by two so that one token's S^T q reduction overlaps the next token's S^T k
  // (K=2 N=128 85.5% -> 99% of copy; a full unroll measured no better and compiles longer).
#pragma unroll 2
  for (int t = 0; t < C::kK; ++t) {
    const float decay = sh.decay[t];
    const float* k_row = sh.k + t * C::kPadDk;
    const float* q_row = sh.q + t * C::kPadDk;
    float kk[C::kVecs][4];
    float kv = 0.0f;
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) {
      load4(k_row + tile.first_i(c), kk[c]);
#pragma unroll
      for (int e = 0; e < 4; ++e) kv += s[c][e] * kk[c][e];
    }
#pragma unroll
    for (int offset = L / 2; offset > 0; offset /= 2)
      kv += __shfl_xor_sync(0xffffffffu, kv, offset);
    // S <- e^{g_t} S;  u_t = beta_t (v_t - S^T k_t);  S <- S + k_t u_t^T
    const float u = sh.beta[t] * (sh.v[t * C::kCols + tile.col] - decay * kv);
    typename C::TState* dst = states.write(t);
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
      if (dst != nullptr) tile.store(dst, j0, s[c], c);
    }
#pragma unroll
    for (int offset = L / 2; offset > 0; offset /= 2) o += __shfl_xor_sync(0xffffffffu, o, offset);
    if (tile.lane_in_col == 0) {
      out[(row0 + t) * p.tokens.o_stride + static_cast<long long>(vh) * C::kDv + j0 + tile.col] =
          from_float<TIo>(o);
    }
  }
}

}  // namespace wyjit_kernels
