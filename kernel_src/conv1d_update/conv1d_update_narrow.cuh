// SPDX-License-Identifier: Apache-2.0
// The narrow path of conv1d_update, for launches with little work (a few sequences): one thread
// per (sequence, 4-byte word of channels, token), so that a launch has K times the threads of
// one-thread-per-channel and each thread's chain from its loads to its stores is short. Every
// load a thread makes is issued before any of them is used (the window form's history after its
// offset: measured cheaper than loading every candidate column first, or staging the rows in
// shared memory). The wide path (16-byte lanes, a thread walking its tokens) moves more bytes
// an instruction and wins once there is enough work.
//
// Block: 2^group_shift words of channels x K tokens; thread i takes token i >> group_shift
// and word i & (2^group_shift - 1), so every token of a channel is in one block (a barrier
// orders the reads of the state tile before the writes over it).
#pragma once

#include "common/state_refs.cuh"
#include "conv1d_update/conv1d_update_config.cuh"
#include "conv1d_update/conv1d_update_lanes.cuh"
#include "conv1d_update/conv1d_update_params.cuh"

namespace wyjit_kernels {

/// One 4-byte word of T (4 / sizeof(T) elements, element e at p + e*stride) in registers, not yet
/// put together: `kVec` one 4-byte load, else one load per element (elements past n repeat
/// element n-1, so every address read is one the caller vouched for; n >= 1).
// NOTE: the loads of a thread are all issued before any is used: the word is assembled only
// when it is needed (word()), since an instruction that waits for a load stalls every later one.
template <typename T, bool kVec>
struct WordLoad {
  static constexpr int kElems = kVec ? 1 : 4 / static_cast<int>(sizeof(T));
  unsigned raw[kElems];

  __device__ __forceinline__ void load(const T* p, long long stride, int n) {
    if constexpr (kVec) {
      raw[0] = *reinterpret_cast<const unsigned*>(p);
    } else {
#pragma unroll
      for (int e = 0; e < kElems; ++e) raw[e] = raw_bits(p[min(e, n - 1) * stride]);
    }
  }
  __device__ __forceinline__ unsigned word(int n) const {
    if constexpr (kVec) {
      return raw[0];
    } else {
      unsigned w = 0;
#pragma unroll
      for (int e = 0; e < kElems; ++e) {
        if (e < n) set_elem_bits<T>(&w, e, raw[e]);
      }
      return w;
    }
  }
};

template <typename T>
__device__ __forceinline__ void store_word(T* p, long long stride, int n, bool vec, unsigned w) {
  if (vec) {
    *reinterpret_cast<unsigned*>(p) = w;
    return;
  }
#pragma unroll
  for (int e = 0; e < 4 / static_cast<int>(sizeof(T)); ++e) {
    if (e < n) p[e * stride] = from_raw<T>(elem_bits<T>(&w, e));
  }
}

template <typename T>
__device__ __forceinline__ bool aligned4(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) & 3) == 0;
}

template <class C, bool kVec>
__device__ __forceinline__ void conv1d_narrow_body(const Conv1dUpdateParams& p) {
  using T = typename C::TIo;
  using TW = typename C::TW;
  constexpr int K = C::kK;
  constexpr int W = C::kW;
  constexpr int H = C::kHist;
  constexpr int P = 4 / static_cast<int>(sizeof(T));  // channels a word holds
  constexpr bool kWindow = C::kWindow;
  // The thread's weights [P][W] as words (whole words in kVec), else per element.
  constexpr int kWeightSlots = (P * W * static_cast<int>(sizeof(TW)) + 3) / 4;

  const int tid = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(static_cast<unsigned long long>(blockIdx.x) * p.block_div_mul >>
                                 (31 + p.block_div_shift));
  const int word = ((static_cast<int>(blockIdx.x) - b * p.channel_blocks) << p.group_shift) +
                   (tid & ((1 << p.group_shift) - 1));
  const int t = tid >> p.group_shift;  // < K: the block has K << group_shift threads
  const int n = min(max(p.channels - word * P, 0), P);  // channels of this thread
  const bool works = n > 0;
  // Threads past the channels read channel 0's (valid) addresses and store nothing.
  const int c = works ? word * P : 0;
  const int nl = max(n, 1);

  // ---- every load, unconditionally and from valid addresses, before any is used: the window
  // offset, the tiles' look-ups (table, slot), weights, bias, x rows, history columns ----
  const StateTiles<T, C::kWrites, C::kAddressing> states(p.states, b, 0);
  int offset = 0;
  if constexpr (kWindow) offset = p.window_offset[b];
  const TW* const wp = static_cast<const TW*>(p.weight) + static_cast<long long>(c) * W;
  unsigned wr[kWeightSlots] = {};
  if constexpr (kVec) {
#pragma unroll
    for (int v = 0; v < kWeightSlots; ++v) wr[v] = reinterpret_cast<const unsigned*>(wp)[v];
  } else {
    TW wl[P * W];
#pragma unroll
    for (int q = 0; q < P * W; ++q) wl[q] = wp[min(q, nl * W - 1)];
#pragma unroll
    for (int q = 0; q < P * W; ++q) {
      if (q < n * W) set_elem_bits<TW>(wr, q, raw_bits(wl[q]));
    }
  }
  float bias[P] = {};
  if constexpr (C::kBias) {
#pragma unroll
    for (int e = 0; e < P; ++e)
      bias[e] = to_float(static_cast<const TW*>(p.bias)[c + min(e, nl - 1)]);
  }
  // z[i] = window column t + i: x row t+i-H where that is a row, else history column t+i.
  const T* const x = static_cast<const T*>(p.x) + static_cast<long long>(b) * K * p.x_stride + c;
  WordLoad<T, kVec> xl[W];
#pragma unroll
  for (int i = 0; i < W; ++i) xl[i].load(x + max(t + i - H, 0) * p.x_stride, 1, nl);
  if (states.skip()) return;

  const long long cs = p.state_channel_stride;
  const long long js = p.state_col_stride;
  // NOTE: [channels][cols] tiles hold a word's channels in two rows: per element.
  const bool tc = cs == 1;
  const T* const read = states.read() + c * cs;
  WordLoad<T, kVec> hv[H];
  WordLoad<T, false> he[H];
  if constexpr (kWindow) {
    if (offset < 0 || offset > p.state_cols - H) return;  // padding: nothing written
  }
#pragma unroll
  for (int i = 0; i < H; ++i) {
    const T* q = read + (offset + min(t + i, H - 1)) * js;
    if (tc) {
      hv[i].load(q, 1, nl);
    } else {
      he[i].load(q, cs, nl);
    }
  }
  T* const dst = states.write(kWindow ? 0 : t);  // the state after token t, or the window
  // NOTE: every read of the tile by this block's threads (all tokens of its channels) is before
  // the barrier, the writes over it (strided and table addressing write in place) after.
  __syncthreads();
  if (!works) return;

  unsigned z[W];
#pragma unroll
  for (int i = 0; i < W; ++i) {
    if (t + i >= H) {
      z[i] = xl[i].word(n);
    } else {
      z[i] = tc ? hv[min(i, H - 1)].word(n) : he[min(i, H - 1)].word(n);
    }
  }

  // ---- y_t ----
  float out[P];
#pragma unroll
  for (int e = 0; e < P; ++e) {
    float acc = bias[e];
#pragma unroll
    for (int i = 0; i < W; ++i) acc = fmaf(elem<TW>(wr, e * W + i), elem<T>(&z[i], e), acc);
    if constexpr (C::kSilu) acc = sizeof(T) == 2 ? silu_tanh(acc) : silu_fast(acc);
    out[e] = acc;
  }
  T* const yrow = static_cast<T*>(p.y) + (static_cast<long long>(b) * K + t) * p.y_stride + c;
  store_word<T>(yrow, 1, n, kVec || (n == P && aligned4(yrow)), pack_word<T>(out));

  // ---- the states: copies of z ----
  if (dst == nullptr) return;
  T* const tile = dst + c * cs;
  const auto put = [&](int col, unsigned w) {
    T* q = tile + col * js;
    store_word<T>(q, cs, n, tc && (kVec || (n == P && aligned4(q))), w);
  };
  if constexpr (kWindow) {
    // Columns [0, H) by the threads t = col mod K (each holds its column: col - t < W), column
    // H + t (x_t) by thread t.
#pragma unroll
    for (int i = 0; i < H; ++i) {
      if (t + i < H && i % K == 0) put(t + i, z[i]);
    }
    put(H + t, z[H]);
  } else if (!tc && cs == H && n == P && aligned4(tile)) {
    // [channels][W-1] tiles: the thread's state is P*H contiguous elements, H words.
#pragma unroll
    for (int m = 0; m < H; ++m) {
      unsigned w;
      if constexpr (P == 1) {
        w = z[1 + m];
      } else {
        w = join_halves(z[1 + (2 * m) % H], (2 * m) / H, z[1 + (2 * m + 1) % H], (2 * m + 1) / H);
      }
      reinterpret_cast<unsigned*>(tile)[m] = w;
    }
  } else {
    // The state after token t: window columns t+1 .. t+H.
#pragma unroll
    for (int i = 0; i < H; ++i) put(i, z[1 + i]);
  }
}

/// The narrow kernel, its own function so that its registers are not capped by the wide
/// kernel's bounds. p.mode 1: the host checked that every access is a whole aligned word
/// (strided addressing).
template <class C>
__global__ void __launch_bounds__(conv1d_threads())
    conv1d_update_narrow_kernel(const Conv1dUpdateParams p) {
  if (p.mode == 1) {
    conv1d_narrow_body<C, true>(p);
  } else {
    conv1d_narrow_body<C, false>(p);
  }
}

}  // namespace wyjit_kernels
