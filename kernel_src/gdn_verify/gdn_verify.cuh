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

#include "common/types.cuh"
#include "gdn_verify/gdn_verify_shared.cuh"
#include "gdn_verify/gdn_verify_states.cuh"
#include "gdn_verify/gdn_verify_tile.cuh"
#include "gdn_verify/gdn_verify_tokens.cuh"
#include "gdn_verify/gdn_verify_wy.cuh"

namespace wyjit_kernels {

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

  // ---- shared memory (sizes: gdn_smem_bytes) ----
  extern __shared__ __align__(16) float smem[];
  const GdnShared<C> sh(smem);
  float* sK = sh.k;
  float* sQ = sh.q;
  float* sG = sh.g;
  float* sEG = sh.eg;
  float* sDecay = sh.decay;
  float* sBeta = sh.beta;
  float* sV = sh.v;

  // ---- which strip ----
  const int strip = static_cast<int>(blockIdx.x) % C::kStrips;
  const int seq_head = static_cast<int>(blockIdx.x) / C::kStrips;
  const int vh = seq_head % p.num_v_heads;
  const int b = seq_head / p.num_v_heads;
  const int hk = vh / (p.num_v_heads / p.num_k_heads);
  const int j0 = strip * COLS;
  const long long row0 = static_cast<long long>(b) * K;  // token rows of this sequence
  __shared__ TState* s_state_dst[K];  // table and slot: the tile each token's state goes to
  const GdnStatePointers<TState, K, C::kAddressing> states(
      p.states, b, static_cast<long long>(vh) * DK * DV, s_state_dst);
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

  // NOTE: after every global read is issued (warp 0 waits for g and beta next anyway), so the
  // wait for the entries delays none of them; the registers are the same as staging right after
  // the state read (see gdn_state_addressing.cuh).
  states.stage();

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

  // NOTE: the WY part is only instantiated for the layout that takes it (NVRTC front-end time
  // in the cold compile).
  if constexpr (C::kLayout == kLayoutVK) {
    gdn_verify_tokens_in_turn<C>(p, tile, states, s, sh, j0, row0, vh);
  } else {
    gdn_verify_wy<C>(p, tile, states, s, sh, j0, row0, vh);
  }
}

}  // namespace wyjit_kernels
