// SPDX-License-Identifier: Apache-2.0
// What the GDN families (classic and replay verify) share on the host: the token inputs'
// guards and their kernel-side form (kernel_src/common/gdn_tokens.cuh). Both families' argument
// structs name these fields alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/gdn_tokens.cuh"
#include "launch/guard.hpp"
#include "wyjit/types.hpp"

namespace wyjit::detail {

/// What the token guards need of a variant.
struct GdnTokenShape {
  int k = 0;
  int dk = 0;
  int dv = 0;
  DType io = DType::bf16;
  bool fused_gating = false;
  std::int64_t blocks_per_sequence_head = 1;  ///< for the grid limit
};

/// Refuses a grid of batch x num_v_heads x `per_pair` blocks beyond the launch limit. The
/// product is never formed past the limit: batch x num_v_heads fits in int64, times `per_pair`
/// it may not.
inline void check_gdn_grid(const Guard& guard, std::int32_t batch, std::int32_t num_v_heads,
                           std::int64_t per_pair) {
  const std::int64_t pairs = static_cast<std::int64_t>(batch) * num_v_heads;
  if (pairs > std::numeric_limits<int>::max() / per_pair) {
    guard.fail("batch " + std::to_string(batch) + " x num_v_heads " + std::to_string(num_v_heads) +
               " needs " + std::to_string(pairs) + " x " + std::to_string(per_pair) +
               " blocks, beyond the grid limit 2147483647");
  }
}

/// The guards of the token inputs of `a` (GdnVerifyArgs or GdnReplayVerifyArgs).
template <class Args>
void check_gdn_tokens(const Guard& guard, const GdnTokenShape& s, const Args& a) {
  guard.equal("k", a.k, s.k, "the variant's K");
  guard.equal("dk", a.dk, s.dk, "the variant's dk");
  guard.equal("dv", a.dv, s.dv, "the variant's dv");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.at_least("num_k_heads", a.num_k_heads, 1, "at least one key head");
  guard.at_least("num_v_heads", a.num_v_heads, 1, "at least one value head");
  if (a.num_v_heads % a.num_k_heads != 0) {
    guard.fail("args.num_v_heads is " + std::to_string(a.num_v_heads) +
               ", must be a multiple of args.num_k_heads = " + std::to_string(a.num_k_heads));
  }
  if (!std::isfinite(a.scale)) guard.fail("args.scale is " + std::to_string(a.scale));
  check_gdn_grid(guard, a.batch, a.num_v_heads, s.blocks_per_sequence_head);
  const std::size_t io = static_cast<std::size_t>(dtype_size(s.io));
  // NOTE: q, k and v rows are read 4 elements at a time (16 B for fp32).
  guard.pointer("q", a.q, 4 * io);
  guard.pointer("k_in", a.k_in, 4 * io);
  guard.pointer("v", a.v, 4 * io);
  guard.pointer("out", a.out, io);
  if (s.fused_gating) {
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
}

/// The token inputs of `a` in the kernels' parameter block.
template <class Args>
wyjit_kernels::GdnTokenInputs kernel_tokens(const Args& a) noexcept {
  return wyjit_kernels::GdnTokenInputs{
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
      .num_k_heads = a.num_k_heads,
      .num_v_heads = a.num_v_heads,
      .scale = a.scale,
  };
}

/// The kernel's layout argument of `l`.
inline int kernel_layout_arg(Layout l) noexcept {
  return l == Layout::vk ? wyjit_kernels::kLayoutVK : wyjit_kernels::kLayoutKV;
}

}  // namespace wyjit::detail
