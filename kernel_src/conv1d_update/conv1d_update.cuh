// SPDX-License-Identifier: Apache-2.0
// K-token causal depthwise conv1d update for one (sequence, block of channels).
//
// Per channel c, with the W-1 previous inputs h (oldest first) and the K new inputs x_t:
//   z = [h_0 .. h_{W-2}, x_0 .. x_{K-1}]                 (the window, W-1+K columns)
//   y_t = silu(bias_c + sum_w weight[c][w] * z[t + w])  (z[t .. t+W-1] ends at x_t)
// intermediate: the state after token t is z[t+1 .. t+W-1], written for every t;
// window:       all of z is written, so the state after token a-1 is columns [a, a+W-1).
//
// A thread owns 16 bytes' worth of channels (conv1d_lanes) and a run of sub-chunks of
// conv1d_sub_tokens tokens; it keeps the columns of z it needs as raw bits, so every state it
// writes is a copy of registers, and moves x, y, weights and state columns 16 bytes at a time
// where the addresses allow (per-element accesses otherwise: a channel group cut by the channel
// count, strides or pointers that are not 16-byte multiples). The tokens of a sequence are
// independent once z is known, so at small batch the launch spreads them over several threads.
// Launches with little work take the narrow kernel instead (conv1d_update_narrow.cuh), the
// launch plan's choice.
#pragma once

#include "common/state_refs.cuh"
#include "common/types.cuh"
#include "conv1d_update/conv1d_update_config.cuh"
#include "conv1d_update/conv1d_update_lanes.cuh"
#include "conv1d_update/conv1d_update_narrow.cuh"
#include "conv1d_update/conv1d_update_params.cuh"
#include "conv1d_update/conv1d_update_tokens.cuh"

namespace wyjit_kernels {

/// The thread's kWeightWords words of weight ([lanes][W]) or kBiasWords of bias ([lanes]):
/// 16-byte loads when all n lanes are there and the address allows, else per element.
template <typename TW, int kWords>
__device__ __forceinline__ void load_params(const TW* p, int elems, int n_elems,
                                            unsigned (&w)[kWords]) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(TW));
  if (n_elems == elems && aligned16(p)) {
#pragma unroll
    for (int v = 0; v < kWords / 4; ++v) {
      const Raw16 r = reinterpret_cast<const Raw16*>(p)[v];
#pragma unroll
      for (int m = 0; m < 4; ++m) w[v * 4 + m] = r.w[m];
    }
  } else {
#pragma unroll
    for (int q = 0; q < kWords * 4 / static_cast<int>(sizeof(TW)); ++q) {
      if (q < n_elems) set_elem_bits<TW>(w, q, raw_bits(p[q]));
    }
  }
  static_assert(kWords % 4 == 0 && kPer > 0, "whole vectors");
}

template <class C>
__global__ void __launch_bounds__(conv1d_threads(), C::kMinBlocks)
    conv1d_update_wide_kernel(const Conv1dUpdateParams p) {
  using T = typename C::TIo;
  using TW = typename C::TW;
  constexpr int K = C::kK;
  constexpr int W = C::kW;
  constexpr int H = C::kHist;
  constexpr int V = C::kLanes;
  constexpr int S = C::kSub;
  constexpr int Z = C::kCols;
  constexpr bool kWindow = C::kWindow;
  // NOTE: with K a multiple of the sub-chunk every token of every sub-chunk exists.
  constexpr bool kWhole = K % S == 0;

  __shared__ T* s_dst[C::kWrites];  // the tiles this sequence writes (null: skipped)
  // kModeRegion's exchange: H vectors a thread (intermediate form only).
  __shared__ Raw16 s_xch[kWindow ? 1 : conv1d_threads() * H];
  extern __shared__ __align__(16) unsigned char s_image[];

  // ---- which sequence, channels and tokens ----
  const int tid = static_cast<int>(threadIdx.x);
  const int b = static_cast<int>(static_cast<unsigned long long>(blockIdx.x) * p.block_div_mul >>
                                 (31 + p.block_div_shift));
  const int block_c0 = (static_cast<int>(blockIdx.x) - b * p.channel_blocks) * V << p.group_shift;
  const int lane_group = tid & ((1 << p.group_shift) - 1);
  const int c0 = block_c0 + lane_group * V;
  const int n = min(max(p.channels - c0, 0), V);  // channels of this thread
  const int s_begin = (tid >> p.group_shift) * p.subchunks;
  const int s_end = min(C::kSubChunks, s_begin + p.subchunks);
  const bool works = n > 0 && s_begin < s_end;
  // The host checked every address of a whole channel group (p.mode): 16-byte vectors, no checks.
  const bool hv = p.mode >= 0 && n == V;
  const int t_begin = s_begin * S;

  // ---- what does not depend on the state's address first, so that it overlaps the slot /
  // table / offset look-ups: weights, bias, the first sub-chunk's inputs ----
  const StateTiles<T, C::kWrites, C::kAddressing> states(p.states, b, 0);
  int offset = 0;
  if constexpr (kWindow) offset = p.window_offset[b];
  unsigned wr[C::kWeightWords] = {};
  unsigned br[C::kBiasWords] = {};
  const T* x = static_cast<const T*>(p.x) + static_cast<long long>(b) * K * p.x_stride + c0;
  const auto load_x = [&](int t) {
    const T* row = x + t * p.x_stride;
    return load_lanes<T>(row, 1, n, hv || (n == V && aligned16(row)));
  };
  Raw16 z[Z] = {};  // z[0, H): the W-1 inputs before the sub-chunk; z[H, Z): its inputs
  if (works) {
    load_params(static_cast<const TW*>(p.weight) + static_cast<long long>(c0) * W, V * W, n * W,
                wr);
    if constexpr (C::kBias) load_params(static_cast<const TW*>(p.bias) + c0, V, n, br);
#pragma unroll
    for (int i = 0; i < Z; ++i) {
      const int t = t_begin + i - H;
      if (t >= 0 && (kWhole || t < K)) z[i] = load_x(t);
    }
  }
  if (states.skip()) return;

  // ---- the history: columns [offset, offset + H) of the read tile ----
  const long long cs = p.state_channel_stride;
  const long long js = p.state_col_stride;
  const bool rows = js == 1;  // [channels][cols] tiles
  const T* read_tile = states.read();
  // NOTE: the window form stages [channels][cols] tiles in shared memory when both tiles are
  // 16-byte aligned, so that the read of the tile and the write of the window are coalesced.
  T* image = reinterpret_cast<T*>(s_image);
  const long long image_elems = (min(p.channels - block_c0, V << p.group_shift)) * cs;
  bool staged = false;
  if constexpr (kWindow) {
    T* const dst = states.write(0);
    staged = p.image != 0 && aligned16(read_tile) && (dst == nullptr || aligned16(dst));
  }
  const T* const src = read_tile + block_c0 * cs;
  const int vecs = static_cast<int>(image_elems / V);
  if (staged) {
    // NOTE: issued before the window offset is known (the staged rows do not depend on it), all
    // of a thread's copies in flight at once: one memory round trip where there were
    // 1 + ceil(vectors a thread / 4).
#pragma unroll 4
    for (int v = tid; v < vecs; v += static_cast<int>(blockDim.x)) {
      copy16_async(reinterpret_cast<Raw16*>(image) + v, reinterpret_cast<const Raw16*>(src) + v);
    }
  }
  if constexpr (kWindow) {
    if (offset < 0 || offset > p.state_cols - H) {  // padding: nothing written
      copy16_wait();
      return;
    }
  }
  // NOTE: one thread per tile, so the K slot or table look-ups run in parallel.
  for (int i = tid; i < C::kWrites; i += static_cast<int>(blockDim.x)) s_dst[i] = states.write(i);
  if (staged) {
    for (long long i = vecs * V + tid; i < image_elems; i += blockDim.x) image[i] = src[i];
    copy16_wait();
    __syncthreads();
    if (works && t_begin < H) {
      const T* mine = image + lane_group * V * cs + offset;
#pragma unroll
      for (int i = 0; i < H; ++i) {
        if (t_begin + i < H) z[i] = load_lanes<T>(mine + t_begin + i, cs, n, false);
      }
    }
  } else if (works && t_begin < H) {
    if (!kWindow && t_begin == 0 && rows && cs == H && n == V && aligned16(read_tile + c0 * H)) {
      // [channels][W-1] tiles: the thread's channels are W-1 contiguous vectors.
      Raw16 region[H];
#pragma unroll
      for (int v = 0; v < H; ++v) region[v] = reinterpret_cast<const Raw16*>(read_tile + c0 * H)[v];
      region_to_cols<T, H>(region, z);
    } else {
#pragma unroll
      for (int i = 0; i < H; ++i) {
        const T* q = read_tile + c0 * cs + (offset + t_begin + i) * js;
        if (t_begin + i < H) {
          z[i] = load_lanes<T>(q, cs, n, !rows && n == V && (hv || aligned16(q)));
        }
      }
    }
  }
  // NOTE: every read of this block's channels of the state happened before the barrier, so
  // writing over them (strided and table addressing write where they read) is safe; other
  // blocks own other channels.
  __syncthreads();

  // ---- the tokens, in the fastest mode this thread's accesses allow ----
  Conv1dLanes<T> lanes;
  lanes.x = x;
  lanes.y = static_cast<T*>(p.y) + static_cast<long long>(b) * K * p.y_stride + c0;
  lanes.x_stride = p.x_stride;
  lanes.y_stride = p.y_stride;
  lanes.cs = cs;
  lanes.js = js;
  lanes.c0 = c0;
  lanes.n = n;
  lanes.image = staged ? image + lane_group * V * cs : nullptr;
  lanes.s_begin = s_begin;
  lanes.s_end = works ? s_end : s_begin;
  lanes.xch = nullptr;
  lanes.xch_mask = 0;
  lanes.xch_lane = 0;
  lanes.xch_size = 1;
  float bias[V];
#pragma unroll
  for (int e = 0; e < V; ++e) bias[e] = C::kBias ? elem<TW>(br, e) : 0.0f;
  int mode = kModeGeneric;
  if (hv) {
    mode = p.mode;
  } else {
    // Every tile this thread writes, 16-byte aligned?
    unsigned long long tile_bits = 0;
    for (int t = t_begin; t < min(K, s_end * S) && !kWindow; ++t) {
      tile_bits |= reinterpret_cast<unsigned long long>(s_dst[t]);
    }
    if constexpr (kWindow) tile_bits = reinterpret_cast<unsigned long long>(s_dst[0]);
    const bool vec_io = n == V && aligned16(lanes.x) && aligned16(lanes.y) &&
                        (p.x_stride * sizeof(T)) % 16 == 0 && (p.y_stride * sizeof(T)) % 16 == 0;
    const bool vec_cols = !rows && (js * sizeof(T)) % 16 == 0 && (tile_bits & 15) == 0;
    const bool region = vec_io && !kWindow && rows && cs == H && (tile_bits & 15) == 0;
    if (vec_io && kWindow && staged) {
      mode = kModeImage;
    } else if (region) {
      mode = kModeRegion;
    } else if (vec_io && vec_cols) {
      mode = kModeColumns;
    }
  }
  if constexpr (!kWindow) {
    // The lanes of a warp that share a split own consecutive channel groups: when all of them
    // take the region mode, their states go out together (lanes.xch).
    if (p.xch != 0) {
      const int size = min(32, 1 << p.group_shift);
      const int lane = tid & 31;
      const unsigned mask = size == 32 ? 0xffffffffu : ((1u << size) - 1) << (lane & ~(size - 1));
      if ((__activemask() & mask) == mask && __all_sync(mask, mode == kModeRegion && works)) {
        lanes.xch = s_xch + (tid & ~(size - 1)) * H;
        lanes.xch_mask = mask;
        lanes.xch_lane = lane & (size - 1);
        lanes.xch_size = size;
      }
    }
  }
  // NOTE: the image mode exists in the window form only, the region mode in the intermediate one.
  if (kWindow && mode == kModeImage) {
    conv1d_tokens<C, kModeImage>(lanes, s_dst, z, wr, bias);
  } else if (!kWindow && mode == kModeRegion) {
    conv1d_tokens<C, kModeRegion>(lanes, s_dst, z, wr, bias);
  } else if (mode == kModeColumns) {
    conv1d_tokens<C, kModeColumns>(lanes, s_dst, z, wr, bias);
  } else {
    conv1d_tokens<C, kModeGeneric>(lanes, s_dst, z, wr, bias);
  }

  if (staged) {
    // ---- the staged window, out in one coalesced pass ----
    __syncthreads();
    T* const dst = s_dst[0];
    if (dst == nullptr) return;
    T* out = dst + block_c0 * cs;
    if (cs == H + K) {
      const int vecs = static_cast<int>(image_elems / V);
#pragma unroll 4
      for (int v = tid; v < vecs; v += static_cast<int>(blockDim.x)) {
        store16_global(out + v * V, reinterpret_cast<const Raw16*>(image)[v]);
      }
      for (long long i = vecs * V + tid; i < image_elems; i += blockDim.x) out[i] = image[i];
    } else {
      // Columns past W-1+K are not the launch's: element by element, the window columns only.
      const int channels = static_cast<int>(image_elems / cs);
      for (int i = tid; i < channels * (H + K); i += static_cast<int>(blockDim.x)) {
        const long long at = i / (H + K) * cs + i % (H + K);
        out[at] = image[at];
      }
    }
  }
}

}  // namespace wyjit_kernels
