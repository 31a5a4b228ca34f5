// SPDX-License-Identifier: Apache-2.0
// conv1d_update's guards and launch plan (which of its two kernels, and the shape). Guards first,
// with the actual values; then one launch.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "capi/capi_family.hpp"
#include "conv1d_update/conv1d_update_params.cuh"
#include "launch/guard.hpp"
#include "launch/launch.hpp"
#include "launch/state_refs_guard.hpp"
#include "wyjit/conv1d_update.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

namespace {

using detail::Guard;

constexpr const char* kFunction = "launch_conv1d_update";
// The family's roles (conv1d_update_family.cpp).
constexpr int kWideRole = 0;
constexpr int kNarrowRole = 1;

// NOTE: the launch shape aims at a GPU of about 132 SMs (H100/H200): enough threads for ~8 warps
// an SM, and at least 2 blocks an SM where the work allows. Smaller GPUs only get more blocks
// than they need; nothing depends on it but speed.
constexpr std::int64_t kTargetThreads = 132 * 256;
constexpr std::int64_t kTargetBlocks = 2 * 132;
// Dynamic shared memory stays under the 48 KiB that needs no opt-in (s_dst takes <= 256 bytes).
constexpr std::int64_t kMaxImageBytes = 47 * 1024;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// How a launch spreads (sequence, channel group, sub-chunk) work over threads and blocks.
struct Conv1dShape {
  bool narrow = false;  // the narrow path: groups are 4-byte words, one thread a token
  int group_shift = 0;  // log2 of the channel groups a block owns
  int splits = 1;       // threads per (sequence, channel group)
  int subchunks = 1;    // sub-chunks per thread
  bool image = false;   // window tiles staged in shared memory
  std::int64_t channel_blocks = 0;
  std::int64_t blocks = 0;
  int threads = 0;
  int smem_bytes = 0;
};

// Halves per_block (channel groups a block owns, a power of two; `per_group` threads each) while
// the launch has fewer than 2 blocks an SM and a block keeps at least `min_threads` threads,
// then sets the block geometry of `s`. Returns the final per_block.
int set_block_geometry(Conv1dShape& s, std::int64_t batch, std::int64_t groups, int per_block,
                       int per_group, int min_threads) {
  while (per_block > 1 && per_block / 2 * per_group >= min_threads &&
         batch * ceil_div(groups, per_block) < kTargetBlocks) {
    per_block /= 2;
  }
  while ((1 << s.group_shift) < per_block) ++s.group_shift;
  s.channel_blocks = ceil_div(groups, per_block);
  s.blocks = batch * s.channel_blocks;
  s.threads = per_block * per_group;
  return per_block;
}

// NOTE: the narrow kernel's threads each make one memory round trip: past about one wave of
// them (~67k threads when its registers allowed 4 blocks of 128 threads an SM) it pays a round
// trip a wave and the wide one wins (measured: docs/PERFORMANCE.md, "v3: the narrow path").
bool conv1d_take_narrow(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  switch (a.path) {
    case WYJIT_CONV1D_PATH_WIDE:
      return false;
    case WYJIT_CONV1D_PATH_NARROW:
      return true;
    default:
      break;
  }
  const std::int64_t words = ceil_div(a.channels, 4 / dtype_size(spec.io));
  // NOTE: batch x words x K, divided rather than multiplied: with int32 batch and channels the
  // product may be beyond int64 (batch x words is not).
  return std::int64_t{a.batch} * words <= 2 * kTargetThreads / spec.k;
}

// The narrow path: a block owns a power of two of 4-byte words of channels and all K tokens of
// them (K threads a word), as many words as fit in a block while the launch has >= 2 blocks an
// SM, and at least two warps (measured as fast as one-warp blocks or faster at every K: "v3" in
// PERFORMANCE.md).
Conv1dShape conv1d_narrow_shape(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  Conv1dShape s;
  s.narrow = true;
  const std::int64_t words = ceil_div(a.channels, 4 / dtype_size(spec.io));
  const int max_threads = wyjit_kernels::conv1d_threads();
  int per_block = 1;
  while (per_block * 2 * spec.k <= max_threads && per_block < words) per_block *= 2;
  set_block_geometry(s, a.batch, words, per_block, spec.k, 64);
  return s;
}

Conv1dShape conv1d_shape(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  if (conv1d_take_narrow(spec, a)) return conv1d_narrow_shape(spec, a);
  Conv1dShape s;
  const std::int64_t groups =
      ceil_div(a.channels, wyjit_kernels::conv1d_lanes(dtype_size(spec.io)));
  const int sub = wyjit_kernels::conv1d_sub_tokens(spec.k);
  const int chunks = static_cast<int>(ceil_div(spec.k, sub));
  // Split a sequence's tokens over threads only while the launch has too few of them.
  const std::int64_t one_each = std::int64_t{a.batch} * groups;
  s.splits =
      static_cast<int>(std::clamp<std::int64_t>(ceil_div(kTargetThreads, one_each), 1, chunks));
  s.subchunks = static_cast<int>(ceil_div(chunks, s.splits));
  s.splits = static_cast<int>(ceil_div(chunks, s.subchunks));
  const int max_threads = wyjit_kernels::conv1d_threads();
  int per_block = 1;  // channel groups a block owns, a power of two
  while (per_block * 2 * s.splits <= max_threads && per_block < groups) per_block *= 2;
  // NOTE: the window form with [channels][cols] tiles stages the block's rows in shared memory
  // (the kernel does so when the tiles are 16-byte aligned); rows too long for that go element
  // by element. The stride is bounded before it is multiplied: the check computes this shape
  // before the stride guards, so any int64 may come in (the bytes are linear in the columns).
  s.image = spec.rollback == Rollback::window && a.state_col_stride == 1 &&
            a.state_channel_stride >= 0 &&
            a.state_channel_stride <= kMaxImageBytes / wyjit_kernels::conv1d_image_bytes(1, 1);
  if (s.image) {
    while (per_block > 1 &&
           wyjit_kernels::conv1d_image_bytes(per_block, a.state_channel_stride) > kMaxImageBytes) {
      per_block /= 2;
    }
  }
  per_block = set_block_geometry(s, a.batch, groups, per_block, s.splits, 32);
  s.smem_bytes =
      s.image
          ? static_cast<int>(wyjit_kernels::conv1d_image_bytes(per_block, a.state_channel_stride))
          : 0;
  return s;
}

// Whether p is a multiple of `bytes` (a power of two).
bool aligned(const void* p, std::uintptr_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0;
}

// The token loop's mode every thread with a whole channel group would pick, where the host
// knows every address it checks (strided addressing): x and y rows, the tiles read and written
// all 16-byte vectors. -1 (each thread decides) otherwise.
int conv1d_host_mode(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a,
                     const Conv1dShape& shape) {
  if (spec.addressing != Addressing::strided) return -1;
  const std::int64_t io = dtype_size(spec.io);
  const auto vec = [&](std::int64_t elems) { return (elems * io) % 16 == 0; };
  if (!aligned(a.x, 16) || !aligned(a.y, 16) || !vec(a.x_stride) || !vec(a.y_stride)) return -1;
  if (!aligned(a.states.state, 16) || (a.batch > 1 && !vec(a.states.state_seq_stride))) return -1;
  const bool window = spec.rollback == Rollback::window;
  if (!window && spec.k > 1) {
    if (!aligned(a.states.inter, 16) || (a.batch > 1 && !vec(a.states.inter_seq_stride)) ||
        (spec.k > 2 && !vec(a.states.inter_tok_stride))) {
      return -1;
    }
  }
  const bool rows = a.state_col_stride == 1;
  if (window && shape.image) return wyjit_kernels::kModeImage;
  if (!window && rows && a.state_channel_stride == spec.width - 1) {
    return wyjit_kernels::kModeRegion;
  }
  if (!rows && vec(a.state_col_stride)) return wyjit_kernels::kModeColumns;
  return -1;
}

// The narrow path's mode: 1 where the host knows every access of every thread is a whole
// 4-byte word (strided addressing, whole words of channels, word-aligned pointers and strides),
// -1 (per-element accesses where needed) otherwise.
int conv1d_narrow_mode(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  if (spec.addressing != Addressing::strided) return -1;
  const std::int64_t io = dtype_size(spec.io);
  const auto word = [&](std::int64_t elems) { return (elems * io) % 4 == 0; };
  const std::int64_t wbytes = (4 / io) * spec.width * dtype_size(spec.weight);
  bool ok = word(a.channels) && aligned(a.x, 4) && aligned(a.y, 4) && word(a.x_stride) &&
            word(a.y_stride) && aligned(a.states.state, 4) && word(a.states.state_seq_stride) &&
            aligned(a.weight, 4) && wbytes % 4 == 0;
  if (a.state_channel_stride == 1) ok = ok && word(a.state_col_stride);
  if (spec.rollback == Rollback::intermediate && spec.k > 1) {
    ok = ok && aligned(a.states.inter, 4) && word(a.states.inter_seq_stride) &&
         word(a.states.inter_tok_stride);
  }
  return ok ? 1 : -1;
}

// NOTE: the per-warp staging of region-mode states costs 0.1-0.2x at N = 1 and pays from N = 32:
// off while one thread per (sequence, channel group) gives a quarter of the threads the launch
// aims at or fewer.
bool conv1d_use_xch(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  const std::int64_t groups =
      ceil_div(a.channels, wyjit_kernels::conv1d_lanes(dtype_size(spec.io)));
  return std::int64_t{a.batch} * groups * 4 > kTargetThreads;
}

}  // namespace

void check_conv1d_update_args(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& a) {
  const KernelSpec variant = spec;
  const Guard guard(kFunction, variant);
  const bool window = spec.rollback == Rollback::window;
  guard.equal("k", a.k, spec.k, "the variant's K");
  guard.equal("width", a.width, spec.width, "the variant's W");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.at_least("channels", a.channels, 1, "at least one channel");
  if (a.path < WYJIT_CONV1D_PATH_AUTOMATIC || a.path > WYJIT_CONV1D_PATH_NARROW) {
    guard.fail("args.path is " + std::to_string(a.path) +
               ": use WYJIT_CONV1D_PATH_AUTOMATIC (0), _WIDE (1) or _NARROW (2)");
  }
  const std::int64_t blocks = conv1d_shape(spec, a).blocks;
  if (blocks > std::numeric_limits<int>::max()) {
    guard.fail("batch " + std::to_string(a.batch) + " x channels " + std::to_string(a.channels) +
               " needs " + std::to_string(blocks) + " blocks, beyond the grid limit 2147483647");
  }

  const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
  const std::size_t wt = static_cast<std::size_t>(dtype_size(spec.weight));
  // NOTE: the kernel moves 16 bytes at a time only where pointers and strides allow it, and
  // checks that itself (per-element accesses otherwise); the contract asks for element
  // alignment alone.
  constexpr const char* kElement = "element alignment";
  guard.pointer("x", a.x, io, kElement);
  guard.pointer("y", a.y, io, kElement);
  guard.pointer("weight", a.weight, wt, kElement);
  if (spec.bias) guard.pointer("bias", a.bias, wt, kElement);
  guard.at_least("x_stride", a.x_stride, a.channels, "channels");
  guard.at_least("y_stride", a.y_stride, a.channels, "channels");

  const std::int64_t hist = spec.width - 1;
  if (window) {
    guard.at_least("state_cols", a.state_cols, hist + spec.k,
                   "W-1+K: the window form keeps W-1+K columns per channel");
    guard.pointer("window_offset", a.window_offset, alignof(std::int32_t), kElement);
  } else {
    guard.at_least("state_cols", a.state_cols, hist, "W-1: the conv state of a channel");
  }
  // Elements one tile spans, in either of its two shapes.
  std::int64_t tile = 0;
  if (a.state_col_stride == 1) {
    guard.at_least("state_channel_stride", a.state_channel_stride, a.state_cols,
                   "[channels][state_cols] tiles: a channel's columns end before the next's");
    tile = guard.product("a tile spans", "channels", a.channels, "state_channel_stride",
                         a.state_channel_stride);
  } else if (a.state_channel_stride == 1) {
    guard.at_least("state_col_stride", a.state_col_stride, a.channels,
                   "[state_cols][channels] tiles: a column's channels end before the next's");
    tile = guard.product("a tile spans", "state_cols", a.state_cols, "state_col_stride",
                         a.state_col_stride);
  } else {
    guard.fail("args.state_channel_stride is " + std::to_string(a.state_channel_stride) +
               " and args.state_col_stride is " + std::to_string(a.state_col_stride) +
               ": one of them must be 1 ([state_cols][channels] or [channels][state_cols] tiles)");
  }
  detail::check_state_refs(guard, spec.addressing, a.states,
                           {
                               .batch = a.batch,
                               .writes = window ? 1 : spec.k,
                               .tile = tile,
                               .tile_text = "the elements a tile spans",
                               .alignment = io,
                               .alignment_why = kElement,
                           });
}

void launch_conv1d_update(const Kernel& kernel, const Conv1dUpdateArgs& a, CUstream stream) {
  const Conv1dUpdateSpec& spec = detail::spec_of<Conv1dUpdateSpec>(kernel, kFunction);
  check_conv1d_update_args(spec, a);
  const Conv1dShape shape = conv1d_shape(spec, a);
  const wyjit_kernels::Conv1dBlockDivider divider =
      wyjit_kernels::conv1d_block_divider(shape.channel_blocks);
  wyjit_kernels::Conv1dUpdateParams params{
      .x = a.x,
      .y = a.y,
      .weight = a.weight,
      .bias = a.bias,
      .window_offset = a.window_offset,
      .x_stride = a.x_stride,
      .y_stride = a.y_stride,
      .state_cols = a.state_cols,
      .state_channel_stride = a.state_channel_stride,
      .state_col_stride = a.state_col_stride,
      .states = detail::kernel_state_refs(a.states),
      .batch = a.batch,
      .channels = a.channels,
      .channel_blocks = static_cast<int>(shape.channel_blocks),
      .block_div_mul = divider.mul,
      .block_div_shift = divider.shift,
      .group_shift = shape.group_shift,
      .subchunks = shape.subchunks,
      .image = shape.image ? 1 : 0,
      .mode = shape.narrow ? conv1d_narrow_mode(spec, a) : conv1d_host_mode(spec, a, shape),
      .xch = conv1d_use_xch(spec, a) ? 1 : 0,
  };
  const detail::LaunchPlan plan{
      .role = shape.narrow ? kNarrowRole : kWideRole,
      .grid = static_cast<unsigned>(shape.blocks),
      .block = static_cast<unsigned>(shape.threads),
      .smem_bytes = static_cast<unsigned>(shape.smem_bytes),
  };
  detail::launch_with(kernel, kFunction, plan, params, stream);
}

}  // namespace wyjit

WYJIT_C_LAUNCH(conv1d_update, wyjit::Conv1dUpdateSpec, wyjit_conv1d_update_args,
               wyjit::check_conv1d_update_args, wyjit::launch_conv1d_update)
