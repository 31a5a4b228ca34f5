// SPDX-License-Identifier: Apache-2.0
// A conv1d_update variant's compile-time configuration, shared by its wide and narrow kernels.
#pragma once

#include "conv1d_update/conv1d_update_params.cuh"

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

  static constexpr int kLanes = conv1d_lanes(sizeof(TIo));  // channels per thread
  static constexpr int kHist = kW - 1;                      // state columns read
  static constexpr int kSub = conv1d_sub_tokens(kK);        // tokens per sub-chunk
  static constexpr int kSubChunks = (kK + kSub - 1) / kSub;
  static constexpr int kCols = kHist + kSub;  // columns of z one sub-chunk sees
  static constexpr bool kWindow = kRollback == kRollbackWindow;
  static constexpr int kWrites = kWindow ? 1 : kK;  // state tiles written
  static constexpr int kWeightWords = kLanes * kW * static_cast<int>(sizeof(TW)) / 4;
  static constexpr int kBiasWords = kLanes * static_cast<int>(sizeof(TW)) / 4;

  // NOTE: 4 blocks of 128 threads an SM cap the registers at 128: what the generic mode of the
  // token loop takes at W <= 4 (the vector modes fit in 96; a cap of 96 made the generic mode
  // and some bias variants spill). W = 8 holds twice the weights and window.
  static constexpr int kMinBlocks = kW <= 4 ? 4 : 2;

  static_assert(kK >= 1 && kK <= 32, "K in 1..32");
  static_assert(kW >= 2 && kW <= 8, "W in 2..8");
  static_assert(kLanes * sizeof(TIo) == 16, "a thread's channels are one 16-byte vector");
};

}  // namespace wyjit_kernels
