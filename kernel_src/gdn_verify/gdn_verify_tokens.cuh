// SPDX-License-Identifier: Apache-2.0
// gdn_verify, vk layout: the K tokens in turn on the register-resident state strip.
#pragma once

#include "common/gdn_token_step.cuh"
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
  TIo* out = static_cast<TIo*>(p.tokens.out);
  // NOTE: unrolled by two so that one token's S^T q reduction overlaps the next token's S^T k
  // (K=2 N=128 85.5% -> 99% of copy; a full unroll measured no better and compiles longer).
#pragma unroll 2
  for (int t = 0; t < C::kK; ++t) {
    typename C::TState* dst = states.write(t);
    const GdnTokenResult r =
        gdn_token_step<C>(s, tile, sh.k + t * C::kPadDk, sh.q + t * C::kPadDk, sh.decay[t],
                          sh.beta[t], sh.v[t * C::kCols + tile.col], [&](int c) {
                            if (dst != nullptr) tile.store(dst, j0, s[c], c);
                          });
    if (tile.lane_in_col == 0) {
      out[(row0 + t) * p.tokens.o_stride + static_cast<long long>(vh) * C::kDv + j0 + tile.col] =
          from_float<TIo>(r.o);
    }
  }
}

}  // namespace wyjit_kernels
