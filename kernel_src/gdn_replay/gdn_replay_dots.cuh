// SPDX-License-Identifier: Apache-2.0
// The WY verify's scalars shared by every column of a (sequence, value head): the K x K dots of
// the new tokens and the len x K dots of the live log with them, weighted (decays, beta, the
// log's e^{G_cur - G_j}) into sh.l, sh.b, sh.ld and sh.le. On tensor cores in 3xTF32 from sm_80
// (rows k_t, q_t, then the log's k_j against columns k_s, q_s, every warp busy), by FMA before.
#pragma once

#include "common/mma_tf32.cuh"
#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"
#include "gdn_replay/gdn_replay_params.cuh"

namespace wyjit_kernels {

/// The K x K dots of the new tokens (L: k.k, s < t; B: q.k, s <= t; decays folded in) and the
/// len x K dots of the live log with them (ld: k_j.k_t, le: k_j.q_t, weighted by e^{G_cur-G_j}),
/// 4 lanes per task splitting dk.
template <class C>
__device__ __forceinline__ void replay_dots_fma(const GdnReplayShared<C>& sh, int len) {
  constexpr int K = C::kK;
  constexpr int PDK = C::kPadDk;
  constexpr int kHalf = (K + 1) / 2;             // 2-row blocks per side
  constexpr int kTri = kHalf * (kHalf + 1) / 2;  // lower-triangular blocks, one matrix
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int quarter = lane % 4;
  const unsigned group_mask = 0xfu << (lane & ~3);
  const int tasks = 2 * kTri + len * kHalf;
  // NOTE: a task per 2x2 block: k.k and q.k among the new tokens, then (log entry j, tokens
  // t0, t0+1) with both k and q; row K of sK / sQ is zeros for an odd K.
  for (int task = tid / 4;
       task < ((tasks + C::kThreads / 4 - 1) / (C::kThreads / 4)) * (C::kThreads / 4);
       task += C::kThreads / 4) {
    const bool live = task < tasks;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const float* x0;
    const float* x1;
    const float* y0;
    const float* y1;
    int t0 = 0;
    int s0 = 0;
    bool is_qk = false;
    bool is_log = false;
    if (task < 2 * kTri) {
      is_qk = task >= kTri;
      const int x = task % kTri;
      int rb = static_cast<int>((sqrtf(8.0f * x + 1.0f) - 1.0f) * 0.5f);
      rb += (rb + 1) * (rb + 2) / 2 <= x ? 1 : 0;  // NOTE: guard float rounding of the root
      rb -= rb * (rb + 1) / 2 > x ? 1 : 0;
      const int sb = x - rb * (rb + 1) / 2;
      t0 = 2 * rb;
      s0 = 2 * sb;
      x0 = (is_qk ? sh.tok.q : sh.tok.k) + t0 * PDK;
      x1 = (is_qk ? sh.tok.q : sh.tok.k) + (t0 + 1) * PDK;
      y0 = sh.tok.k + s0 * PDK;
      y1 = sh.tok.k + (s0 + 1) * PDK;
    } else {
      // (j, t0): y0 = k_j; x0, x1 = k_t0, k_t0+1 (acc 0, 2) and q_t0, q_t0+1 (acc 1, 3)
      is_log = true;
      const int x = live ? task - 2 * kTri : 0;
      s0 = x / kHalf;  // j
      t0 = 2 * (x % kHalf);
      y0 = sh.lk + s0 * PDK;
      y1 = y0;
      x0 = sh.tok.k + t0 * PDK;
      x1 = sh.tok.k + (t0 + 1) * PDK;
    }
    if (live) {
      for (int i = quarter * 4; i < C::kDk; i += 16) {
        float a0[4], a1[4], b0[4], b1[4];
        if (is_log) {
          load4(x0 + i, a0);                         // k_t0
          load4(x1 + i, a1);                         // k_t0+1
          load4(sh.tok.q + t0 * PDK + i, b0);        // q_t0
          load4(sh.tok.q + (t0 + 1) * PDK + i, b1);  // q_t0+1
          float kj[4];
          load4(y0 + i, kj);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            acc[0] += kj[e] * a0[e];
            acc[1] += kj[e] * b0[e];
            acc[2] += kj[e] * a1[e];
            acc[3] += kj[e] * b1[e];
          }
        } else {
          load4(x0 + i, a0);
          load4(x1 + i, a1);
          load4(y0 + i, b0);
          load4(y1 + i, b1);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            acc[0] += a0[e] * b0[e];
            acc[1] += a0[e] * b1[e];
            acc[2] += a1[e] * b0[e];
            acc[3] += a1[e] * b1[e];
          }
        }
      }
    }
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      acc[n] += __shfl_xor_sync(group_mask, acc[n], 1);
      acc[n] += __shfl_xor_sync(group_mask, acc[n], 2);
    }
    if (!live || quarter != 0) continue;
    if (is_log) {
      const float w = sh.lw[s0];
      sh.ld[s0 * K + t0] = w * acc[0];
      sh.le[s0 * K + t0] = w * acc[1];
      if (t0 + 1 < K) {
        sh.ld[s0 * K + t0 + 1] = w * acc[2];
        sh.le[s0 * K + t0 + 1] = w * acc[3];
      }
      continue;
    }
#pragma unroll
    for (int n = 0; n < 4; ++n) {
      const int t = t0 + n / 2;
      const int s_ = s0 + n % 2;
      const bool needed = t < K && (is_qk ? s_ <= t : s_ < t);
      if (t < K && s_ < K) {
        const float decayed = needed ? acc[n] * expf(sh.tok.g[t] - sh.tok.g[s_]) : 0.0f;
        if (is_qk) {
          sh.b[t * K + s_] = decayed;
        } else {
          sh.l[t * K + s_] = decayed * sh.tok.beta[t];
        }
      }
    }
  }
}

#if __CUDA_ARCH__ >= 800
/// The same dots as one product R X^T on tensor cores: rows r of R are k_r (r < K), q_{r-K}
/// (r < 2K) and the log's k_{r-2K} (r < 2K + len), columns n of X are k_n (n < K) and q_{n-K};
/// a warp takes a (16-row tile, 8-column tile, dk slice) unit at a time, a k step being 8 dk
/// indices (A's column t and t + 4 at dk 2t and 2t + 1 of the step, so each operand is one
/// 8-byte load a row).
template <class C>
__device__ __forceinline__ void replay_dots_mma(const GdnReplayShared<C>& sh, int len) {
  constexpr int K = C::kK;
  constexpr int PDK = C::kPadDk;
  constexpr int NT = gdn_replay_dot_col_tiles(K);
  constexpr int kMaxSlices = gdn_replay_dot_slices(K, C::kWarps);
  constexpr int kRowsMax = gdn_replay_dot_row_tiles(K, C::kL) * 16;
  constexpr int kSteps = C::kDk / 8;
  static_assert(kSteps % 2 == 0, "whole pairs of k steps");
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int g = (tid % 32) / 4;
  const int t = tid % 4;
  const int rows = 2 * K + len;
  // NOTE: the rows k_t and q_t need only the columns k_s; the columns q_s are needed by the
  // log's rows alone. At K > 8 the product is two: every row against the k columns (kColTilesK
  // tiles), then the log's rows against the q columns, which leaves out the unused k_t.q_s and
  // q_t.q_s (a third of the tiles at K = 16, so one unit a warp instead of up to two). At
  // K <= 8 the warps take one unit each either way and the split only adds its bookkeeping.
  constexpr int kColTilesK = (K + 7) / 8;
  constexpr bool kTwoParts = K > 8 && kColTilesK < NT;
  const int row_tiles = (rows + 15) / 16;
  const int tiles_k = kTwoParts ? row_tiles * kColTilesK : row_tiles * NT;
  const int tiles = kTwoParts ? tiles_k + (len + 15) / 16 * kColTilesK : tiles_k;
  // NOTE: block-uniform (len is the sequence's), so the barrier below is reached by all or none.
  const int spare = C::kWarps / tiles;
  int slices = 1;
  while (2 * slices <= min(kMaxSlices, spare) && kSteps % (4 * slices) == 0) slices *= 2;
  const int steps = kSteps / slices;

  const auto row_of = [&](int r) {
    return r < K       ? sh.tok.k + r * PDK
           : r < 2 * K ? sh.tok.q + (r - K) * PDK
                       : sh.lk + (r - 2 * K) * PDK;
  };
  // One dot in place: decays and beta for the new tokens' K x K (zero where the form has none),
  // the entry's weight for the log's.
  const auto place = [&](int r, int n, float v) {
    if (r < 2 * K) {
      const int tr = r % K;
      if (n >= K) return;
      const bool needed = r < K ? n < tr : n <= tr;
      const float decayed = needed ? v * expf(sh.tok.g[tr] - sh.tok.g[n]) : 0.0f;
      if (r < K) {
        sh.l[tr * K + n] = decayed * sh.tok.beta[tr];
      } else {
        sh.b[tr * K + n] = decayed;
      }
      return;
    }
    const int j = r - 2 * K;
    (n < K ? sh.ld : sh.le)[j * K + n % K] = sh.lw[j] * v;
  };

  for (int unit = warp; unit < tiles * slices; unit += C::kWarps) {
    const int tile = unit / slices;
    const int slice = unit % slices;
    // (first row, first column, columns' end) of the tile: all rows x the k columns, then the
    // log's rows x the q columns (kTwoParts); else all rows x all 2K columns.
    const bool q_part = kTwoParts && tile >= tiles_k;
    const int part_tile = q_part ? tile - tiles_k : tile;
    const int part_cols = kTwoParts ? kColTilesK : NT;
    const int row_base = (q_part ? 2 * K : 0) + (part_tile / part_cols) * 16;
    const int col_base = (q_part ? K : 0) + (part_tile % part_cols) * 8;
    const int col_end = kTwoParts && !q_part ? K : 2 * K;
    const int r0 = row_base + g;
    const int r1 = r0 + 8;
    const int n = col_base + g;
    const bool live0 = r0 < rows;
    const bool live1 = r1 < rows;
    const bool live_n = n < col_end;
    const float* a0_row = live0 ? row_of(r0) : sh.tok.k;
    const float* a1_row = live1 ? row_of(r1) : sh.tok.k;
    const float* b_row = live_n ? row_of(n) : sh.tok.k;
    float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
    // NOTE: two k steps an iteration, one chain each (steps is even): acc indexed at compile
    // time, never through local memory.
    for (int step = 0; step < steps; step += 2) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = (slice * steps + step + h) * 8 + 2 * t;
        const float2 x0 = *reinterpret_cast<const float2*>(a0_row + i);
        const float2 x1 = *reinterpret_cast<const float2*>(a1_row + i);
        const float2 y = *reinterpret_cast<const float2*>(b_row + i);
        const Tf32Pair a[4] = {tf32_split(live0 ? x0.x : 0.0f), tf32_split(live1 ? x1.x : 0.0f),
                               tf32_split(live0 ? x0.y : 0.0f), tf32_split(live1 ? x1.y : 0.0f)};
        const unsigned a_big[4] = {a[0].big, a[1].big, a[2].big, a[3].big};
        const unsigned a_small[4] = {a[0].small, a[1].small, a[2].small, a[3].small};
        const Tf32Pair b0 = tf32_split(live_n ? y.x : 0.0f);
        const Tf32Pair b1 = tf32_split(live_n ? y.y : 0.0f);
        mma_3xtf32_m16n8k8(acc[h], a_big, a_small, b0.big, b1.big, b0.small, b1.small);
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = e < 2 ? r0 : r1;
      const int col = col_base + 2 * t + e % 2;
      const float v = acc[0][e] + acc[1][e];
      if (r >= rows || col >= col_end) continue;
      if (slices == 1) {
        place(r, col, v);
      } else {
        sh.dot_parts[(slice * kRowsMax + r) * (NT * 8) + col] = v;
      }
    }
  }
  if constexpr (kMaxSlices > 1) {
    if (slices > 1) {
      __syncthreads();
      for (int idx = tid; idx < rows * 2 * K; idx += C::kThreads) {
        const int r = idx / (2 * K);
        const int col = idx % (2 * K);
        if (kTwoParts && r < 2 * K && col >= K) continue;  // not computed, not needed
        float v = 0.0f;
        for (int sl = 0; sl < slices; ++sl) v += sh.dot_parts[(sl * kRowsMax + r) * (NT * 8) + col];
        place(r, col, v);
      }
    }
  }
}
#endif

/// The dots: on tensor cores from sm_80, else by FMA.
template <class C>
__device__ __forceinline__ void replay_dots(const GdnReplayShared<C>& sh, int len) {
#if __CUDA_ARCH__ >= 800
  replay_dots_mma(sh, len);
#else
  replay_dots_fma(sh, len);
#endif
}

}  // namespace wyjit_kernels
