// SPDX-License-Identifier: Apache-2.0
// gdn_verify's guards and launch plan. Guards first, with the actual values; then one launch.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "capi/capi_family.hpp"
#include "gdn_verify/gdn_verify_params.cuh"
#include "launch/guard.hpp"
#include "launch/launch.hpp"
#include "launch/state_refs_guard.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit {

namespace {

constexpr const char* kFunction = "launch_gdn_verify";

int layout_arg(Layout l) {
  return l == Layout::vk ? wyjit_kernels::kLayoutVK : wyjit_kernels::kLayoutKV;
}

std::int64_t blocks_per_head(const GdnVerifySpec& spec) {
  return spec.dv / wyjit_kernels::gdn_block_cols(spec.dk, layout_arg(spec.layout));
}

}  // namespace

void check_gdn_verify_args(const GdnVerifySpec& spec, const GdnVerifyArgs& a) {
  const KernelSpec variant = spec;
  const detail::Guard guard(kFunction, variant);
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
  const std::int64_t blocks =
      static_cast<std::int64_t>(a.batch) * a.num_v_heads * blocks_per_head(spec);
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
  guard.at_least("qk_stride", a.qk_stride, std::int64_t{a.num_k_heads} * a.dk, "num_k_heads*dk");
  guard.multiple_of("qk_stride", a.qk_stride, 4, "rows are read 4 elements at a time");
  guard.at_least("v_stride", a.v_stride, std::int64_t{a.num_v_heads} * a.dv, "num_v_heads*dv");
  guard.multiple_of("v_stride", a.v_stride, 4, "rows are read 4 elements at a time");
  guard.at_least("o_stride", a.o_stride, std::int64_t{a.num_v_heads} * a.dv, "num_v_heads*dv");
  guard.at_least("gb_stride", a.gb_stride, a.num_v_heads, "num_v_heads");
  detail::check_state_refs(guard, spec.addressing, a.states,
                           {
                               .batch = a.batch,
                               .writes = spec.k,
                               .tile = std::int64_t{a.num_v_heads} * a.dk * a.dv,
                               .tile_text = "num_v_heads*dk*dv",
                               .alignment = spec.layout == Layout::vk ? 4 * st : st,
                               .alignment_why = "vector loads",
                               .stride_multiple = 4,
                           });
}

void launch_gdn_verify(const Kernel& kernel, const GdnVerifyArgs& a, CUstream stream) {
  const GdnVerifySpec& spec = detail::spec_of<GdnVerifySpec>(kernel, kFunction);
  check_gdn_verify_args(spec, a);
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
      .qk_stride = a.qk_stride,
      .v_stride = a.v_stride,
      .gb_stride = a.gb_stride,
      .o_stride = a.o_stride,
      .states = detail::kernel_state_refs(a.states),
      .batch = a.batch,
      .num_k_heads = a.num_k_heads,
      .num_v_heads = a.num_v_heads,
      .scale = a.scale,
  };
  const detail::LaunchPlan plan{
      .role = 0,
      .grid = static_cast<unsigned>(a.batch * a.num_v_heads * blocks_per_head(spec)),
      .block = static_cast<unsigned>(wyjit_kernels::gdn_threads()),
      .smem_bytes = static_cast<unsigned>(
          wyjit_kernels::gdn_smem_bytes(spec.k, spec.dk, layout_arg(spec.layout))),
  };
  detail::launch_with(kernel, kFunction, plan, params, stream);
}

}  // namespace wyjit

WYJIT_C_FAMILY(gdn_verify, wyjit::GdnVerifySpec, wyjit_gdn_verify_args,
               wyjit::check_gdn_verify_args, wyjit::launch_gdn_verify)
