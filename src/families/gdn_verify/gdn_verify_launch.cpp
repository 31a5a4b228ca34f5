// SPDX-License-Identifier: Apache-2.0
// gdn_verify's guards and launch plan. Guards first, with the actual values; then one launch.
#include <cstdint>
#include <string>

#include "capi/capi_family.hpp"
#include "families/gdn_common/gdn_tokens.hpp"
#include "gdn_verify/gdn_verify_params.cuh"
#include "launch/guard.hpp"
#include "launch/launch.hpp"
#include "launch/state_refs_guard.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit {

namespace {

constexpr const char* kFunction = "launch_gdn_verify";

std::int64_t blocks_per_head(const GdnVerifySpec& spec) {
  return spec.dv / wyjit_kernels::gdn_block_cols(spec.dk, detail::kernel_layout_arg(spec.layout));
}

}  // namespace

void check_gdn_verify_args(const GdnVerifySpec& spec, const GdnVerifyArgs& a) {
  const KernelSpec variant = spec;
  const detail::Guard guard(kFunction, variant);
  detail::check_gdn_tokens(guard,
                           {.k = spec.k,
                            .dk = spec.dk,
                            .dv = spec.dv,
                            .io = spec.io,
                            .fused_gating = spec.fused_gating,
                            .blocks_per_sequence_head = blocks_per_head(spec)},
                           a);
  const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
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
      .tokens = detail::kernel_tokens(a),
      .states = detail::kernel_state_refs(a.states),
      .batch = a.batch,
  };
  const detail::LaunchPlan plan{
      .role = 0,
      .grid = static_cast<unsigned>(a.batch * a.num_v_heads * blocks_per_head(spec)),
      .block = static_cast<unsigned>(wyjit_kernels::gdn_threads()),
      .smem_bytes = static_cast<unsigned>(
          wyjit_kernels::gdn_smem_bytes(spec.k, spec.dk, detail::kernel_layout_arg(spec.layout))),
  };
  detail::launch_with(kernel, kFunction, plan, params, stream);
}

}  // namespace wyjit

WYJIT_C_LAUNCH(gdn_verify, wyjit::GdnVerifySpec, wyjit_gdn_verify_args,
               wyjit::check_gdn_verify_args, wyjit::launch_gdn_verify)
