// SPDX-License-Identifier: Apache-2.0
// gdn_verify, WY form (the kv layout, where a column's dk elements are spread over the warps):
// p_t = S0^T k_t and r_t = S0^T q_t for all t from the state strip in registers;
// u = W (v - e^G p), o = e^G r + C (v - e^G p) with K x K matrices W, C formed from the k.k and
// q.k dots alone; then S_t = e^{g_t} S_{t-1} + k_t u_t^T, each S_t written once. Every column of S
// is independent given the shared K x K scalars.
#pragma once

#include "gdn_verify/gdn_verify_shared.cuh"
#include "gdn_verify/gdn_verify_tile.cuh"

namespace wyjit_kernels {

template <class C, class States>
__device__ __forceinline__ void gdn_verify_wy(const GdnVerifyParams& p, const GdnTileMap<C>& tile,
                                              const States& states, float (&s)[C::kVecs][4],
                                              const GdnShared<C>& sh, int j0, long long row0,
                                              int vh) {
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
  static_assert(C::kLayout == kLayoutKV, "the vk layout walks the tokens in turn");
  const float* sK = sh.k;
  const float* sQ = sh.q;
  float* sL = sh.l;
  float* sB = sh.b;
  float* sW = sh.w;
  float* sC = sh.c;
  const float* sG = sh.g;
  const float* sEG = sh.eg;
  const float* sDecay = sh.decay;
  const float* sBeta = sh.beta;
  const float* sV = sh.v;
  float* sP = sh.p;
  float* sR = sh.r;
  float* sU = sh.u;
  float* sRed = sh.red;

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
  __syncthreads();

  // ---- solve: u_t and o_t for every (t, column) of the strip ----
  {
    TIo* out = static_cast<TIo*>(p.tokens.out);
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
      out[(row0 + t) * p.tokens.o_stride + static_cast<long long>(vh) * DV + j0 + c] =
          from_float<TIo>(o);
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
