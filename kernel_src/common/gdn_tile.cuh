// SPDX-License-Identifier: Apache-2.0
// Which elements of a GDN state strip a thread of a block owns, for both layouts, and their
// loads and stores: shared by the GDN families (C: a config with kLayout, kThreads, kWarps,
// kCols, kDk, kDv, kLanesPerCol, kVecs).
#pragma once

#include "common/gdn_tokens.cuh"
#include "common/types.cuh"

namespace wyjit_kernels {

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
  // One column a thread (the interface of tile maps that own several).
  static constexpr int kColSlots = 1;
  __host__ __device__ static constexpr int col_slot(int) { return 0; }
  __device__ __forceinline__ int col_at(int) const { return col; }
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

}  // namespace wyjit_kernels
