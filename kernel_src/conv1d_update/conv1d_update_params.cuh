// SPDX-License-Identifier: Apache-2.0
// The conv1d_update kernel's parameter block and launch geometry. Plain C++ with no CUDA
// keywords: the host launch layer includes this same file, so both sides agree by construction.
#pragma once

#include "common/state_refs.cuh"

namespace wyjit_kernels {

enum Conv1dRollback : int { kRollbackIntermediate = 0, kRollbackWindow = 1 };

/// The token loop's modes (conv1d_update_tokens.cuh).
enum Conv1dMode : int {
  kModeGeneric = 0,  // any strides and alignment, a channel group cut by the channel count
  kModeColumns = 1,  // [cols][channels] tiles: a state column of the thread's channels is a vector
  kModeRegion = 2,   // [channels][W-1] tiles (intermediate): the thread's state is W-1 vectors
  kModeImage = 3,    // window tiles staged in shared memory (the kernel copies them out)
};

/// Passed by value to both conv1d_update kernels (wide and narrow). Strides are in elements.
///
/// A state tile is one sequence's conv state in the io dtype, oldest input first: column j of
/// channel c at c*state_channel_stride + j*state_col_stride, one of the two strides 1.
struct Conv1dUpdateParams {
  const void* x;             // [batch*K, x_stride] io
  void* y;                   // [batch*K, y_stride] io
  const void* weight;        // [channels][W] weight dtype
  const void* bias;          // [channels] weight dtype (option bias)
  const int* window_offset;  // window: [batch] first column of the history
  long long x_stride;
  long long y_stride;
  long long state_cols;            // columns of a tile
  long long state_channel_stride;  // 1: [cols][channels] tiles
  long long state_col_stride;      // 1: [channels][cols] tiles
  // S_b read; write t is the state after token t (intermediate, t = K-1 over S_b) or the
  // window (window form, t = 0)
  StateRefs states;
  int batch;
  int channels;
  // Launch shape (conv1d_launch_shape): a block owns 2^group_shift groups of conv1d_lanes()
  // channels of one sequence; thread i of a block takes group i % 2^group_shift and the
  // sub-chunks [s, s + subchunks) of conv1d_sub_tokens() tokens, s = (i >> group_shift) *
  // subchunks. Grid: batch * channel_blocks blocks.
  int channel_blocks;  // ceil(groups / 2^group_shift)
  // blockIdx.x / channel_blocks = (blockIdx.x * block_div_mul) >> (31 + block_div_shift): the
  // host's magic multiplier (conv1d_block_divider), so the kernel divides with one multiply.
  unsigned block_div_mul;
  int block_div_shift;
  int group_shift;
  int subchunks;
  int image;  // 1: window tiles [channels][W-1+K] staged in dynamic shared memory
  // The token loop's mode (Conv1dMode) for every thread with a whole channel group, decided by
  // the host where it knows every address (strided addressing); -1: each thread decides.
  // Narrow path: 1 where every access is a whole aligned 4-byte word, else -1.
  // The narrow kernel (conv1d_update_narrow.cuh): a block owns 2^group_shift 4-byte words of
  // channels x K tokens, K << group_shift threads; subchunks, image and xch are unused.
  int mode;
  int xch;  // 1: region-mode states go out through a per-warp shared buffer (large launches)
};

/// Division of a block index (< 2^31) by d >= 1 as a multiply and a shift: with l = ceil(log2 d)
/// and m = ceil(2^(31+l) / d) < 2^32, floor(i * m / 2^(31+l)) = floor(i / d) for 0 <= i < 2^31
/// (m*d - 2^(31+l) < d <= 2^l: Granlund and Montgomery, theorem 4.2).
struct Conv1dBlockDivider {
  unsigned mul;
  int shift;
};
WYJIT_HOST_DEVICE constexpr Conv1dBlockDivider conv1d_block_divider(long long d) {
  int l = 0;
  while ((1LL << l) < d) ++l;
  const unsigned long long num = 1ULL << (31 + l);
  const unsigned long long ud = static_cast<unsigned long long>(d);
  return Conv1dBlockDivider{static_cast<unsigned>((num + ud - 1) / ud), l};
}

/// Most threads in a block.
WYJIT_HOST_DEVICE constexpr int conv1d_threads() { return 128; }

/// Channels one thread owns: 16 bytes of the io dtype (8 for 16-bit types, 4 for fp32).
WYJIT_HOST_DEVICE constexpr int conv1d_lanes(int io_bytes) { return 16 / io_bytes; }

/// Most channels one block owns: conv1d_threads() groups of 16-bit lanes.
WYJIT_HOST_DEVICE constexpr int conv1d_block_channels() {
  return conv1d_threads() * conv1d_lanes(2);
}

/// Tokens of one sub-chunk: the unrolled body of the kernel's token loop.
WYJIT_HOST_DEVICE constexpr int conv1d_sub_tokens(int k) { return k < 2 ? k : 2; }

/// Shared memory a block needs to stage `groups` groups of window tiles of `cols` columns
/// (16 bytes a group and column, whatever the io dtype).
WYJIT_HOST_DEVICE constexpr long long conv1d_image_bytes(int groups, long long cols) {
  return 16LL * groups * cols;
}

}  // namespace wyjit_kernels
