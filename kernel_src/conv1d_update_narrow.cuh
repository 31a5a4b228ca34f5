// SPDX-License-Identifier: Apache-2.0
// The narrow path of conv1d_update, for launches with little work (a few sequences): one thread
// per (sequence, 4-byte word of channels, token), so that a launch has K times the threads of
// one-thread-per-channel and each thread's chain from its loads to its stores is short. Every
// load a thread makes is issued before any of them is used. The window form with
// [channels][cols] tiles stages the block's rows in shared memory (read whole before the window
// offset is known, the new window assembled there and written out whole), where a thread's own
// accesses would be scattered elements. The wide path (16-byte lanes, a thread walking its
// tokens) moves more bytes an instruction and wins once there is enough work.
//
// Block: 2^group_shift words of channels x K tokens; thread i takes token i >> group_shift
// and word i & (2^group_shift - 1), so every token of a channel is in one block (a barrier
// orders the reads of the state tile before the writes over it).
#pragma once

#include "conv1d_state_addressing.cuh"
#include "conv1d_update_lanes.cuh"
#include "conv1d_update_params.cuh"

namespace wyjit_kernels {

/// One 4-byte word of T (4 / sizeof(T) elements, element e at p + e*stride): one access when
/// `vec`, else one per element (elements [n, ...) are zero and not stored).
template <typename T>
__device__ __forceinline__ unsigned load_word(const T* p, long long stride, int n, bool vec) {
  if (vec) return *reinterpret_cast<const unsigned*>(p);
  unsigned w = 0;
#pragma unroll
  for (int e = 0; e < 4 / static_cast<int>(sizeof(T)); ++e) {
    if (e < n) set_elem_bits<T>(&w, e, raw_bits(p[e * stride]));
  }
  return w;
}

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

/// 4 bytes from global to shared memory without passing through registers (cp.async.ca on
/// sm_80 and later); copy16_wait() waits for them.
__device__ __forceinline__ void copy4_async(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
  unsigned s;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(gmem) : "memory");
#else
  *static_cast<unsigned*>(smem) = *static_cast<const unsigned*>(gmem);
#endif
}

/// Elements [0, count) from `src` to `dst` by the threads of a block: 4-byte words where both
/// ends allow it, the rest one element at a time. `async`: global to shared through cp.async.
template <typename T, bool kAsync>
__device__ __forceinline__ void copy_block_run(T* dst, const T* src, int count) {
  constexpr int P = 4 / static_cast<int>(sizeof(T));
  const int tid = static_cast<int>(threadIdx.x);
  const int step = static_cast<int>(blockDim.x);
  int done = 0;
  if (aligned4(dst) && aligned4(src)) {
    done = count / P * P;
    for (int v = tid; v < count / P; v += step) {
      if constexpr (kAsync) {
        copy4_async(dst + v * P, src + v * P);
      } else {
        reinterpret_cast<unsigned*>(dst)[v] = reinterpret_cast<const unsigned*>(src)[v];
      }
    }
  }
  for (int i = done + tid; i < count; i += step) dst[i] = src[i];
}

template <class C>
__device__ __forceinline__ void conv1d_narrow(const Conv1dUpdateParams& p) {
  using T = typename C::TIo;
  using TW = typename C::TW;
  constexpr int K = C::kK;
  constexpr int W = C::kW;
  constexpr int H = C::kHist;
  constexpr int P = 4 / static_cast<int>(sizeof(T));  // channels a word holds
  constexpr bool kWindow = C::kWindow;
  // The thread's weights [P][W] as words where they fill whole words, else per element.
  constexpr int kWeightBytes = P * W * static_cast<int>(sizeof(TW));
  constexpr bool kWeightWords = kWeightBytes % 4 == 0;
  constexpr int kWeightSlots = (kWeightBytes + 3) / 4;
  extern __shared__ __align__(16) unsigned char s_narrow_image[];

  const int tid = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(static_cast<unsigned long long>(blockIdx.x) * p.block_div_mul >>
                                 (31 + p.block_div_shift));
  const int block_c0 = ((static_cast<int>(blockIdx.x) - b * p.channel_blocks) * P)
                       << p.group_shift;
  const int t = tid >> p.group_shift;  // < K: the block has K << group_shift threads
  const int c = block_c0 + (tid & ((1 << p.group_shift) - 1)) * P;
  const int n = min(max(p.channels - c, 0), P);  // channels of this thread
  const bool works = n > 0;

  // ---- every load that does not need the state's address: the window offset, the tiles'
  // look-ups (table, slot), weights, bias, the x rows of the thread's window ----
  const Conv1dStatePointers<T, K, C::kAddressing, C::kRollback> states(p, b);
  int offset = 0;
  if constexpr (kWindow) offset = p.window_offset[b];
  unsigned wr[kWeightSlots] = {};
  float bias[P] = {};
  unsigned z[W] = {};  // window columns t .. t+W-1 of the thread's channels
  const T* x = static_cast<const T*>(p.x) + static_cast<long long>(b) * K * p.x_stride + c;
  if (works) {
    const TW* wp = static_cast<const TW*>(p.weight) + static_cast<long long>(c) * W;
    if (kWeightWords && n == P && aligned4(wp)) {
#pragma unroll
      for (int v = 0; v < kWeightSlots; ++v) wr[v] = reinterpret_cast<const unsigned*>(wp)[v];
    } else {
#pragma unroll
      for (int q = 0; q < P * W; ++q) {
        if (q < n * W) set_elem_bits<TW>(wr, q, raw_bits(wp[q]));
      }
    }
    if constexpr (C::kBias) {
#pragma unroll
      for (int e = 0; e < P; ++e) {
        if (e < n) bias[e] = to_float(static_cast<const TW*>(p.bias)[c + e]);
      }
    }
#pragma unroll
    for (int i = 0; i < W; ++i) {
      if (t + i >= H) {
        const T* row = x + (t + i - H) * p.x_stride;
        z[i] = load_word<T>(row, 1, n, n == P && aligned4(row));
      }
    }
  }
  if (states.skip()) return;

  const long long cs = p.state_channel_stride;
  const long long js = p.state_col_stride;
  const auto col_vec = [&](const T* q) { return cs == 1 && n == P && aligned4(q); };
  // The window form with [channels][cols] tiles (p.image): the block's rows of the read tile go
  // through shared memory (read whole, before the offset is known), and the new window is
  // assembled there and written out whole; a thread's own accesses would be scattered
  // elements.
  const int rows = min(P << p.group_shift, p.channels - block_c0);
  const int run = static_cast<int>(rows * cs);  // elements of the block's rows
  T* const image_in = reinterpret_cast<T*>(s_narrow_image);
  T* const image_out = image_in + (run + 7) / 8 * 8;
  const bool staged = kWindow && p.image != 0;
  if (staged) copy_block_run<T, true>(image_in, states.read() + block_c0 * cs, run);

  // ---- the history: window columns t .. H-1 ----
  T* dst = nullptr;  // the tile this thread writes: the state after token t, or the window
  if constexpr (kWindow) {
    if (offset < 0 || offset > p.state_cols - H) {  // padding: nothing written
      copy16_wait();
      return;
    }
    dst = states.write(0);
    if (staged) {
      copy16_wait();
      __syncthreads();
    }
    if (works && t < H) {
      const T* const read = staged ? image_in + (c - block_c0) * cs : states.read() + c * cs;
#pragma unroll
      for (int i = 0; i < H; ++i) {
        const T* q = read + (offset + t + i) * js;
        if (t + i < H) z[i] = load_word<T>(q, cs, n, !staged && col_vec(q));
      }
    }
  } else {
    const T* const read = states.read() + c * cs;
    if (works) {
#pragma unroll
      for (int i = 0; i < H; ++i) {
        const T* q = read + (t + i) * js;
        if (t + i < H) z[i] = load_word<T>(q, cs, n, col_vec(q));
      }
    }
    dst = states.write(t);
  }
  // NOTE: every read of the tile by this block's threads (all tokens of its channels) is before
  // the barrier, the writes over it (strided and table addressing write in place) after.
  __syncthreads();

  if (works) {
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
    store_word<T>(yrow, 1, n, n == P && aligned4(yrow), pack_word<T>(out));
  }

  // ---- the states: copies of z ----
  if (dst == nullptr) return;
  T* const tile = staged ? image_out + (c - block_c0) * cs : dst + c * cs;
  const auto put = [&](int col, unsigned w) {
    T* q = tile + col * js;
    store_word<T>(q, cs, n, !staged && col_vec(q), w);
  };
  if constexpr (kWindow) {
    if (works) {
      // Columns [0, H) by the threads t = col mod K (each holds its column: col - t < W),
      // column H + t (x_t) by thread t.
#pragma unroll
      for (int i = 0; i < H; ++i) {
        if (t + i < H && i % K == 0) put(t + i, z[i]);
      }
      put(H + t, z[H]);
    }
    if (staged) {
      __syncthreads();
      T* const out = dst + block_c0 * cs;
      if (cs == H + K) {
        copy_block_run<T, false>(out, image_out, run);
      } else {
        // Columns past W-1+K are not the launch's.
        for (int i = tid; i < rows * (H + K); i += static_cast<int>(blockDim.x)) {
          const long long at = i / (H + K) * cs + i % (H + K);
          out[at] = image_out[at];
        }
      }
    }
  } else if (!works) {
    return;
  } else if (js == 1 && cs == H && n == P && aligned4(tile)) {
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

}  // namespace wyjit_kernels
