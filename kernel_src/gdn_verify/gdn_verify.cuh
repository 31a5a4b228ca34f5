// SPDX-License-Identifier: Apache-2.0
// Gated delta rule verify of K tokens for one (sequence, value head, column strip).
//
// Per block: the strip S0[:, j0:j0+kCols] of one head's state (dk x dv, column j = value index).
// Every global read is issued first (the strip into registers; q, k, v, gates), q and k are
// normalised in registers and published in shared memory behind one barrier; then
//   vk  the tokens in turn on the strip in registers (gdn_verify_tokens.cuh)
//   kv  the WY form: one pass over the state for all K tokens, a K x K solve, then the K
//       states from the registers (gdn_verify_wy.cuh).
// Either way S0 is read once and every S_t written once. Where the state tiles are: the shared
// state addressing (common/state_refs.cuh) through gdn_verify_states.cuh.
#pragma once

#include "common/gdn_tokens.cuh"
#include "common/types.cuh"
#include "gdn_verify/gdn_verify_shared.cuh"
#include "gdn_verify/gdn_verify_states.cuh"
#include "gdn_verify/gdn_verify_tile.cuh"
#include "gdn_verify/gdn_verify_tokens.cuh"
#include "gdn_verify/gdn_verify_wy.cuh"

namespace wyjit_kernels {

template <class C>
__global__ void __launch_bounds__(C::kThreads) gdn_verify_kernel(const GdnVerifyParams p) {
  using TState = typename C::TState;
  constexpr int K = C::kK;
  constexpr int DK = C::kDk;
  constexpr int DV = C::kDv;
  constexpr int COLS = C::kCols;

  // ---- shared memory (sizes: gdn_smem_bytes) ----
  extern __shared__ __align__(16) float smem[];
  const GdnShared<C> sh(smem);

  // ---- which strip ----
  const int strip = static_cast<int>(blockIdx.x) % C::kStrips;
  const int seq_head = static_cast<int>(blockIdx.x) / C::kStrips;
  const int vh = seq_head % p.tokens.num_v_heads;
  const int b = seq_head / p.tokens.num_v_heads;
  const int hk = vh / (p.tokens.num_v_heads / p.tokens.num_k_heads);
  const int j0 = strip * COLS;
  const long long row0 = static_cast<long long>(b) * K;  // token rows of this sequence
  __shared__ TState* s_state_dst[K];  // table and slot: the tile each token's state goes to
  const GdnStatePointers<TState, K, C::kAddressing> states(
      p.states, b, static_cast<long long>(vh) * DK * DV, s_state_dst);
  if (states.skip()) return;
  const GdnTileMap<C> tile;

  // ---- every global read of the block, issued before any is used: one memory round trip ----
  float s[C::kVecs][4];
  tile.load(states.read(), j0, s);
  GdnTokenLoads<C> tokens;
  tokens.issue(p.tokens, row0, hk, vh, j0);

  // NOTE: after every global read is issued (warp 0 waits for g and beta next anyway), so the
  // wait for the entries delays none of them; the registers are the same as staging right after
  // the state read (see gdn_verify_states.cuh).
  states.stage();

  // ---- gates, q, k (normalised, q scaled) and the v strip to shared memory ----
  tokens.publish(p.tokens, GdnTokenShared{sh.k, sh.q, sh.g, sh.eg, sh.decay, sh.beta, sh.v});
  __syncthreads();

  // NOTE: the WY part is only instantiated for the layout that takes it (NVRTC front-end time
  // in the cold compile).
  if constexpr (C::kLayout == kLayoutVK) {
    gdn_verify_tokens_in_turn<C>(p, tile, states, s, sh, j0, row0, vh);
  } else {
    gdn_verify_wy<C>(p, tile, states, s, sh, j0, row0, vh);
  }
}

}  // namespace wyjit_kernels
