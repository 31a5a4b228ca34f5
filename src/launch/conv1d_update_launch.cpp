// SPDX-License-Identifier: Apache-2.0
// Guards and launch of conv1d_update. Guards first, with the actual values; then one driver call.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "conv1d_update_params.cuh"
#include "driver/driver_api.hpp"
#include "launch/guard.hpp"
#include "launch/launch_geometry.hpp"
#include "wyjit/conv1d_update.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

namespace {

using detail::Guard;

constexpr const char* kFunction = "launch_conv1d_update";

std::int64_t channel_blocks(const Conv1dUpdateArgs& a) {
  const std::int64_t per_block = wyjit_kernels::conv1d_block_channels();
  return (std::int64_t{a.channels} + per_block - 1) / per_block;
}

}  // namespace

void check_conv1d_update_args(const KernelSpec& spec, const Conv1dUpdateArgs& a) {
  const Guard guard(kFunction, spec);
  if (spec.family != Family::conv1d_update) {
    guard.fail("the kernel is not a conv1d_update variant");
  }
  const bool window = spec.rollback == Rollback::window;
  guard.equal("k", a.k, spec.k, "the variant's K");
  guard.equal("width", a.width, spec.width, "the variant's W");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.at_least("channels", a.channels, 1, "at least one channel");
  const std::int64_t blocks = std::int64_t{a.batch} * channel_blocks(a);
  if (blocks > std::numeric_limits<int>::max()) {
    guard.fail("batch " + std::to_string(a.batch) + " x channels " + std::to_string(a.channels) +
               " needs " + std::to_string(blocks) + " blocks, beyond the grid limit 2147483647");
  }

  const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
  const std::size_t wt = static_cast<std::size_t>(dtype_size(spec.weight));
  // NOTE: the kernel moves 4 elements at a time only where pointers and strides allow it, and
  // checks that itself; the contract asks for element alignment alone.
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
    tile = std::int64_t{a.channels} * a.state_channel_stride;
  } else if (a.state_channel_stride == 1) {
    guard.at_least("state_col_stride", a.state_col_stride, a.channels,
                   "[state_cols][channels] tiles: a column's channels end before the next's");
    tile = a.state_cols * a.state_col_stride;
  } else {
    guard.fail("args.state_channel_stride is " + std::to_string(a.state_channel_stride) +
               " and args.state_col_stride is " + std::to_string(a.state_col_stride) +
               ": one of them must be 1 ([state_cols][channels] or [channels][state_cols] tiles)");
  }
  const bool inter = !window && spec.k > 1;
  switch (spec.addressing) {
    case Addressing::strided:
      guard.pointer("state", a.state, io, kElement);
      if (a.batch > 1) {
        guard.at_least("state_seq_stride", a.state_seq_stride, tile, "the elements a tile spans");
      }
      if (inter) {
        guard.pointer("inter", a.inter, io, kElement);
        guard.at_least("inter_seq_stride", a.inter_seq_stride, 0, "non-negative");
        guard.at_least("inter_tok_stride", a.inter_tok_stride, 0, "non-negative");
        detail::check_disjoint_inter_states(guard, a.batch, a.k, a.inter_seq_stride,
                                            a.inter_tok_stride, tile,
                                            "the elements a state tile spans");
      }
      break;
    case Addressing::table:
      if (a.tables == nullptr) {
        guard.fail(
            "args.tables is null: stage the pointer tables in device memory (e.g. "
            "GdnTableStager::stage) and pass their address");
      }
      guard.pointer("tables", a.tables, alignof(void*), kElement);
      if (inter) {
        guard.at_least("slab_stride", a.slab_stride, a.batch, "one entry per sequence in a slab");
      }
      break;
    case Addressing::slot:
      guard.pointer("state", a.state, io, kElement);
      guard.at_least("num_slots", a.num_slots, 1, "the pool holds at least one slot");
      guard.at_least("slot_stride", a.slot_stride, tile, "the elements a tile spans");
      guard.pointer("read_slot", a.read_slot, alignof(std::int32_t), kElement);
      guard.pointer("write_slot", a.write_slot, alignof(std::int32_t), kElement);
      if (window) {
        guard.at_least("write_slot_stride", a.write_slot_stride, 1, "one write slot a sequence");
      } else {
        guard.at_least("write_slot_stride", a.write_slot_stride, spec.k,
                       "K write slots a sequence");
      }
      break;
  }
}

void launch_conv1d_update(const Kernel& kernel, const Conv1dUpdateArgs& a, CUstream stream) {
  check_conv1d_update_args(kernel.spec(), a);
  if (kernel.handle() == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(kFunction) + "(" + format_spec(kernel.spec()) +
                    "): the kernel has no function handle (get it from Jit::kernel)");
  }
  const auto blocks_per_sequence = static_cast<int>(channel_blocks(a));
  wyjit_kernels::Conv1dUpdateParams params{
      .x = a.x,
      .y = a.y,
      .weight = a.weight,
      .bias = a.bias,
      .state = a.state,
      .inter = a.inter,
      .window_offset = a.window_offset,
      .x_stride = a.x_stride,
      .y_stride = a.y_stride,
      .state_cols = a.state_cols,
      .state_channel_stride = a.state_channel_stride,
      .state_col_stride = a.state_col_stride,
      .state_seq_stride = a.state_seq_stride,
      .inter_seq_stride = a.inter_seq_stride,
      .inter_tok_stride = a.inter_tok_stride,
      .tables = a.tables,
      .slab_stride = a.slab_stride,
      .slot_stride = a.slot_stride,
      .read_slot = a.read_slot,
      .write_slot = a.write_slot,
      .write_slot_stride = a.write_slot_stride,
      .num_slots = a.num_slots,
      .batch = a.batch,
      .channels = a.channels,
      .channel_blocks = blocks_per_sequence,
  };
  static_assert(std::is_trivially_copyable_v<wyjit_kernels::Conv1dUpdateParams>);
  void* kernel_args[] = {&params};
  const detail::LaunchGeometry geometry = detail::launch_geometry(kernel.spec());
  const auto blocks = static_cast<unsigned>(a.batch * blocks_per_sequence);
  WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel.handle()), blocks, 1, 1,
                                static_cast<unsigned>(geometry.threads), 1, 1,
                                static_cast<unsigned>(geometry.smem_bytes), stream, kernel_args,
                                nullptr));
}

}  // namespace wyjit
