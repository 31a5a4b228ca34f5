// SPDX-License-Identifier: Apache-2.0
// The K tokens of a GDN launch (classic and replay verify alike): the token inputs of the
// parameter block, and a block's loading of them in two halves, so that a kernel issues every
// global read (these and its state's) before it uses any: issue() puts q, k, the v strip and the
// gates into registers, publish() normalises q and k, scans the gates and writes all of it to
// shared memory (the caller then synchronises the block).
#pragma once

#include "common/state_refs.cuh"
// NOTE: the host includes this file for the parameter block and the geometry only.
#if defined(__CUDACC__)
#include "common/types.cuh"
#endif

namespace wyjit_kernels {

/// Memory layout of one head's state: vk [dv][dk] (dk contiguous) or kv [dk][dv].
enum GdnLayout : int { kLayoutVK = 0, kLayoutKV = 1 };

/// Value-head columns (dv indices) one block owns: vk keeps 16 state elements per thread,
/// kv gives each lane one column of a 32-column strip.
WYJIT_HOST_DEVICE constexpr int gdn_block_cols(int dk, int layout) {
  return layout == kLayoutVK ? 2048 / dk : 32;
}

WYJIT_HOST_DEVICE constexpr int gdn_threads() { return 128; }

WYJIT_HOST_DEVICE constexpr int gdn_padded_dk(int dk) { return dk + 4; }

/// The token inputs of a launch, in every GDN family's parameter block. Strides are in elements.
struct GdnTokenInputs {
  const void* q;         // [batch*K, qk_stride] io, key head h at h*dk
  const void* k;         // [batch*K, qk_stride] io
  const void* v;         // [batch*K, v_stride] io, value head vh at vh*dv
  const float* g;        // [batch*K, gb_stride]
  const float* beta;     // [batch*K, gb_stride]
  const void* a;         // [batch*K, gb_stride] io (fused gating)
  const void* b;         // [batch*K, gb_stride] io (fused gating)
  const float* a_log;    // [HV] (fused gating)
  const float* dt_bias;  // [HV] (fused gating)
  void* out;             // [batch*K, o_stride] io
  long long qk_stride;
  long long v_stride;
  long long gb_stride;
  long long o_stride;
  int num_k_heads;
  int num_v_heads;
  float scale;
};

#if defined(__CUDACC__)

__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

// NOTE: a gate below this floor (-1e30, -inf) is taken as the floor. expf is 0 in fp32 below
// about -103.97, so the state still decays to exactly 0: in turn (e^g) and in the WY form
// (e^{G_t - G_s} of every span over it, the other gates being <= 0; the margin of 8 covers the
// rounding of G and small positive gates). Without it, -inf gives G_t - G_s = -inf - (-inf) =
// NaN, and a huge finite gate swallows every later one (fp32 holds G to about |G| * 6e-8). With
// it, each floored gate adds 112 to |G|: after one, G lies in [64, 128), where an addition rounds
// by at most 3.8e-6, the error a later factor e^{G_t - G_s} then carries. G sums K tokens
// (classic) or, in replay, up to L entries from the checkpoint: with every one floored (64:
// |G| = 7168, 2.4e-4 an addition) only factors of spans after the last floored gate are not 0.
// A comparison, not fmaxf, so that NaN stays NaN.
__device__ __forceinline__ constexpr float gdn_gate_floor() { return -112.0f; }

// NOTE: above this a sum of squares is +inf (or NaN, which the comparison leaves out).
__device__ __forceinline__ constexpr float gdn_float_max() { return 0x1.fffffep127f; }

/// Where publish() puts the tokens.
struct GdnTokenShared {
  float* k;      // [K+1][kPadDk] k rows (normalised); row K is zeros
  float* q;      // [K+1][kPadDk] q rows (normalised) * scale; row K is zeros
  float* g;      // [K] G_t = sum_{s<=t} g_s
  float* eg;     // [K] e^{G_t}
  float* decay;  // [K] e^{g_t}
  float* beta;   // [K]
  float* v;      // [K][kCols] the block's v strip
};

/// One block's K tokens in registers between issue() and publish(). C: the variant's config
/// (kK, kDk, kCols, kThreads, kPadDk, kL2Norm, kGating, TIo).
template <class C>
struct GdnTokenLoads {
  // q/k rows: kRowLanes consecutive lanes share a row, kRowVecs 4-element runs each.
  static constexpr int kRowLanes = C::kDk / 4 < 32 ? C::kDk / 4 : 32;
  static constexpr int kRowVecs = C::kDk / (4 * kRowLanes);
  static constexpr int kRowsPerPass = C::kThreads / kRowLanes;
  static constexpr int kRowPasses = (C::kK + kRowsPerPass - 1) / kRowsPerPass;
  static constexpr int kVVecs = C::kK * (C::kCols / 4);
  static constexpr int kVPasses = (kVVecs + C::kThreads - 1) / C::kThreads;

  // NOTE: the loads are kept as loaded, in the io type, and converted in publish(): converted
  // here, each load's first use would follow it at once, and the thread would wait for the
  // token rows before it issues its state loads (the replay WY verify's profile at K = 4: 8% of
  // its warp samples on those conversions, the state's latency after the tokens').
  Pack4<typename C::TIo> qv[kRowPasses][kRowVecs] = {};
  Pack4<typename C::TIo> kv[kRowPasses][kRowVecs] = {};
  Pack4<typename C::TIo> vv[kVPasses] = {};
  float g = 0.0f;      // token `tid` (warp 0 only): g, or with fused gating raw a
  float beta = 0.0f;   // beta, or raw b
  float a_log = 0.0f;  // fused gating: A_log and dt_bias of vh
  float dt_bias = 0.0f;

  /// Issues the loads of sequence rows row0..row0+K-1, key head hk, value head vh, v columns
  /// j0..j0+kCols-1.
  __device__ __forceinline__ void issue(const GdnTokenInputs& p, long long row0, int hk, int vh,
                                        int j0) {
    using TIo = typename C::TIo;
    constexpr int K = C::kK;
    constexpr int COLS = C::kCols;
    const int tid = static_cast<int>(threadIdx.x);
    const int lane_in_row = tid % kRowLanes;
    const TIo* q = static_cast<const TIo*>(p.q);
    const TIo* k = static_cast<const TIo*>(p.k);
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      const int t = ps * kRowsPerPass + tid / kRowLanes;
      if (t < K) {
        const long long row = (row0 + t) * p.qk_stride + static_cast<long long>(hk) * C::kDk;
#pragma unroll
        for (int r = 0; r < kRowVecs; ++r) {
          const int i = (r * kRowLanes + lane_in_row) * 4;
          qv[ps][r] = *reinterpret_cast<const Pack4<TIo>*>(q + row + i);
          kv[ps][r] = *reinterpret_cast<const Pack4<TIo>*>(k + row + i);
        }
      }
    }
    const TIo* v = static_cast<const TIo*>(p.v);
#pragma unroll
    for (int ps = 0; ps < kVPasses; ++ps) {
      const int idx = ps * C::kThreads + tid;
      if (idx < kVVecs) {
        const int t = idx / (COLS / 4);
        const int j = (idx % (COLS / 4)) * 4;
        vv[ps] = *reinterpret_cast<const Pack4<TIo>*>(v + (row0 + t) * p.v_stride +
                                                      static_cast<long long>(vh) * C::kDv + j0 + j);
      }
    }
    if (tid < K) {
      const long long gb = (row0 + tid) * p.gb_stride + vh;
      if constexpr (C::kGating) {
        g = to_float(static_cast<const TIo*>(p.a)[gb]);
        beta = to_float(static_cast<const TIo*>(p.b)[gb]);
        a_log = p.a_log[vh];
        dt_bias = p.dt_bias[vh];
      } else {
        g = p.g[gb];
        beta = p.beta[gb];
      }
    }
  }

  /// After a row's (q or k of one token) lanes summed its squares to `ss` (+inf: it overflowed)
  /// and `inv` = rsqrtf(ss + eps): every row of the warp that overflowed is scaled by 2^-70 in
  /// `x` (exact) and summed again, and `inv` is its reciprocal norm. The caller runs it for
  /// every lane of the warp.
  // NOTE: a row with a norm above about 1.8e19 (f32 and bf16 io) would be zeroed by
  // rsqrtf(inf) = 0 where the float64 formula normalises it. Scaled by 2^-70 its sum of squares
  // is at most dk * 2^116 and at least 2^-12, so it neither overflows nor needs the epsilon
  // (1e-6 beside a sum >= 3.4e38). A row holding +-inf stays infinite, so rsqrtf gives 0 and
  // the row NaN where the infinity is and 0 elsewhere, as in float64.
  static __device__ __forceinline__ void renormalise(float (&x)[kRowVecs][4], float ss,
                                                     float& inv) {
    const bool overflowed = ss > gdn_float_max();
    const float f = overflowed ? 0x1p-70f : 1.0f;
    float s2 = 0.0f;
#pragma unroll
    for (int r = 0; r < kRowVecs; ++r) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        x[r][e] *= f;
        s2 += x[r][e] * x[r][e];
      }
    }
#pragma unroll
    for (int offset = kRowLanes / 2; offset > 0; offset /= 2) {
      s2 += __shfl_xor_sync(0xffffffffu, s2, offset);
    }
    if (overflowed) inv = rsqrtf(s2);
  }

  /// Gates by an inclusive scan over warp 0; q, k normalised (and q scaled) in registers; all of
  /// it, and the v strip, to `sh`. The caller synchronises the block afterwards.
  __device__ __forceinline__ void publish(const GdnTokenInputs& p, const GdnTokenShared& sh) {
    constexpr int K = C::kK;
    constexpr int PDK = C::kPadDk;
    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid % 32;
    const int lane_in_row = tid % kRowLanes;
    if (tid / 32 == 0) {
      if (tid < K) {
        if constexpr (C::kGating) {
          g = -expf(a_log) * softplus(g + dt_bias);
          beta = 1.0f / (1.0f + expf(-beta));
        }
        g = g < gdn_gate_floor() ? gdn_gate_floor() : g;
      }
      float G = g;
#pragma unroll
      for (int offset = 1; offset < 32; offset *= 2) {
        const float up = __shfl_up_sync(0xffffffffu, G, offset);
        if (lane >= offset) G += up;
      }
      if (lane < K) {
        sh.g[lane] = G;
        sh.eg[lane] = expf(G);
        sh.decay[lane] = expf(g);
        sh.beta[lane] = beta;
      }
    }
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      float qf[kRowVecs][4];
      float kf[kRowVecs][4];
#pragma unroll
      for (int r = 0; r < kRowVecs; ++r) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          qf[r][e] = to_float(qv[ps][r].e[e]);
          kf[r][e] = to_float(kv[ps][r].e[e]);
        }
      }
      float mul_q = p.scale;
      float mul_k = 1.0f;
      if constexpr (C::kL2Norm) {
        float ssq = 0.0f;
        float ssk = 0.0f;
#pragma unroll
        for (int r = 0; r < kRowVecs; ++r) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            ssq += qf[r][e] * qf[r][e];
            ssk += kf[r][e] * kf[r][e];
          }
        }
#pragma unroll
        for (int offset = kRowLanes / 2; offset > 0; offset /= 2) {
          ssq += __shfl_xor_sync(0xffffffffu, ssq, offset);
          ssk += __shfl_xor_sync(0xffffffffu, ssk, offset);
        }
        float inv_q = rsqrtf(ssq + 1e-6f);
        float inv_k = rsqrtf(ssk + 1e-6f);
        // NOTE: a vote of the whole warp (rows of kRowLanes < 32 lanes share one), taken only
        // when a sum overflowed: the common path pays a compare and the vote.
        if (__any_sync(0xffffffffu, ssq > gdn_float_max() || ssk > gdn_float_max())) {
          renormalise(qf, ssq, inv_q);
          renormalise(kf, ssk, inv_k);
        }
        mul_q *= inv_q;
        mul_k *= inv_k;
      }
      const int t = ps * kRowsPerPass + tid / kRowLanes;
      if (t < K) {
#pragma unroll
        for (int r = 0; r < kRowVecs; ++r) {
          const int i = (r * kRowLanes + lane_in_row) * 4;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            qf[r][e] *= mul_q;
            kf[r][e] *= mul_k;
          }
          store4(sh.q + t * PDK + i, qf[r]);
          store4(sh.k + t * PDK + i, kf[r]);
        }
      }
    }
    for (int i = tid; i < C::kDk; i += C::kThreads) {
      sh.q[K * PDK + i] = 0.0f;
      sh.k[K * PDK + i] = 0.0f;
    }
#pragma unroll
    for (int ps = 0; ps < kVPasses; ++ps) {
      const int idx = ps * C::kThreads + tid;
      if (idx < kVVecs) {
#pragma unroll
        for (int e = 0; e < 4; ++e) sh.v[idx * 4 + e] = to_float(vv[ps].e[e]);
      }
    }
  }
};

#endif  // __CUDACC__

}  // namespace wyjit_kernels
