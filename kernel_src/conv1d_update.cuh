// SPDX-License-Identifier: Apache-2.0
// K-token causal depthwise conv1d update for one (sequence, block of channels).
//
// Per channel c, with the W-1 previous inputs h (oldest first) and the K new inputs x_t:
//   z = [h_0 .. h_{W-2}, x_0 .. x_{K-1}]                 (the window, W-1+K columns)
//   y_t = silu(bias_c + sum_w weight[c][w] * z[t + w])  (z[t .. t+W-1] ends at x_t)
// intermediate: the state after token t is z[t+1 .. t+W-1], written for every t;
// window:       all of z is written, so the state after token a-1 is columns [a, a+W-1).
//
// Every global access is coalesced: the block stages x, y and the state through shared memory,
// so the [channels][columns] state rows become contiguous runs, and moves 4 elements at a time
// wherever the pointers and strides allow.
#pragma once

#include "conv1d_state_addressing.cuh"
#include "conv1d_update_params.cuh"
#include "wyjit_types.cuh"

namespace wyjit_kernels {

template <int K_, int W_, typename TIo_, typename TW_, int Addressing_, int Rollback_, bool Bias_,
          bool Silu_>
struct Conv1dUpdateConfig {
  using TIo = TIo_;  // x, y and the conv state
  using TW = TW_;    // weight and bias
  static constexpr int kK = K_;
  static constexpr int kW = W_;
  static constexpr int kAddressing = Addressing_;
  static constexpr int kRollback = Rollback_;
  static constexpr bool kBias = Bias_;
  static constexpr bool kSilu = Silu_;

  static constexpr int kThreads = conv1d_threads();
  static constexpr int kChannels = conv1d_block_channels();  // one per thread
  static constexpr int kHist = kW - 1;                       // state columns read
  static constexpr int kCols = kHist + kK;                   // window columns
  // NOTE: an odd pitch keeps the column walks of the state stores free of bank conflicts.
  static constexpr int kPitch = kChannels + 1;  // shared row pitch of x and y

  static_assert(kK >= 1 && kK <= 32, "K in 1..32");
  static_assert(kW >= 2 && kW <= 8, "W in 2..8");
  static_assert(kChannels == kThreads, "one channel per thread");
  static_assert(kChannels % 4 == 0, "rows are moved 4 elements at a time");
};

template <typename T>
__device__ __forceinline__ bool aligned4(const T* p) {
  return reinterpret_cast<unsigned long long>(p) % (4 * sizeof(T)) == 0;
}

/// Writes columns [first, first + kN) of the window z of channels c < nc to `dst` (the tile
/// already offset to the block's first channel): element (c, j) at c*cs + j*js, cs or js 1.
template <class C, int kN>
__device__ __forceinline__ void store_state(typename C::TIo* dst, long long cs, long long js,
                                            int nc, int first, const float* sH, const float* sX) {
  using T = typename C::TIo;
  constexpr int CH = C::kChannels;
  const int tid = static_cast<int>(threadIdx.x);
  const auto z = [&](int c, int col) {
    return col < C::kHist ? sH[c * C::kHist + col] : sX[(col - C::kHist) * C::kPitch + c];
  };
  const int n = nc * kN;
  if (js == 1 && cs == kN && aligned4(dst)) {
    // [channels][cols], rows back to back: one contiguous run of nc*kN elements.
    for (int v = tid; v < n / 4; v += C::kThreads) {
      float f[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = v * 4 + e;
        f[e] = z(i / kN, first + i % kN);
      }
      store4(dst + v * 4, f);
    }
    for (int i = n / 4 * 4 + tid; i < n; i += C::kThreads) {
      dst[i] = from_float<T>(z(i / kN, first + i % kN));
    }
  } else if (js == 1) {
    for (int i = tid; i < n; i += C::kThreads) {
      const int c = i / kN;
      const int j = i % kN;
      dst[c * cs + j] = from_float<T>(z(c, first + j));
    }
  } else if (nc == CH && js % 4 == 0 && aligned4(dst)) {
    // [cols][channels]: every column is a contiguous run of the block's channels.
    for (int v = tid; v < kN * (CH / 4); v += C::kThreads) {
      const int j = v / (CH / 4);
      const int c = v % (CH / 4) * 4;
      float f[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) f[e] = z(c + e, first + j);
      store4(dst + j * js + c, f);
    }
  } else if (tid < nc) {
    for (int j = 0; j < kN; ++j) dst[j * js + tid] = from_float<T>(z(tid, first + j));
  }
}

template <class C>
__global__ void __launch_bounds__(C::kThreads) conv1d_update_kernel(const Conv1dUpdateParams p) {
  using TIo = typename C::TIo;
  using TW = typename C::TW;
  constexpr int K = C::kK;
  constexpr int W = C::kW;
  constexpr int H = C::kHist;
  constexpr int CH = C::kChannels;
  constexpr int NT = C::kThreads;
  constexpr int XP = C::kPitch;
  constexpr bool kWindow = C::kRollback == kRollbackWindow;
  constexpr int kWrites = kWindow ? 1 : K;                   // state tiles written
  constexpr int kRowVecs = CH / 4;                           // 4-element runs in a row of x or y
  constexpr int kRowPasses = (K * kRowVecs + NT - 1) / NT;   // x and y, 4 at a time
  constexpr int kWeightPasses = (CH * W / 4 + NT - 1) / NT;  // weights, 4 at a time
  static_assert(kRowPasses * 4 >= K && kWeightPasses * 4 >= W, "one register array per path");
  const int tid = static_cast<int>(threadIdx.x);

  // ---- which sequence and channels ----
  const int b = static_cast<int>(blockIdx.x) / p.channel_blocks;
  const int c0 = (static_cast<int>(blockIdx.x) % p.channel_blocks) * CH;
  const int nc = p.channels - c0 < CH ? p.channels - c0 : CH;
  const bool full = nc == CH;

  __shared__ float sX[K * XP];    // [K][XP] inputs, token-major
  __shared__ float sY[K * XP];    // [K][XP] outputs
  __shared__ float sH[CH * H];    // [CH][H] history, oldest first
  __shared__ float sW[CH * W];    // [CH][W] weights
  __shared__ TIo* sDst[kWrites];  // the tiles this sequence writes (null: skipped)

  // ---- every global read, issued before any is used: what does not depend on the state's
  // address first, so that it overlaps the slot / table / offset look-ups ----
  const Conv1dStatePointers<TIo, K, C::kAddressing, C::kRollback> states(p, b);
  int offset = 0;
  if constexpr (kWindow) offset = p.window_offset[b];
  const TW* weight = static_cast<const TW*>(p.weight) + static_cast<long long>(c0) * W;
  const bool weight_vec = full && aligned4(weight);
  float wr[kWeightPasses * 4] = {};  // vector path: run ps in [ps*4, ps*4+4); else [W] by pass
  if (weight_vec) {
#pragma unroll
    for (int ps = 0; ps < kWeightPasses; ++ps) {
      const int v = ps * NT + tid;
      if (v < CH * W / 4) {
        float f[4];
        load4(weight + v * 4, f);
#pragma unroll
        for (int e = 0; e < 4; ++e) wr[ps * 4 + e] = f[e];
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < W; ++r) {
      const int i = r * NT + tid;
      if (i < nc * W) wr[r] = to_float(weight[i]);
    }
  }
  float bias = 0.0f;
  if constexpr (C::kBias) {
    if (tid < nc) bias = to_float(static_cast<const TW*>(p.bias)[c0 + tid]);
  }
  const TIo* x = static_cast<const TIo*>(p.x) + static_cast<long long>(b) * K * p.x_stride + c0;
  const bool x_vec = full && p.x_stride % 4 == 0 && aligned4(x);
  float xr[kRowPasses * 4] = {};  // vector path: run ps in [ps*4, ps*4+4); else [K] by token
  if (x_vec) {
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      const int idx = ps * NT + tid;
      if (idx < K * kRowVecs) {
        float f[4];
        load4(x + (idx / kRowVecs) * p.x_stride + idx % kRowVecs * 4, f);
#pragma unroll
        for (int e = 0; e < 4; ++e) xr[ps * 4 + e] = f[e];
      }
    }
  } else if (tid < nc) {
#pragma unroll
    for (int t = 0; t < K; ++t) xr[t] = to_float(x[t * p.x_stride + tid]);
  }
  if (states.skip()) return;
  if constexpr (kWindow) {
    if (offset < 0 || offset > p.state_cols - H) return;  // padding: nothing read or written
  }
  // [channels][cols] tiles: consecutive threads walk a channel's columns, then the next channel;
  // [cols][channels]: consecutive threads take consecutive channels of a column.
  const long long cs = p.state_channel_stride;
  const long long js = p.state_col_stride;
  const bool rows = js == 1;
  const TIo* hist = states.read() + c0 * cs + offset * js;
  float h[H];
#pragma unroll
  for (int r = 0; r < H; ++r) {
    const int i = r * NT + tid;
    if (rows) {
      h[r] = i / H < nc ? to_float(hist[i / H * cs + i % H]) : 0.0f;
    } else {
      h[r] = tid < nc ? to_float(hist[r * js + tid]) : 0.0f;
    }
  }
  // NOTE: one thread per tile, so the K slot or table look-ups run in parallel.
  if (tid < kWrites) sDst[tid] = states.write(tid);

  // ---- to shared memory ----
  if (x_vec) {
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      const int idx = ps * NT + tid;
      if (idx < K * kRowVecs) {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          sX[(idx / kRowVecs) * XP + idx % kRowVecs * 4 + e] = xr[ps * 4 + e];
      }
    }
  } else {
#pragma unroll
    for (int t = 0; t < K; ++t) sX[t * XP + tid] = xr[t];
  }
  if (weight_vec) {
#pragma unroll
    for (int ps = 0; ps < kWeightPasses; ++ps) {
      const int v = ps * NT + tid;
      if (v < CH * W / 4) {
#pragma unroll
        for (int e = 0; e < 4; ++e) sW[v * 4 + e] = wr[ps * 4 + e];
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < W; ++r) sW[r * NT + tid] = wr[r];
  }
#pragma unroll
  for (int r = 0; r < H; ++r) sH[rows ? r * NT + tid : tid * H + r] = h[r];
  __syncthreads();

  // ---- the new states, straight from shared memory ----
  // NOTE: every read of this block's rows of the state happened before the barrier, so writing
  // over them (strided and table addressing) is safe; other blocks own other rows.
#pragma unroll 1
  for (int t = 0; t < kWrites; ++t) {
    TIo* dst = sDst[t];
    if (dst == nullptr) continue;
    dst += c0 * cs;
    if constexpr (kWindow) {
      store_state<C, C::kCols>(dst, cs, js, nc, 0, sH, sX);
    } else {
      store_state<C, H>(dst, cs, js, nc, t + 1, sH, sX);
    }
  }

  // ---- y_t for this thread's channel: a window of W inputs slides over z ----
  float y[K];
  {
    float w[W];
    float win[W];
#pragma unroll
    for (int i = 0; i < W; ++i) w[i] = sW[tid * W + i];
#pragma unroll
    for (int i = 0; i < H; ++i) win[i] = sH[tid * H + i];
#pragma unroll
    for (int t = 0; t < K; ++t) {
      win[W - 1] = sX[t * XP + tid];
      float acc = bias;
#pragma unroll
      for (int i = 0; i < W; ++i) acc = fmaf(w[i], win[i], acc);
      if constexpr (C::kSilu) acc = acc / (1.0f + expf(-acc));
      y[t] = acc;
#pragma unroll
      for (int i = 0; i + 1 < W; ++i) win[i] = win[i + 1];
    }
  }
  TIo* out = static_cast<TIo*>(p.y) + static_cast<long long>(b) * K * p.y_stride + c0;
  if (full && p.y_stride % 4 == 0 && aligned4(out)) {
#pragma unroll
    for (int t = 0; t < K; ++t) sY[t * XP + tid] = y[t];
    __syncthreads();
#pragma unroll
    for (int ps = 0; ps < kRowPasses; ++ps) {
      const int idx = ps * NT + tid;
      if (idx < K * kRowVecs) {
        const int t = idx / kRowVecs;
        const int j = idx % kRowVecs * 4;
        float f[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) f[e] = sY[t * XP + j + e];
        store4(out + t * p.y_stride + j, f);
      }
    }
  } else if (tid < nc) {
#pragma unroll
    for (int t = 0; t < K; ++t) out[t * p.y_stride + tid] = from_float<TIo>(y[t]);
  }
}

}  // namespace wyjit_kernels
