// SPDX-License-Identifier: Apache-2.0
// Which elements of a vk checkpoint strip a thread of the WY verify owns: the layout of a
// tensor-core tile, so that the thread's S0 registers are its A fragments for the projection
// S0^T x (gdn_replay_project.cuh) as loaded, with no shuffle or shared-memory staging.
#pragma once

#include "common/types.cuh"
#include "gdn_replay/gdn_replay_config.cuh"
#include "gdn_replay/gdn_replay_params.cuh"

namespace wyjit_kernels {

/// A warp owns kMTiles tiles of 16 columns over one dk slice (kSlices slices split dk when the
/// strip has fewer tiles than the block has warps). Lane (g = lane / 4, t = lane % 4) of a
/// tile holds columns g and g + 8 and, per 16-wide dk block `blk`, the four dk indices
/// 16 blk + 4 t .. + 3 of each: element 2h + e (h, e in 0..1) is A's column t (e = 0) or
/// t + 4 (e = 1) of the tile product over dk block (blk, h). Vector c = blk * kColSlots + slot
/// with slot = 2 tile + half (half 0: column g, 1: column g + 8).
template <class C>
struct GdnReplayMmaTile {
  static constexpr int kColTiles = C::kCols / 16;
  static constexpr int kMTiles = kColTiles > C::kWarps ? kColTiles / C::kWarps : 1;
  static constexpr int kSlices = gdn_replay_wy_parts(C::kCols, kLayoutVK, C::kWarps);
  static constexpr int kSliceDk = C::kDk / kSlices;
  static constexpr int kBlks = kSliceDk / 16;
  static constexpr int kColSlots = 2 * kMTiles;  // columns a thread owns
  static_assert(C::kCols % 16 == 0 && kSliceDk % 16 == 0, "whole 16 x 16 tiles");
  static_assert((kColTiles / kMTiles) * kSlices == C::kWarps,
                "every warp owns whole tiles of one dk slice");
  static_assert(kBlks * kColSlots == C::kVecs, "the thread's vectors are its tiles' elements");

  int g;
  int t;
  int slice;
  int col0;  // the warp's first column

  __device__ __forceinline__ GdnReplayMmaTile() {
    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / 32;
    const int lane = tid % 32;
    g = lane / 4;
    t = lane % 4;
    slice = warp % kSlices;
    col0 = (warp / kSlices) * kMTiles * 16;
  }
  __host__ __device__ static constexpr int col_slot(int c) { return c % kColSlots; }
  __device__ __forceinline__ int col_at(int slot) const {
    return col0 + (slot / 2) * 16 + (slot % 2) * 8 + g;
  }
  __device__ __forceinline__ int col_of(int c) const { return col_at(col_slot(c)); }
  __device__ __forceinline__ int first_i(int c) const {
    return slice * kSliceDk + (c / kColSlots) * 16 + 4 * t;
  }
  // NOTE: one base address a thread and a compile-time offset a vector (col_of(c) - col_of(0),
  // first_i(c) - first_i(0)), so that the 16 loads need no address arithmetic of their own.
  __host__ __device__ static constexpr int offset(int c) {
    return ((col_slot(c) / 2) * 16 + (col_slot(c) % 2) * 8) * C::kDk + (c / kColSlots) * 16;
  }
  template <typename T>
  __device__ __forceinline__ T* base(T* tile, int j0) const {
    return tile + static_cast<long long>(j0 + col0 + g) * C::kDk + slice * kSliceDk + 4 * t;
  }
  template <typename T>
  __device__ __forceinline__ void load(const T* src, int j0, float (&s)[C::kVecs][4]) const {
    const T* const at = base(src, j0);
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) load4(at + offset(c), s[c]);
  }
  template <typename T>
  __device__ __forceinline__ void store(T* dst, int j0, const float (&s)[4], int c) const {
    store4_global(base(dst, j0) + offset(c), s);
  }
};

/// The verify's element map: the tensor-core tile for the WY form of vk, else GdnTileMap.
template <class C, bool kMma = C::kLayout == kLayoutVK&& C::kPath == kReplayWy>
struct GdnReplayVerifyTile {
  using type = GdnTileMap<C>;
};
template <class C>
struct GdnReplayVerifyTile<C, true> {
  using type = GdnReplayMmaTile<C>;
};

}  // namespace wyjit_kernels
