// SPDX-License-Identifier: Apache-2.0
// Guards and launch of gdn_verify. Guards first, with the actual values; then one driver call.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "driver/driver_api.hpp"
#include "gdn_verify_params.cuh"
#include "launch/guard.hpp"
#include "launch/launch_geometry.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit {

namespace {

using detail::Guard;

}  // namespace

void check_gdn_verify_args(const KernelSpec& spec, const GdnVerifyArgs& a) {
  const Guard guard("launch_gdn_verify", spec);
  if (spec.family != Family::gdn_verify) guard.fail("the kernel is not a gdn_verify variant");
  guard.equal("k", a.k, spec.k, "the variant's K");
  guard.equal("dk", a.dk, spec.dk, "the variant's dk");
  guard.equal("dv", a.dv, spec.dv, "the variant's dv");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.at_least("num_k_heads", a.num_k_heads, 1, "at least one key head");
  guard.at_least("num_v_heads", a.num_v_heads, 1, "at least one value head");
  if (a.num_v_heads % a.num_k_heads != 0) {
    guard.fail("args.num_v_heads is " + std::to_string(a.num_v_heads) +
               ", must be a multiple of args.num_k_heads = " + std::to_string(a.num_k_heads));
  }
  if (!std::isfinite(a.scale)) guard.fail("args.scale is " + std::to_string(a.scale));
  const std::int64_t blocks = static_cast<std::int64_t>(a.batch) * a.num_v_heads *
                              detail::launch_geometry(spec).blocks_per_head;
  if (blocks > std::numeric_limits<int>::max()) {
    guard.fail("batch " + std::to_string(a.batch) + " x num_v_heads " +
               std::to_string(a.num_v_heads) + " needs " + std::to_string(blocks) +
               " blocks, beyond the grid limit 2147483647");
  }

  const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
  const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
  // NOTE: q, k, v and state rows are read 4 elements at a time (16 B for fp32).
  guard.pointer("q", a.q, 4 * io);
  guard.pointer("k_in", a.k_in, 4 * io);
  guard.pointer("v", a.v, 4 * io);
  guard.pointer("out", a.out, io);
  if (spec.fused_gating) {
    guard.pointer("a", a.a, io);
    guard.pointer("b", a.b, io);
    guard.pointer("a_log", a.a_log, 4);
    guard.pointer("dt_bias", a.dt_bias, 4);
  } else {
    guard.pointer("g", a.g, 4);
    guard.pointer("beta", a.beta, 4);
  }
  const std::size_t state_align = spec.layout == Layout::vk ? 4 * st : st;

  guard.at_least("qk_stride", a.qk_stride, std::int64_t{a.num_k_heads} * a.dk, "num_k_heads*dk");
  guard.multiple_of("qk_stride", a.qk_stride, 4, "rows are read 4 elements at a time");
  guard.at_least("v_stride", a.v_stride, std::int64_t{a.num_v_heads} * a.dv, "num_v_heads*dv");
  guard.multiple_of("v_stride", a.v_stride, 4, "rows are read 4 elements at a time");
  guard.at_least("o_stride", a.o_stride, std::int64_t{a.num_v_heads} * a.dv, "num_v_heads*dv");
  guard.at_least("gb_stride", a.gb_stride, a.num_v_heads, "num_v_heads");
  const std::int64_t tile = std::int64_t{a.num_v_heads} * a.dk * a.dv;
  switch (spec.addressing) {
    case Addressing::strided:
      guard.pointer("state", a.state, state_align);
      if (spec.k > 1) guard.pointer("inter", a.inter, state_align);
      if (a.batch > 1) {
        guard.at_least("state_seq_stride", a.state_seq_stride, tile, "num_v_heads*dk*dv");
      }
      guard.multiple_of("state_seq_stride", a.state_seq_stride, 4, "state tiles are 4-aligned");
      if (spec.k > 1) {
        guard.at_least("inter_seq_stride", a.inter_seq_stride, 0, "non-negative");
        guard.at_least("inter_tok_stride", a.inter_tok_stride, 0, "non-negative");
        guard.multiple_of("inter_seq_stride", a.inter_seq_stride, 4, "state tiles are 4-aligned");
        guard.multiple_of("inter_tok_stride", a.inter_tok_stride, 4, "state tiles are 4-aligned");
        detail::check_disjoint_inter_states(guard, a.batch, a.k, a.inter_seq_stride,
                                            a.inter_tok_stride, tile,
                                            "one state is num_v_heads*dk*dv elements");
      }
      break;
    case Addressing::table:
      if (a.tables == nullptr) {
        guard.fail(
            "args.tables is null: stage the pointer tables first (GdnTableStager::stage) "
            "and pass its device_tables()");
      }
      guard.pointer("tables", a.tables, alignof(void*));
      guard.at_least("slab_stride", a.slab_stride, a.batch, "one entry per sequence in a slab");
      break;
    case Addressing::slot:
      guard.pointer("state", a.state, state_align);
      guard.at_least("num_slots", a.num_slots, 1, "the pool holds at least one slot");
      guard.at_least("slot_stride", a.slot_stride, tile, "num_v_heads*dk*dv");
      guard.multiple_of("slot_stride", a.slot_stride, 4, "state tiles are 4-aligned");
      guard.pointer("read_slot", a.read_slot, alignof(std::int32_t));
      guard.pointer("write_slot", a.write_slot, alignof(std::int32_t));
      guard.at_least("write_slot_stride", a.write_slot_stride, spec.k, "K write slots a sequence");
      break;
  }
}

void launch_gdn_verify(const Kernel& kernel, const GdnVerifyArgs& a, CUstream stream) {
  check_gdn_verify_args(kernel.spec(), a);
  if (kernel.handle() == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                "launch_gdn_verify(" + format_spec(kernel.spec()) +
                    "): the kernel has no function handle (get it from Jit::kernel)");
  }
  wyjit_kernels::GdnVerifyParams params{
      .q = a.q,
      .k = a.k_in,
      .v = a.v,
      .g = a.g,
      .beta = a.beta,
      .a = a.a,
      .b = a.b,
      .a_log = a.a_log,
      .dt_bias = a.dt_bias,
      .out = a.out,
      .state = a.state,
      .inter = a.inter,
      .qk_stride = a.qk_stride,
      .v_stride = a.v_stride,
      .gb_stride = a.gb_stride,
      .o_stride = a.o_stride,
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
      .num_k_heads = a.num_k_heads,
      .num_v_heads = a.num_v_heads,
      .scale = a.scale,
  };
  static_assert(std::is_trivially_copyable_v<wyjit_kernels::GdnVerifyParams>);
  void* kernel_args[] = {&params};
  const detail::LaunchGeometry geometry = detail::launch_geometry(kernel.spec());
  const auto blocks = static_cast<unsigned>(a.batch * a.num_v_heads * geometry.blocks_per_head);
  WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel.handle()), blocks, 1, 1,
                                static_cast<unsigned>(geometry.threads), 1, 1,
                                static_cast<unsigned>(geometry.smem_bytes), stream, kernel_args,
                                nullptr));
}

}  // namespace wyjit
