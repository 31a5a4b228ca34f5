// SPDX-License-Identifier: Apache-2.0
// gdn_replay verify of K tokens for one (sequence, value head, column strip) on top of S_cur
// (DESIGN.md, "Replay mode"). The block reads its strip of the checkpoint S0 once into
// registers and the live log (k rows, u strip, G), then
//   in turn (vk)  forms S_cur = e^{G_cur} S0 + sum_j e^{G_cur - G_j} k_j u_j^T in registers,
//                 folds it (writes it as the new checkpoint) when the cursor says so, and runs
//                 the K tokens in turn on it, as the classic vk verify (gdn_replay_tokens.cuh);
//   WY (vk, kv)   without forming S_cur,
//                   S_cur^T x = e^{G_cur} S0^T x + sum_{j live} e^{G_cur - G_j} (k_j . x) u_j:
//                 the 2K dots S0^T k_t, S0^T q_t per column (vk: on tensor cores,
//                 gdn_replay_project.cuh) and the len x K log dots, the K x K solve as the
//                 classic WY form, S_cur in registers only for a fold.
// Either way it writes the outputs and one log entry per token, and a fold rounds once to the
// state dtype. Every column is independent given the shared scalars: blocks own disjoint strips
// and never read what another writes.
#pragma once

#include "common/gdn_tile.cuh"
#include "common/gdn_tokens.cuh"
#include "common/state_refs.cuh"
#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"
#include "gdn_replay/gdn_replay_dots.cuh"
#include "gdn_replay/gdn_replay_mma_tile.cuh"
#include "gdn_replay/gdn_replay_project.cuh"
#include "gdn_replay/gdn_replay_tokens.cuh"

namespace wyjit_kernels {

/// W = (I + L)^-1 diag(beta), C = B W: warp 0, lane s owns column s.
template <class C>
__device__ __forceinline__ void replay_solve_wc(const GdnReplayShared<C>& sh) {
  constexpr int K = C::kK;
  const int sc = static_cast<int>(threadIdx.x) % 32;
  float col[K];
#pragma unroll
  for (int t = 0; t < K; ++t) col[t] = t == sc ? 1.0f : 0.0f;
#pragma unroll
  for (int t = 1; t < K; ++t) {
    float acc = 0.0f;
#pragma unroll
    for (int m = 0; m < t; ++m) acc += sh.l[t * K + m] * col[m];
    if (t > sc) col[t] = -acc;
  }
  if (sc < K) {
    const float beta_s = sh.tok.beta[sc];
#pragma unroll
    for (int t = 0; t < K; ++t) {
      float acc = 0.0f;
#pragma unroll
      for (int m = 0; m <= t; ++m) acc += sh.b[t * K + m] * col[m];
      sh.w[t * K + sc] = col[t] * beta_s;
      sh.c[t * K + sc] = acc * beta_s;
    }
  }
}

/// The parts of the K new log entries no column strip owns: G_t (per value head) and the k rows
/// (per key head), each written by one block.
template <class C>
__device__ __forceinline__ void replay_write_entries(const GdnReplayShared<C>& sh,
                                                     const GdnLogTile<C>& log, const GdnCursor& cur,
                                                     float g_cur, int strip, int vh, int hk,
                                                     int group) {
  constexpr int K = C::kK;
  constexpr int L = C::kL;
  const int tid = static_cast<int>(threadIdx.x);
  // NOTE: G of an entry is measured from the checkpoint it will be read against: the new one
  // when this verify folds.
  if (strip == 0 && tid < K) {
    *log.g((cur.base + cur.len + tid) & (L - 1), vh) =
        cur.fold ? sh.tok.g[tid] : g_cur + sh.tok.g[tid];
  }
  // A key head's k rows, by one block of its group.
  if (strip == 0 && vh == hk * group) {
    constexpr int kRowVecs = C::kDk / 4;
    for (int idx = tid; idx < K * kRowVecs; idx += C::kThreads) {
      const int t = idx / kRowVecs;
      const int i = (idx % kRowVecs) * 4;
      float kk[4];
      load4(sh.tok.k + t * C::kPadDk + i, kk);
      store4(log.k((cur.base + cur.len + t) & (L - 1), hk) + i, kk);
    }
  }
}

/// u_t = sum_{s<=t} W[t][s] x_s and o_t = e^{G_t} r_t + sum_{s<=t} C[t][s] x_s with
/// x_s = v_s - e^{G_s} p_s, for every (t, column) of the strip: out row t and log entry t's u.
/// A thread keeps one column, c = tid % kCols, for tokens t = tid / kCols + pass * kRows, so
/// its x_s are formed once for every pass.
template <class C>
__device__ __forceinline__ void replay_outputs(const GdnReplayParams& p,
                                               const GdnReplayShared<C>& sh,
                                               const GdnLogTile<C>& log, const GdnCursor& cur,
                                               int j0, long long row0, int vh) {
  using TIo = typename C::TIo;
  constexpr int K = C::kK;
  constexpr int L = C::kL;
  constexpr int COLS = C::kCols;
  constexpr int kRows = C::kThreads / COLS;  // tokens a pass
  static_assert(C::kThreads % COLS == 0, "a thread keeps one column over the passes");
  const int tid = static_cast<int>(threadIdx.x);
  const int c = tid % COLS;
  const int t_first = tid / COLS;
  float x[K];
#pragma unroll
  for (int s_ = 0; s_ < K; ++s_)
    x[s_] = sh.tok.v[s_ * COLS + c] - sh.tok.eg[s_] * sh.p[s_ * COLS + c];
  TIo* const out = static_cast<TIo*>(p.tokens.out) + static_cast<long long>(vh) * C::kDv + j0 + c;
  // NOTE: compile-time trip counts, s past the pass's last token left out and s > t predicated
  // off within it (not multiplied by the zeros of W and C there: a later token's infinity must
  // not reach o_t): no loop branches on the run-time t.
#pragma unroll
  for (int pass = 0; pass < (K + kRows - 1) / kRows; ++pass) {
    const int t = pass * kRows + t_first;
    if (t >= K) break;
    float u = 0.0f;
    float o = sh.tok.eg[t] * sh.r[t * COLS + c];
    // NOTE: s <= t is s <= pass * kRows (known after unrolling) or t_first >= s - pass * kRows
    // (one compare per distance, shared by the passes). W and C rows 4 at a time where K is a
    // multiple of 4 (then every row starts 16-byte aligned: GdnReplayShared).
#pragma unroll
    for (int s4 = 0; s4 < K; s4 += 4) {
      if (s4 < (pass + 1) * kRows) {
        float w4[4];
        float c4[4];
        if constexpr (K % 4 == 0) {
          load4(sh.w + t * K + s4, w4);
          load4(sh.c + t * K + s4, c4);
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            w4[e] = s4 + e < K ? sh.w[t * K + s4 + e] : 0.0f;
            c4[e] = s4 + e < K ? sh.c[t * K + s4 + e] : 0.0f;
          }
        }
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int s_ = s4 + e;
          if (s_ < K && s_ < (pass + 1) * kRows &&
              (s_ <= pass * kRows || t_first >= s_ - pass * kRows)) {
            u += w4[e] * x[s_];
            o += c4[e] * x[s_];
          }
        }
      }
    }
    out[(row0 + t) * p.tokens.o_stride] = from_float<TIo>(o);
    log.u((cur.base + cur.len + t) & (L - 1), vh)[j0 + c] = u;
  }
}

// NOTE: at least 16 warps a SM (at most 128 registers a thread): the kernel waits on memory and
// shared-memory latency with few warps to switch to, and 4 blocks of 4 warps instead of 3 took
// 12% off K = 4, N = 128 (docs/replay-performance.md).
template <class C>
__global__ void __launch_bounds__(C::kThreads, 512 / C::kThreads)
    gdn_replay_verify_kernel(const GdnReplayParams p) {
  using TIo = typename C::TIo;
  using TState = typename C::TState;
  constexpr int K = C::kK;
  constexpr int L = C::kL;
  constexpr int DK = C::kDk;
  constexpr int DV = C::kDv;
  const int tid = static_cast<int>(threadIdx.x);

  extern __shared__ __align__(16) float smem[];
  const GdnReplayShared<C> sh(smem);

  // ---- which strip, which tiles ----
  const GdnReplayBlock blk = GdnReplayBlock::of<C>(p);
  const int strip = blk.strip;
  const int hv_count = p.tokens.num_v_heads;
  const int vh = blk.vh;
  const int b = blk.b;
  const int group = p.v_per_k.divisor;
  const int hk = blk.hk;
  const int j0 = blk.j0;
  const long long row0 = static_cast<long long>(b) * K;
  const StateTiles<TState, 1, C::kAddressing> checkpoint(p.states, b,
                                                         static_cast<long long>(vh) * DK * DV);
  if (checkpoint.skip()) return;
  const StateTiles<float, 1, C::kAddressing> log_tiles(p.log, b, 0);
  if (log_tiles.skip()) return;
  const GdnLogTile<C> log{log_tiles.read(), p.tokens.num_k_heads, hv_count};
  const GdnCursor cur = read_cursor<K, L>(p.cursor + b * p.cursor_stride);
  const typename GdnReplayVerifyTile<C>::type tile;

  // ---- every global read issued before any is used: the tokens, the S0 strip, the log ----
  // NOTE: the tokens first, so that they arrive ahead of the strip and their normalising and
  // the dots (shared memory only) overlap the strip's arrival; the log waits on the cursor.
  GdnTokenLoads<C> tokens;
  tokens.issue(p.tokens, row0, hk, vh, j0);
  float s[C::kVecs][4];
  tile.load(checkpoint.read(), j0, s);
  // NOTE: in turn (small batches) copies the whole ring, not waiting for the cursor.
  constexpr bool kRing = C::kPath == kReplayInTurn;
  GdnLiveLogLoads<C, kRing> live;
  live.issue(log, cur, hk, vh, j0, sh.lk, sh.lu);
  tokens.publish(p.tokens, sh.tok);
  // ---- WY, vk, K <= 8: S0's part of the projection while the log is still on its way ----
  GdnReplayEarlyPart<C> early;
  static_cast<void>(early);  // unused without the early part
  if constexpr (gdn_replay_project_early<C>()) {
    __syncthreads();
    replay_project_s0(sh, tile, s, early.acc);
  }
  live.publish(cur, sh.lw);
  copy16_wait();
  __syncthreads();
  const float g_cur = live.g_cur(cur, sh.lw);
  const float eg_cur = expf(g_cur);

  // ---- in turn: S_cur in registers, the fold, the tokens one after another ----
  if constexpr (C::kPath == kReplayInTurn) {
    apply_live_log<C>(tile, s, eg_cur, cur.len, sh.lk, sh.lu, sh.lw, live.slots(cur, g_cur));
    if (cur.fold) {
      TState* const dst = checkpoint.write(0);
      if (dst != nullptr) {
#pragma unroll
        for (int c = 0; c < C::kVecs; ++c) tile.store(dst, j0, s[c], c);
      }
    }
    replay_tokens_in_turn<C>(p, tile, s, sh, log, cur, j0, row0, vh);
    replay_write_entries<C>(sh, log, cur, g_cur, strip, vh, hk, group);
    return;
  }

  // ---- WY: the scalars every column shares ----
  replay_dots(sh, cur.len);
  __syncthreads();
  if (tid < 32) replay_solve_wc(sh);
  if constexpr (gdn_replay_project_early<C>()) {
    replay_project_finish(sh, tile, early.acc, eg_cur, cur.len);
  } else {
    replay_project(sh, tile, s, eg_cur, cur.len);
  }
  __syncthreads();

  // ---- the fold: S_cur as the new checkpoint, from the registers ----
  // NOTE: before the outputs, which need only p, r and the scalars: S0's registers are free
  // for them (K = 16 holds K values of x a thread there).
  if (cur.fold) {
    TState* const dst = checkpoint.write(0);
    if (dst != nullptr) {
      apply_live_log<C>(tile, s, eg_cur, cur.len, sh.lk, sh.lu, sh.lw);
#pragma unroll
      for (int c = 0; c < C::kVecs; ++c) tile.store(dst, j0, s[c], c);
    }
  }

  // ---- u_t and o_t for every (t, column) of the strip; the log entries ----
  replay_outputs<C>(p, sh, log, cur, j0, row0, vh);
  replay_write_entries<C>(sh, log, cur, g_cur, strip, vh, hk, group);
}

}  // namespace wyjit_kernels
