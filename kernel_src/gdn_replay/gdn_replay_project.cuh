// SPDX-License-Identifier: Apache-2.0
// The WY verify's projections p_t = S_cur^T k_t and r_t = S_cur^T q_t of its column strip:
// S0's part from the thread's registers (vk: on tensor cores in 3xTF32, a warp's tiles of
// 16 columns against the 2K rows k_0..k_{K-1}, q_0..q_{K-1}; kv: FMAs, a lane a column, summed
// over the warps), then e^{G_cur} and the live log's part (vk with one dk slice: tensor cores
// again, the log's u strip against its dots with the new tokens).
#pragma once

#include "common/gdn_tile.cuh"
#include "common/mma_tf32.cuh"
#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"
#include "gdn_replay/gdn_replay_mma_tile.cuh"

namespace wyjit_kernels {

/// Value x of column c (x < K: p_x, else r_{x-K}) from S0's part: e^{G_cur} s0_part plus the
/// live log's sum_j e^{G_cur - G_j} (k_j . x) u_j[c].
template <class C>
__device__ __forceinline__ void replay_finish_dot(const GdnReplayShared<C>& sh, int x, int c,
                                                  float s0_part, float eg_cur, int len) {
  constexpr int K = C::kK;
  const int t = x % K;
  const float* dots = x < K ? sh.ld : sh.le;
  float v = eg_cur * s0_part;
  for (int j = 0; j < len; ++j) v += dots[j * K + t] * sh.lu[j * C::kCols + c];
  (x < K ? sh.p : sh.r)[t * C::kCols + c] = v;
}

/// S0's parts from kParts groups of threads (in sh.red, [part][2K][kCols]) summed and finished.
template <class C, int kParts>
__device__ __forceinline__ void replay_finish_parts(const GdnReplayShared<C>& sh, float eg_cur,
                                                    int len) {
  constexpr int kValues = 2 * C::kK * C::kCols;
  __syncthreads();
  for (int idx = static_cast<int>(threadIdx.x); idx < kValues; idx += C::kThreads) {
    float sum = 0.0f;
#pragma unroll
    for (int part = 0; part < kParts; ++part) sum += sh.red[part * kValues + idx];
    replay_finish_dot(sh, idx / C::kCols, idx % C::kCols, sum, eg_cur, len);
  }
}

/// Row n of the projection's right side at dk index i.. i+3: k_n (n < K), q_{n-K} (n < 2K),
/// zeros past 2K (the last tile's padding).
template <class C>
__device__ __forceinline__ void replay_x4(const GdnReplayShared<C>& sh, int n, int i,
                                          float (&x)[4]) {
  constexpr int K = C::kK;
  const bool real = n < 2 * K;
  load4((n < K ? sh.tok.k + n * C::kPadDk : sh.tok.q + (real ? n - K : 0) * C::kPadDk) + i, x);
#pragma unroll
  for (int e = 0; e < 4; ++e) x[e] = real ? x[e] : 0.0f;
}

#if __CUDA_ARCH__ >= 800
/// acc += the live log's part, sum_j lu[j][col] D[j][x] with D[j][x] = e^{G_cur - G_j} (k_j . x)
/// (sh.ld for x < K, sh.le for q), on tensor cores in 3xTF32: k steps of 8 log entries, entries
/// past len as zeros.
template <class C, int NT>
__device__ __forceinline__ void replay_log_mma(const GdnReplayShared<C>& sh,
                                               const GdnReplayMmaTile<C>& tile,
                                               float (&acc)[GdnReplayMmaTile<C>::kMTiles][NT][4],
                                               int len) {
  using Tile = GdnReplayMmaTile<C>;
  constexpr int K = C::kK;
  const auto lu = [&](int j, int col) { return j < len ? sh.lu[j * C::kCols + col] : 0.0f; };
  const auto dot = [&](int j, int n) {
    if (j >= len || n >= 2 * K) return 0.0f;
    return n < K ? sh.ld[j * K + n] : sh.le[j * K + n - K];
  };
  for (int jb = 0; jb < len; jb += 8) {
    const int j0 = jb + tile.t;
    const int j1 = j0 + 4;
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt) {
      const int col_g = tile.col_at(2 * mt);
      const int col_g8 = tile.col_at(2 * mt + 1);
      const Tf32Pair a[4] = {tf32_split(lu(j0, col_g)), tf32_split(lu(j0, col_g8)),
                             tf32_split(lu(j1, col_g)), tf32_split(lu(j1, col_g8))};
      const unsigned a_big[4] = {a[0].big, a[1].big, a[2].big, a[3].big};
      const unsigned a_small[4] = {a[0].small, a[1].small, a[2].small, a[3].small};
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int n = 8 * nt + tile.g;
        const Tf32Pair b0 = tf32_split(dot(j0, n));
        const Tf32Pair b1 = tf32_split(dot(j1, n));
        mma_3xtf32_m16n8k8(acc[mt][nt], a_big, a_small, b0.big, b1.big, b0.small, b1.small);
      }
    }
  }
}
#endif

/// vk: a thread's part of S0^T X, acc[tile][n tile] of the warp's 16 x 8 blocks (columns of
/// the tile, rows 8 nt .. 8 nt + 7 of X) in the mma accumulator layout.
template <class C>
struct GdnReplayProjection {
  static constexpr int kNTiles = (2 * C::kK + 7) / 8;
  using Acc = float[GdnReplayMmaTile<C>::kMTiles][kNTiles][4];
};

/// vk: S0's part of the projection into `out`, on tensor cores (summed over kChains
/// accumulators: independent chains of mma, where the tiles alone give too few). It needs the
/// tokens in shared memory and the thread's S0 registers, nothing of the log, so a verify can
/// run it while the log is still on its way.
template <class C>
__device__ __forceinline__ void replay_project_s0(const GdnReplayShared<C>& sh,
                                                  const GdnReplayMmaTile<C>& tile,
                                                  const float (&s)[C::kVecs][4],
                                                  typename GdnReplayProjection<C>::Acc& out) {
  using Tile = GdnReplayMmaTile<C>;
  constexpr int NT = GdnReplayProjection<C>::kNTiles;
  constexpr int kTiles = Tile::kMTiles * NT;
  constexpr int kChains = kTiles >= 4 ? 1 : 4 / kTiles;
  float acc[kChains][Tile::kMTiles][NT][4];
#pragma unroll
  for (int ch = 0; ch < kChains; ++ch) {
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[ch][mt][nt][e] = 0.0f;
      }
    }
  }
#if __CUDA_ARCH__ >= 800
  // NOTE: a bf16 checkpoint's S0 is exact in TF32 (its small part 0): no split, two products.
  constexpr bool kExactA = IsBf16<typename C::TState>::value;
#pragma unroll
  for (int blk = 0; blk < Tile::kBlks; ++blk) {
    const int i = tile.first_i(blk * Tile::kColSlots);
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt) {
      // A of dk block (blk, h) for h = 0, 1: column g (vector c), column g + 8 (c + 1).
      const int c = blk * Tile::kColSlots + 2 * mt;
      unsigned a_big[2][4];
      unsigned a_small[2][4];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float a[4] = {s[c][2 * h], s[c + 1][2 * h], s[c][2 * h + 1], s[c + 1][2 * h + 1]};
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          if constexpr (kExactA) {
            a_big[h][r] = __float_as_uint(a[r]);
          } else {
            const Tf32Pair split = tf32_split(a[r]);
            a_big[h][r] = split.big;
            a_small[h][r] = split.small;
          }
        }
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        // NOTE: B is read and split per use, not held for every n tile: registers, at K >= 8.
        float xf[4];
        replay_x4(sh, 8 * nt + tile.g, i, xf);
        Tf32Pair x[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) x[e] = tf32_split(xf[e]);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if constexpr (kExactA) {
            mma_2xtf32_m16n8k8(acc[(2 * blk + h) % kChains][mt][nt], a_big[h], x[2 * h].big,
                               x[2 * h + 1].big, x[2 * h].small, x[2 * h + 1].small);
          } else {
            mma_3xtf32_m16n8k8(acc[(2 * blk + h) % kChains][mt][nt], a_big[h], a_small[h],
                               x[2 * h].big, x[2 * h + 1].big, x[2 * h].small, x[2 * h + 1].small);
          }
        }
      }
    }
  }
#pragma unroll
  for (int ch = 1; ch < kChains; ++ch) {
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[0][mt][nt][e] += acc[ch][mt][nt][e];
      }
    }
  }
#else
  // NOTE: no TF32 tensor cores before sm_80: the same sums by FMA over the quad of lanes that
  // shares the columns, each lane keeping the values the accumulator layout gives it.
#pragma unroll
  for (int slot = 0; slot < Tile::kColSlots; ++slot) {
#pragma unroll
    for (int x = 0; x < 2 * C::kK; ++x) {
      float part = 0.0f;
#pragma unroll
      for (int blk = 0; blk < Tile::kBlks; ++blk) {
        const int c = blk * Tile::kColSlots + slot;
        float xf[4];
        replay_x4(sh, x, tile.first_i(c), xf);
#pragma unroll
        for (int e = 0; e < 4; ++e) part += s[c][e] * xf[e];
      }
      part += __shfl_xor_sync(0xffffffffu, part, 1);
      part += __shfl_xor_sync(0xffffffffu, part, 2);
      if (((x / 2) % 4) == tile.t) acc[0][slot / 2][x / 8][2 * (slot % 2) + x % 2] = part;
    }
  }
#endif
#pragma unroll
  for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) out[mt][nt][e] = acc[0][mt][nt][e];
    }
  }
}

/// The rest of the projection from S0's part `acc`: e^{G_cur} and the live log's part (on
/// tensor cores with one dk slice; it needs the log's dots, sh.ld and sh.le), into sh.p and
/// sh.r (split dk: through sh.red and replay_finish_parts).
template <class C>
__device__ __forceinline__ void replay_project_finish(const GdnReplayShared<C>& sh,
                                                      const GdnReplayMmaTile<C>& tile,
                                                      typename GdnReplayProjection<C>::Acc& acc,
                                                      float eg_cur, int len) {
  using Tile = GdnReplayMmaTile<C>;
  constexpr int K = C::kK;
  constexpr int NT = GdnReplayProjection<C>::kNTiles;
#if __CUDA_ARCH__ >= 800
  constexpr bool kLogOnTensorCores = Tile::kSlices == 1;
#else
  constexpr bool kLogOnTensorCores = false;
#endif
  if constexpr (kLogOnTensorCores) {
#pragma unroll
    for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mt][nt][e] *= eg_cur;
      }
    }
#if __CUDA_ARCH__ >= 800
    replay_log_mma<C, NT>(sh, tile, acc, len);
#endif
  }
#pragma unroll
  for (int mt = 0; mt < Tile::kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int x = 8 * nt + 2 * tile.t + e % 2;
        const int col = tile.col_at(2 * mt + e / 2);
        if (x >= 2 * K) continue;
        if constexpr (kLogOnTensorCores) {
          (x < K ? sh.p : sh.r)[(x % K) * C::kCols + col] = acc[mt][nt][e];
        } else if constexpr (Tile::kSlices == 1) {
          replay_finish_dot(sh, x, col, acc[mt][nt][e], eg_cur, len);
        } else {
          sh.red[(tile.slice * 2 * K + x) * C::kCols + col] = acc[mt][nt][e];
        }
      }
    }
  }
  if constexpr (Tile::kSlices > 1) replay_finish_parts<C, Tile::kSlices>(sh, eg_cur, len);
}

/// Whether a verify runs S0's part of the projection before it waits for the log (the vk WY
/// form with one dk slice, K <= 4): the log's copies, issued only once the cursor arrived, are
/// then in flight behind that work instead of in front of the dots. Measured (N = 128, f32
/// checkpoint): K = 2 132.7 -> 126.5 us, K = 4 143.3 -> 137.7, but K = 8 197.3 -> 204.8 (its
/// 8-warp blocks pay the extra barrier more than they gain); above K = 8 the kernel has no
/// registers to spare for holding the part across the dots and the solve. A bf16 checkpoint
/// (half the bytes, an unsplit S0) gains nothing from it: K = 4 129.4 us without, 131.9 with;
/// K = 2 118.0 and 116.5.
template <class C>
__host__ __device__ constexpr bool gdn_replay_project_early() {
  return C::kPath == kReplayWy && C::kLayout == kLayoutVK && C::kK <= 4 &&
         !IsBf16<typename C::TState>::value &&
         gdn_replay_wy_parts(C::kCols, kLayoutVK, C::kWarps) == 1;
}

/// S0's part held between replay_project_s0 and replay_project_finish (nothing without it).
template <class C, bool kEarly = gdn_replay_project_early<C>()>
struct GdnReplayEarlyPart {
  float unused[1];
};
template <class C>
struct GdnReplayEarlyPart<C, true> {
  typename GdnReplayProjection<C>::Acc acc;
};

/// vk: the whole projection, S0's part then the rest.
template <class C>
__device__ __forceinline__ void replay_project(const GdnReplayShared<C>& sh,
                                               const GdnReplayMmaTile<C>& tile,
                                               const float (&s)[C::kVecs][4], float eg_cur,
                                               int len) {
  typename GdnReplayProjection<C>::Acc acc;
  replay_project_s0(sh, tile, s, acc);
  replay_project_finish(sh, tile, acc, eg_cur, len);
}

/// kv: S0's part by FMA, a lane a column and a warp a dk slice, summed over the warps (the
/// overload for GdnTileMap; the in-turn kernel instantiates it but never runs it).
template <class C>
__device__ __forceinline__ void replay_project(const GdnReplayShared<C>& sh,
                                               const GdnTileMap<C>& tile,
                                               const float (&s)[C::kVecs][4], float eg_cur,
                                               int len) {
  constexpr int K = C::kK;
  constexpr int PDK = C::kPadDk;
  const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
  for (int t = 0; t < K; ++t) {
    float pk = 0.0f;
    float pq = 0.0f;
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) {
      float kk[4], qq[4];
      load4(sh.tok.k + t * PDK + tile.first_i(c), kk);
      load4(sh.tok.q + t * PDK + tile.first_i(c), qq);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        pk += s[c][e] * kk[e];
        pq += s[c][e] * qq[e];
      }
    }
    sh.red[(warp * 2 * K + t) * C::kCols + tile.col] = pk;
    sh.red[(warp * 2 * K + K + t) * C::kCols + tile.col] = pq;
  }
  replay_finish_parts<C, C::kWarps>(sh, eg_cur, len);
}

}  // namespace wyjit_kernels
