// SPDX-License-Identifier: Apache-2.0
// A gdn_verify variant's compile-time configuration, and which state elements a thread owns.
#pragma once

#include "common/types.cuh"
#include "gdn_verify/gdn_verify_params.cuh"

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

}  // namespace wyjit_kernels
