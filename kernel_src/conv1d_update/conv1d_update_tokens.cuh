// SPDX-License-Identifier: Apache-2.0
// The token loop of conv1d_update: one thread's channels over its sub-chunks, in one of four
// modes chosen per thread. The three vector modes know every access is a 16-byte vector and
// check nothing; the generic mode checks each access and falls back to one access per element.
#pragma once

#include "conv1d_update/conv1d_update_lanes.cuh"
#include "conv1d_update/conv1d_update_params.cuh"

namespace wyjit_kernels {

/// What one thread works on. Pointers are at the thread's first channel c0.
template <typename T>
struct Conv1dLanes {
  const T* x;  // row 0 of the sequence
  T* y;
  long long x_stride, y_stride;
  long long cs, js;  // state tile strides: channel, column
  int c0;            // first channel
  int n;             // channels, <= the lanes of a vector
  T* image;          // kModeImage (or generic while staged): lane 0's row in the shared image
  int s_begin, s_end;
  // kModeRegion: the states of xch_size consecutive lanes (one channel run, the same tokens)
  // go out through xch (their first lane's H vectors) as coalesced 16-byte stores; null: each
  // lane stores its own H vectors.
  Raw16* xch;
  unsigned xch_mask;
  int xch_lane, xch_size;
};

template <class C, int kMode>
__device__ __forceinline__ void conv1d_tokens(const Conv1dLanes<typename C::TIo>& L,
                                              typename C::TIo* const* s_dst, Raw16 (&z)[C::kCols],
                                              const unsigned (&wr)[C::kWeightWords],
                                              const float (&bias)[C::kLanes]) {
  using T = typename C::TIo;
  using TW = typename C::TW;
  constexpr int K = C::kK;
  constexpr int W = C::kW;
  constexpr int H = C::kHist;
  constexpr int V = C::kLanes;
  constexpr int S = C::kSub;
  constexpr bool kWhole = K % S == 0;  // every token of every sub-chunk exists
  constexpr bool kVec = kMode != kModeGeneric;
  const auto vec_at = [&](const T* q) { return kVec || (L.n == V && aligned16(q)); };

#pragma unroll 1
  for (int s = L.s_begin; s < L.s_end; ++s) {
    const int t0 = s * S;
    // The next sub-chunk's inputs, in flight while this one is computed.
    Raw16 next[S] = {};
    if (s + 1 < L.s_end) {
#pragma unroll
      for (int i = 0; i < S; ++i) {
        const T* row = L.x + (t0 + S + i) * L.x_stride;
        if (kWhole || t0 + S + i < K) next[i] = load_lanes<T>(row, 1, L.n, vec_at(row));
      }
    }

    // y_t for the S tokens, one word (1 or 2 channels) at a time.
    Raw16 out[S];
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      constexpr int P = V / 4;  // channels a word holds
      float o[S][P];
#pragma unroll
      for (int pc = 0; pc < P; ++pc) {
        const int e = m * P + pc;
        float in[C::kCols];
#pragma unroll
        for (int i = 0; i < C::kCols; ++i) in[i] = elem<T>(z[i].w, e);
#pragma unroll
        for (int t = 0; t < S; ++t) {
          float acc = bias[e];
#pragma unroll
          for (int i = 0; i < W; ++i) acc = fmaf(elem<TW>(wr, e * W + i), in[t + i], acc);
          if constexpr (C::kSilu) acc = sizeof(T) == 2 ? silu_tanh(acc) : silu_fast(acc);
          o[t][pc] = acc;
        }
      }
#pragma unroll
      for (int t = 0; t < S; ++t) out[t].w[m] = pack_word<T>(o[t]);
    }
#pragma unroll
    for (int t = 0; t < S; ++t) {
      T* row = L.y + (t0 + t) * L.y_stride;
      if (kWhole || t0 + t < K) store_lanes<T>(row, 1, L.n, vec_at(row), out[t]);
    }

    // The states: copies of z.
    if constexpr (C::kWindow) {
      T* const dst = s_dst[0];
      const auto put = [&](int col, const Raw16& r) {
        if (kMode == kModeImage || (kMode == kModeGeneric && L.image != nullptr)) {
          store_lanes<T>(L.image + col, L.cs, L.n, false, r);
        } else if (dst != nullptr) {
          T* q = dst + L.c0 * L.cs + col * L.js;
          store_lanes<T>(q, L.cs, L.n, kMode == kModeColumns || (L.js != 1 && vec_at(q)), r);
        }
      };
      if (t0 == 0) {
#pragma unroll
        for (int i = 0; i < H; ++i) put(i, z[i]);
      }
#pragma unroll
      for (int t = 0; t < S; ++t) {
        if (kWhole || t0 + t < K) put(H + t0 + t, z[H + t]);
      }
    } else {
#pragma unroll
      for (int t = 0; t < S; ++t) {
        T* const dst = kWhole || t0 + t < K ? s_dst[min(t0 + t, K - 1)] : nullptr;
        if (dst == nullptr) continue;
        // The state after token t0 + t: z columns t+1 .. t+H.
        if (kMode == kModeRegion) {
          Raw16 region[H];
          cols_to_region<T, H>(z + t + 1, region);
          if (L.xch != nullptr) {
            // NOTE: a lane's H vectors are contiguous, so a warp's direct stores are 32 runs of
            // 16*H bytes: every store instruction half-writes its sectors. Through shared
            // memory, store j of lane l writes vector j*xch_size + l of the run: whole sectors.
            __syncwarp(L.xch_mask);  // the previous state's vectors are out
#pragma unroll
            for (int v = 0; v < H; ++v) L.xch[L.xch_lane * H + v] = region[v];
            __syncwarp(L.xch_mask);
            T* const run = dst + (L.c0 - L.xch_lane * V) * H;
#pragma unroll
            for (int j = 0; j < H; ++j) {
              const int v = j * L.xch_size + L.xch_lane;
              store16_global(run + v * V, L.xch[v]);
            }
          } else {
#pragma unroll
            for (int v = 0; v < H; ++v) store16_global(dst + L.c0 * H + v * V, region[v]);
          }
        } else {
#pragma unroll
          for (int i = 0; i < H; ++i) {
            T* q = dst + L.c0 * L.cs + i * L.js;
            store_lanes<T>(q, L.cs, L.n, kMode == kModeColumns || (L.js != 1 && vec_at(q)),
                           z[t + 1 + i]);
          }
        }
      }
    }

    // Slide: the last H columns become the next sub-chunk's history.
#pragma unroll
    for (int i = 0; i < H; ++i) z[i] = z[S + i];
#pragma unroll
    for (int i = 0; i < S; ++i) z[H + i] = next[i];
  }
}

}  // namespace wyjit_kernels
