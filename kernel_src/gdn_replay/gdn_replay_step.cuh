// SPDX-License-Identifier: Apache-2.0
// The gdn_replay kernels around the verify: commit (every layer's cursors after the step) and
// materialize (S_cur of chosen sequences into a caller's buffer).
#pragma once

#include "common/gdn_tile.cuh"
#include "common/state_refs.cuh"
#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"

namespace wyjit_kernels {

/// One thread per sequence: after a fold (the verify's rule, from the same cursor) the log
/// restarts at the step's entries, else it grows by them. A negative accepted count is padding:
/// the cursor is left as it was.
template <class C>
__global__ void __launch_bounds__(gdn_replay_commit_threads())
    gdn_replay_commit_kernel(const GdnReplayParams p) {
  constexpr int K = C::kK;
  constexpr int L = C::kL;
  const int b = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (b >= p.batch) return;
  const int accepted = p.accepted[b];
  if (accepted < 0) return;
  int* const c = p.commit_cursor + b * p.cursor_stride;
  const GdnCursor cur = read_cursor<K, L>(c);
  const int a = min(accepted, K);
  c[0] = cur.fold ? (cur.base + cur.len) & (L - 1) : cur.base;
  c[1] = cur.fold ? a : cur.len + a;
}

/// S_cur of one (sequence, value head, strip) into write 0 of p.out.
template <class C>
__global__ void __launch_bounds__(C::kThreads)
    gdn_replay_materialize_kernel(const GdnReplayParams p) {
  using TState = typename C::TState;
  constexpr int K = C::kK;
  constexpr int L = C::kL;
  constexpr int DK = C::kDk;
  constexpr int DV = C::kDv;
  extern __shared__ __align__(16) float smem[];
  float* const lk = smem;                // [L][kPadDk]
  float* const lu = lk + L * C::kPadDk;  // [L][kCols]
  float* const lw = lu + L * C::kCols;   // [L]

  const GdnReplayBlock blk = GdnReplayBlock::of<C>(p);
  const int hv_count = p.tokens.num_v_heads;
  const int vh = blk.vh;
  const int b = blk.b;
  const int hk = blk.hk;
  const int j0 = blk.j0;
  const long long head = static_cast<long long>(vh) * DK * DV;
  const StateTiles<TState, 1, C::kAddressing> checkpoint(p.states, b, head);
  if (checkpoint.skip()) return;
  const StateTiles<float, 1, C::kAddressing> log_tiles(p.log, b, 0);
  if (log_tiles.skip()) return;
  // NOTE: the output is write-only: its slot form has no read slots to consult.
  TState* const dst = write_only_tile<TState, C::kAddressing>(p.out, b, head);
  if (dst == nullptr) return;
  const GdnLogTile<C> log{log_tiles.read(), p.tokens.num_k_heads, hv_count};
  const GdnCursor cur = read_cursor<K, L>(p.cursor + b * p.cursor_stride);
  const GdnTileMap<C> tile;

  float s[C::kVecs][4];
  tile.load(checkpoint.read(), j0, s);
  const float g_cur = load_live_log(log, cur, hk, vh, j0, lk, lu, lw);
  copy16_wait();
  __syncthreads();
  apply_live_log<C>(tile, s, expf(g_cur), cur.len, lk, lu, lw);
#pragma unroll
  for (int c = 0; c < C::kVecs; ++c) tile.store(dst, j0, s[c], c);
}

}  // namespace wyjit_kernels
