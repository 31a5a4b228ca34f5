// SPDX-License-Identifier: Apache-2.0
// WY-form gated delta rule verify of K tokens for one (sequence, value head, column strip).
//
// Per block: the strip S0[:, j0:j0+kCols] of one head's state (dk x dv, column j = value index).
//   pass 1  read the strip once into registers; p_t = S0^T k_t and r_t = S0^T q_t for all t
//   solve   u = W (v - e^G p), o = e^G r + C (v - e^G p), with K x K matrices W, C formed from
//           the k.k and q.k dots alone (they need no state, so they overlap the state load)
//   pass 2  S_t = e^{g_t} S_{t-1} + k_t u_t^T from the registers; write every S_t once
// Every column of S is independent given the shared K x K scalars, hence the column strips.
#pragma once

#include "gdn_state_addressing.cuh"
#include "gdn_verify_params.cuh"
#include "wyjit_types.cuh"

namespace wyjit_kernels {

template <int K_, int Dk_, int Dv_, typename TIo_, typename TState_, int Layout_, int Addressing_,
          bool L2Norm_, bool Gating_>
struct GdnVerifyConfig {
  using TIo = TIo_;
  using TState = TState_;
  static constexpr int kK = K_;
  static constexpr int kDk = Dk_;
  static constexpr int kDv = Dv_;
  static constexpr int kLayout = Layout_;
  static constexpr int kAddressing = Addressing_;
  static constexpr bool kL2Norm = L2Norm_;
  static constexpr bool kGating = Gating_;

  static constexpr int kThreads = gdn_threads();
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kCols = gdn_block_cols(kDk, kLayout);  // value columns per block
  static constexpr int kStrips = kDv / kCols;                 // blocks per head
  static constexpr int kPadDk = gdn_padded_dk(kDk);           // smem row pitch of k and q
  // vk: a column is a contiguous dk row shared by kLanesPerCol lanes;
  // kv: one lane per column, the 4 warps split dk.
  static constexpr int kLanesPerCol = kLayout == kLayoutVK ? kThreads / kCols : 1;
  static constexpr int kElems = kCols * kDk / kThreads;  // state elements per thread
  static constexpr int kVecs = kElems / 4;
  static constexpr bool kSequential = gdn_sequential(kK, kLayout);

  static_assert(kK >= 1 && kK <= 32, "K in 1..32");
  static_assert(kDv % kCols == 0, "dv must be a multiple of the block's column strip");
  static_assert(kElems % 4 == 0, "state elements per thread come in fours");
  static_assert(kLayout == kLayoutKV || 32 % kLanesPerCol == 0, "a column's lanes share a warp");
};

/// Which state elements a thread owns: one column `col` of the strip and kVecs runs of 4
/// consecutive dk indices starting at first_i(c).
template <class C>
struct GdnTileMap {
  int col;
  int lane_in_col;  // vk only
  int warp;         // kv only

  __device__ __forceinline__ GdnTileMap() {
    const int tid = static_cast<int>(threadIdx.x);
    if constexpr (C::kLayout == kLayoutVK) {
      col = tid / C::kLanesPerCol;
      lane_in_col = tid % C::kLanesPerCol;
      warp = 0;
    } else {
      col = tid % 32;
      lane_in_col = 0;
      warp = tid / 32;
    }
  }
  __device__ __forceinline__ int first_i(int c) const {
    if constexpr (C::kLayout == kLayoutVK) return (c * C::kLanesPerCol + lane_in_col) * 4;
    return warp * (C::kDk / C::kWarps) + c * 4;
  }
  /// Loads this thread's elements of the strip starting at column j0 of head tile `src`.
  template <typename T>
  __device__ __forceinline__ void load(const T* src, int j0, float (&s)[C::kVecs][4]) const {
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) {
      if constexpr (C::kLayout == kLayoutVK) {
        load4(src + static_cast<long long>(j0 + col) * C::kDk + first_i(c), s[c]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[c][e] = to_float(src[static_cast<long long>(first_i(c) + e) * C::kDv + j0 + col]);
        }
      }
    }
  }
  template <typename T>
  __device__ __forceinline__ void store(T* dst, int j0, const float (&s)[4], int c) const {
    if constexpr (C::kLayout == kLayoutVK) {
      store4_global(dst + static_cast<long long>(j0 + col) * C::kDk + first_i(c), s);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        dst[static_cast<long long>(first_i(c) + e) * C::kDv + j0 + col] = from_float<T>(s[e]);
      }
    }
  }
};

/// vk, small K: the tokens one after another on the state strip in registers (each column's
/// lanes share a warp, so every reduction is a shuffle and no block barrier is needed). Reads S0
/// once and writes every S_t once, like the WY path, with none of its K x K work.
template <class C, class States>
__device__ __forceinline__ void gdn_verify_tokens_in_turn(
    const GdnVerifyParams& p, const GdnTileMap<C>& tile, const States& states,
    float (&s)[C::kVecs][4], const float* sK, const float* sQ, const float* sV, const float* sDecay,
    const float* sBeta, int j0, long long row0, int vh) {
  using TIo = typename C::TIo;
  constexpr int L = C::kLanesPerCol;
  TIo* out = static_cast<TIo*>(p.out);
  // NOTE: unrolled by two so that one token's S^T q reduction overlaps the next token's S^T k
  // (K=2 N=128 85.5% -> 99% of copy; a full unroll measured no better and compiles longer).
#pragma unroll 2
  for (int t = 0; t < C::kK; ++t) {
    const float decay = sDecay[t];
    const float* k_row = sK + t * C::kPadDk;
    const float* q_row = sQ + t * C::kPadDk;
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
    const float u = sBeta[t] * (sV[t * C::kCols + tile.col] - decay * kv);
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
      out[(row0 + t) * p.o_stride + static_cast<long long>(vh) * C::kDv + j0 + tile.col] =
          from_float<TIo>(o);
    }
  }
}

__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

template <class C>
__global__ void __launch_bounds__(C::kThreads) gdn_verify_kernel(const GdnVerifyParams p) {
  using TIo = typename C::TIo;
  using TState = typename C::TState;
  constexpr int K = C::kK;
  constexpr int DK = C::kDk;
  constexpr int DV = C::kDv;
  constexpr int COLS = C::kCols;
  constexpr int PDK = C::kPadDk;
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;

  // ---- shared memory carve-up (sizes: gdn_smem_bytes) ----
  extern __shared__ __align__(16) float smem[];
  float* sK = smem;                // [K+1][PDK] k rows (normalised); row K is zeros
  float* sQ = sK + (K + 1) * PDK;  // [K+1][PDK] q rows (normalised) * scale; row K is zeros
  float* sL = sQ + (K + 1) * PDK;  // [K][K] beta_t e^{G_t-G_s} k_s.k_t, s < t
  float* sB = sL + K * K;          // [K][K] e^{G_t-G_s} k_s.q_t, s <= t
  float* sW = sB + K * K;          // [K][K] (I + L)^-1 diag(beta)
  float* sC = sW + K * K;          // [K][K] B W
  float* sG = sC + K * K;          // [K] G_t = sum_{s<=t} g_s
  float* sEG = sG + K;             // [K] e^{G_t}
  float* sDecay = sEG + K;         // [K] e^{g_t}
  float* sBeta = sDecay + K;       // [K]
  float* sV = sBeta + K;           // [K][COLS] v strip
  float* sP = sV + K * COLS;       // [K][COLS] S0^T k_t
  float* sR = sP + K * COLS;       // [K][COLS] S0^T q_t
  float* sU = sR + K * COLS;       // [K][COLS] u_t
  float* sRed = sU + K * COLS;     // kv: [warps][2K][COLS] partial dots

  // ---- which strip ----
  const int strip = static_cast<int>(blockIdx.x) % C::kStrips;
  const int seq_head = static_cast<int>(blockIdx.x) / C::kStrips;
  const int vh = seq_head % p.num_v_heads;
  const int b = seq_head / p.num_v_heads;
  const int hk = vh / (p.num_v_heads / p.num_k_heads);
  const int j0 = strip * COLS;
  const long long row0 = static_cast<long long>(b) * K;  // token rows of this sequence
  const GdnStatePointers<TState, K, C::kAddressing> states(p, b, vh,
                                                           static_cast<long long>(DK) * DV);
  if (states.skip()) return;
  const GdnTileMap<C> tile;

  // ---- every global read of the block, issued before any is used: one memory round trip ----
  // q/k rows: kRowLanes consecutive lanes share a row, kRowVecs 4-element runs each.
  constexpr int kRowLanes = DK / 4 < 32 ? DK / 4 : 32;
  constexpr int kRowVecs = DK / (4 * kRowLanes);
  constexpr int kRowsPerPass = C::kThreads / kRowLanes;
  constexpr int kRowPasses = (K + kRowsPerPass - 1) / kRowsPerPass;
  constexpr int kVVecs = K * (COLS / 4);
  constexpr int kVPasses = (kVVecs + C::kThreads - 1) / C::kThreads;
  const int lane_in_row = tid % kRowLanes;

  float s[C::kVecs][4];
  tile.load(states.read(), j0, s);
  float qv[kRowPasses][kRowVecs][4] = {};
  float kv[kRowPasses][kRowVecs][4] = {};
  {
    const TIo* q = static_cast<const TIo*>(p.q);
    const TIo* k = static_cast<const TIo*>(p.k);
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      const int t = ps * kRowsPerPass + tid / kRowLanes;
      if (t < K) {
        const long long row = (row0 + t) * p.qk_stride + static_cast<long long>(hk) * DK;
#pragma unroll
        for (int r = 0; r < kRowVecs; ++r) {
          const int i = (r * kRowLanes + lane_in_row) * 4;
          load4(q + row + i, qv[ps][r]);
          load4(k + row + i, kv[ps][r]);
        }
      }
    }
  }
  float vv[kVPasses][4] = {};
  {
    const TIo* v = static_cast<const TIo*>(p.v);
#pragma unroll
    for (int ps = 0; ps < kVPasses; ++ps) {
      const int idx = ps * C::kThreads + tid;
      if (idx < kVVecs) {
        const int t = idx / (COLS / 4);
        const int j = (idx % (COLS / 4)) * 4;
        load4(v + (row0 + t) * p.v_stride + static_cast<long long>(vh) * DV + j0 + j, vv[ps]);
      }
    }
  }
  float g = 0.0f;  // token `tid` (warp 0 only)
  float beta = 0.0f;
  if (tid < K) {
    const long long gb = (row0 + tid) * p.gb_stride + vh;
    if constexpr (C::kGating) {
      const float a = to_float(static_cast<const TIo*>(p.a)[gb]);
      const float braw = to_float(static_cast<const TIo*>(p.b)[gb]);
      g = -expf(p.a_log[vh]) * softplus(a + p.dt_bias[vh]);
      beta = 1.0f / (1.0f + expf(-braw));
    } else {
      g = p.g[gb];
      beta = p.beta[gb];
    }
  }

  // ---- gates: G_t by an inclusive scan over warp 0 ----
  if (warp == 0) {
    float G = g;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const float up = __shfl_up_sync(0xffffffffu, G, offset);
      if (lane >= offset) G += up;
    }
    if (lane < K) {
      sG[lane] = G;
      sEG[lane] = expf(G);
      sDecay[lane] = expf(g);
      sBeta[lane] = beta;
    }
  }
  // ---- q, k: normalised (and q scaled) in registers, then to shared memory ----
#pragma unroll
  for (int ps = 0; ps < kRowPasses; ++ps) {
    float mul_q = p.scale;
    float mul_k = 1.0f;
    if constexpr (C::kL2Norm) {
      float ssq = 0.0f;
      float ssk = 0.0f;
#pragma unroll
      for (int r = 0; r < kRowVecs; ++r) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          ssq += qv[ps][r][e] * qv[ps][r][e];
          ssk += kv[ps][r][e] * kv[ps][r][e];
        }
      }
#pragma unroll
      for (int offset = kRowLanes / 2; offset > 0; offset /= 2) {
        ssq += __shfl_xor_sync(0xffffffffu, ssq, offset);
        ssk += __shfl_xor_sync(0xffffffffu, ssk, offset);
      }
      mul_q *= rsqrtf(ssq + 1e-6f);
      mul_k *= rsqrtf(ssk + 1e-6f);
    }
    const int t = ps * kRowsPerPass + tid / kRowLanes;
    if (t < K) {
#pragma unroll
      for (int r = 0; r < kRowVecs; ++r) {
        const int i = (r * kRowLanes + lane_in_row) * 4;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          qv[ps][r][e] *= mul_q;
          kv[ps][r][e] *= mul_k;
        }
        store4(sQ + t * PDK + i, qv[ps][r]);
        store4(sK + t * PDK + i, kv[ps][r]);
      }
    }
  }
  for (int i = tid; i < DK; i += C::kThreads) {
    sQ[K * PDK + i] = 0.0f;
    sK[K * PDK + i] = 0.0f;
  }
#pragma unroll
  for (int ps = 0; ps < kVPasses; ++ps) {
    const int idx = ps * C::kThreads + tid;
    if (idx < kVVecs) {
#pragma unroll
      for (int e = 0; e < 4; ++e) sV[idx * 4 + e] = vv[ps][e];
    }
  }
  __syncthreads();

  if constexpr (C::kSequential) {
    gdn_verify_tokens_in_turn<C>(p, tile, states, s, sK, sQ, sV, sDecay, sBeta, j0, row0, vh);
    return;
  }

  // ---- K x K dots in 2 x 2 blocks, 4 lanes per block, only blocks on or below the diagonal:
  // L (k.k, s < t) and B (q.k, s <= t) with their decays ----
  {
    constexpr int kHalf = (K + 1) / 2;             // 2-row blocks per side
    constexpr int kTri = kHalf * (kHalf + 1) / 2;  // lower-triangular blocks, one matrix
    const int quarter = lane % 4;
    const unsigned group_mask = 0xfu << (lane & ~3);
    for (int task = tid / 4; task < 2 * kTri; task += C::kThreads / 4) {
      const bool is_qk = task >= kTri;
      const int x = task % kTri;
      int rb = static_cast<int>((sqrtf(8.0f * x + 1.0f) - 1.0f) * 0.5f);
      rb += (rb + 1) * (rb + 2) / 2 <= x ? 1 : 0;  // NOTE: guard float rounding of the root
      rb -= rb * (rb + 1) / 2 > x ? 1 : 0;
      const int sb = x - rb * (rb + 1) / 2;
      const int t0 = 2 * rb;
      const int s0 = 2 * sb;
      // Row K of sK / sQ is zeros: an odd K reads it for the missing half of a block.
      const float* x0 = (is_qk ? sQ : sK) + t0 * PDK;
      const float* x1 = (is_qk ? sQ : sK) + (t0 + 1) * PDK;
      const float* y0 = sK + s0 * PDK;
      const float* y1 = sK + (s0 + 1) * PDK;
      float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // (t0,s0) (t0,s0+1) (t0+1,s0) (t0+1,s0+1)
      for (int i = quarter * 4; i < DK; i += 16) {
        float a0[4], a1[4], b0[4], b1[4];
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
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        acc[n] += __shfl_xor_sync(group_mask, acc[n], 1);
        acc[n] += __shfl_xor_sync(group_mask, acc[n], 2);
      }
      if (quarter == 0) {
#pragma unroll
        for (int n = 0; n < 4; ++n) {
          const int t = t0 + n / 2;
          const int s_ = s0 + n % 2;
          const bool needed = t < K && (is_qk ? s_ <= t : s_ < t);
          if (t < K && s_ < K) {
            // NOTE: exponent of a difference, never a ratio of exponentials: G falls without
            // bound.
            const float decayed = needed ? acc[n] * expf(sG[t] - sG[s_]) : 0.0f;
            if (is_qk) {
              sB[t * K + s_] = decayed;
            } else {
              sL[t * K + s_] = decayed * sBeta[t];
            }
          }
        }
      }
    }
  }
  __syncthreads();

  // ---- W = (I + L)^-1 diag(beta), C = B W: warp 0, lane s owns column s ----
  // NOTE: needs no state, so warp 0 does it while the other warps wait on their state loads.
  if (warp == 0) {
    const int sc = lane;
    float col[K];
#pragma unroll
    for (int t = 0; t < K; ++t) col[t] = t == sc ? 1.0f : 0.0f;
#pragma unroll
    for (int t = 1; t < K; ++t) {
      float acc = 0.0f;
#pragma unroll
      for (int m = 0; m < t; ++m) acc += sL[t * K + m] * col[m];
      if (t > sc) col[t] = -acc;
    }
    if (sc < K) {
      const float beta_s = sBeta[sc];
#pragma unroll
      for (int t = 0; t < K; ++t) {
        float acc = 0.0f;
#pragma unroll
        for (int m = 0; m <= t; ++m) acc += sB[t * K + m] * col[m];
        sW[t * K + sc] = col[t] * beta_s;
        sC[t * K + sc] = acc * beta_s;
      }
    }
  }

  // ---- pass 1b: p_t = S0^T k_t, r_t = S0^T q_t for this thread's column ----
  {
    float acc[2 * K];
#pragma unroll
    for (int t = 0; t < K; ++t) {
      float pk = 0.0f;
      float pq = 0.0f;
#pragma unroll
      for (int c = 0; c < C::kVecs; ++c) {
        float kk[4], qq[4];
        load4(sK + t * PDK + tile.first_i(c), kk);
        load4(sQ + t * PDK + tile.first_i(c), qq);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          pk += s[c][e] * kk[e];
          pq += s[c][e] * qq[e];
        }
      }
      acc[t] = pk;
      acc[K + t] = pq;
    }
    if constexpr (C::kLayout == kLayoutVK) {
      // Reduce-scatter over the column's lanes: each step halves what a lane holds, so lane l
      // ends with the totals of x = g * L + l (28 shuffles for K = 16 instead of 96).
      constexpr int L = C::kLanesPerCol;
      constexpr int kGroups = (2 * K + L - 1) / L;
      float v[kGroups][L];
#pragma unroll
      for (int x = 0; x < kGroups * L; ++x) v[x / L][x % L] = x < 2 * K ? acc[x] : 0.0f;
      constexpr int kSteps = L >= 32 ? 5 : L >= 16 ? 4 : L >= 8 ? 3 : L >= 4 ? 2 : L >= 2 ? 1 : 0;
      static_assert(L == (1 << kSteps), "lanes per column: a power of two up to 32");
#pragma unroll
      for (int step = 0; step < kSteps; ++step) {
        const int o = (L / 2) >> step;
        const bool upper = (tile.lane_in_col & o) != 0;
#pragma unroll
        for (int gi = 0; gi < kGroups; ++gi) {
#pragma unroll
          for (int r = 0; r < L / 2; ++r) {
            // NOTE: a constant trip count, so that both loops unroll and v stays in registers.
            if (r < o) {
              const float send = upper ? v[gi][r] : v[gi][r + o];
              const float keep = upper ? v[gi][r + o] : v[gi][r];
              v[gi][r] = keep + __shfl_xor_sync(0xffffffffu, send, o);
            }
          }
        }
      }
#pragma unroll
      for (int gi = 0; gi < kGroups; ++gi) {
        const int x = gi * L + tile.lane_in_col;
        if (x < 2 * K) (x < K ? sP : sR)[(x % K) * COLS + tile.col] = v[gi][0];
      }
    } else {
#pragma unroll
      for (int x = 0; x < 2 * K; ++x) sRed[(warp * 2 * K + x) * COLS + tile.col] = acc[x];
      __syncthreads();
      for (int idx = tid; idx < 2 * K * COLS; idx += C::kThreads) {
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < C::kWarps; ++w) sum += sRed[w * 2 * K * COLS + idx];
        (idx < K * COLS ? sP : sR)[idx % (K * COLS)] = sum;
      }
    }
  }
  __syncthreads();

  // ---- solve: u_t and o_t for every (t, column) of the strip ----
  {
    TIo* out = static_cast<TIo*>(p.out);
    for (int idx = tid; idx < K * COLS; idx += C::kThreads) {
      const int t = idx / COLS;
      const int c = idx % COLS;
      float u = 0.0f;
      float o = sEG[t] * sR[idx];
      for (int s_ = 0; s_ <= t; ++s_) {
        const float x = sV[s_ * COLS + c] - sEG[s_] * sP[s_ * COLS + c];
        u += sW[t * K + s_] * x;
        o += sC[t * K + s_] * x;
      }
      sU[idx] = u;
      out[(row0 + t) * p.o_stride + static_cast<long long>(vh) * DV + j0 + c] = from_float<TIo>(o);
    }
  }
  __syncthreads();

  // ---- pass 2: S_t = e^{g_t} S_{t-1} + k_t u_t^T, each state written once ----
  for (int t = 0; t < K; ++t) {
    const float decay = sDecay[t];
    const float u = sU[t * COLS + tile.col];
    TState* dst = states.write(t);
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) {
      float kk[4];
      load4(sK + t * PDK + tile.first_i(c), kk);
#pragma unroll
      for (int e = 0; e < 4; ++e) s[c][e] = decay * s[c][e] + kk[e] * u;
      if (dst != nullptr) tile.store(dst, j0, s[c], c);
    }
  }
}

}  // namespace wyjit_kernels
