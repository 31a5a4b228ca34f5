// SPDX-License-Identifier: Apache-2.0
// gdn_replay verify, vk layout: S_cur formed in registers from the checkpoint strip and the live
// log, then the K tokens in turn on it, as the classic vk verify does, writing each token's log
// entry (u_t) where the classic kernel writes its state.
#pragma once

#include "common/gdn_tile.cuh"
#include "common/gdn_token_step.cuh"
#include "common/gdn_tokens.cuh"
#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"

namespace wyjit_kernels {

/// The tokens one after another on the strip of S_cur in registers (`s`). u_t is the same value
/// the WY form solves for (u_t = beta_t (v_t - S_{t-1}^T k_t) after the decay), so the entries
/// are those of DESIGN's log; each column's lanes share a warp, so every reduction is a shuffle.
template <class C>
__device__ __forceinline__ void replay_tokens_in_turn(
    const GdnReplayParams& p, const GdnTileMap<C>& tile, float (&s)[C::kVecs][4],
    const GdnReplayShared<C>& sh, const GdnLogTile<C>& log, const GdnCursor& cur, int j0,
    long long row0, int vh) {
  using TIo = typename C::TIo;
  TIo* out = static_cast<TIo*>(p.tokens.out);
  // NOTE: unrolled by two, as the classic vk verify: one token's S^T q reduction overlaps the
  // next token's S^T k.
#pragma unroll 2
  for (int t = 0; t < C::kK; ++t) {
    const GdnTokenResult r = gdn_token_step<C>(
        s, tile, sh.tok.k + t * C::kPadDk, sh.tok.q + t * C::kPadDk, sh.tok.decay[t],
        sh.tok.beta[t], sh.tok.v[t * C::kCols + tile.col], [](int) {});
    if (tile.lane_in_col == 0) {
      out[(row0 + t) * p.tokens.o_stride + static_cast<long long>(vh) * C::kDv + j0 + tile.col] =
          from_float<TIo>(r.o);
      log.u((cur.base + cur.len + t) & (C::kL - 1), vh)[j0 + tile.col] = r.u;
    }
  }
}

}  // namespace wyjit_kernels
