// SPDX-License-Identifier: Apache-2.0
// A gdn_verify variant's compile-time configuration.
#pragma once

#include "common/gdn_tile.cuh"
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

}  // namespace wyjit_kernels
