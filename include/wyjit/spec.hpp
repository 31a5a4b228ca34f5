// SPDX-License-Identifier: Apache-2.0
/// @file spec.hpp
/// @brief KernelSpec: every compile-time choice of a kernel variant, typed.
///
/// A spec has one canonical name, e.g. `gdn_verify.k4.io_bf16.st_f32.strided.vk.d128` or
/// `conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.silu`, and
/// `parse_spec(format_spec(s)) == s` for every valid spec.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace wyjit {

/// Kernel family.
enum class Family {
  gdn_verify,     ///< WY-form gated delta rule verify of K tokens
  conv1d_update,  ///< K-token causal depthwise conv1d update (see wyjit/conv1d_update.hpp)
};

/// Element type of inputs/outputs or of the recurrent state. Arithmetic is always fp32.
enum class DType { f32, f16, bf16 };

/// How a launch finds each sequence's states.
enum class Addressing {
  strided,  ///< base pointers plus explicit per-sequence and per-token strides
  table,    ///< device tables of per-sequence pointers
  slot,     ///< one state pool indexed by int32 read/write slots
};

/// How a conv1d_update variant lets the engine roll back to the last accepted token.
enum class Rollback {
  intermediate,  ///< writes the conv state after every token (t = 0..K-2) plus the final one
  window,        ///< keeps the last W-1+K inputs; the next launch reads from a per-sequence offset
};

/// Memory layout of one head's state.
enum class Layout {
  vk,  ///< [dv][dk]: dk contiguous
  kv,  ///< [dk][dv]: dv contiguous
};

/// One kernel variant. Compare, hash and print it; never build one from strings by hand.
///
/// Each family uses some of the fields; every field a family does not use must keep its
/// default (validate_spec names the field otherwise):
/// - gdn_verify: k, io, state, addressing, layout, dk, dv, l2norm_qk, fused_gating;
/// - conv1d_update: k, io, addressing, width, weight, bias, silu, rollback (its conv state is
///   stored in the io dtype).
struct KernelSpec {
  Family family = Family::gdn_verify;
  int k = 4;                 ///< tokens verified per sequence, 1..32
  DType io = DType::bf16;    ///< q, k, v, out (and raw gating inputs)
  DType state = DType::f32;  ///< recurrent state storage
  Addressing addressing = Addressing::strided;
  Layout layout = Layout::vk;
  int dk = 128;                                ///< key head dim: 64, 128 or 256
  int dv = 128;                                ///< value head dim: 64, 128 or 256
  bool l2norm_qk = false;                      ///< normalise q and k rows in the kernel
  bool fused_gating = false;                   ///< compute g and beta from raw a, b, A_log, dt_bias
  int width = 4;                               ///< conv1d_update: filter width W, 2..8
  DType weight = DType::f32;                   ///< conv1d_update: weight and bias dtype (io or f32)
  bool bias = false;                           ///< conv1d_update: add a per-channel bias
  bool silu = false;                           ///< conv1d_update: apply SiLU to the output
  Rollback rollback = Rollback::intermediate;  ///< conv1d_update: how drafts are rolled back

  friend auto operator<=>(const KernelSpec&, const KernelSpec&) = default;
};

/// Canonical name, by family:
/// - gdn_verify: `gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]` (`dkA.dvB`
///   replaces `dD` when the head dims differ), e.g. `gdn_verify.k4.io_bf16.st_f32.strided.vk.d128`;
/// - conv1d_update: `conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]`, e.g.
///   `conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu`.
///
/// K is 1..32, T one of f32, f16, bf16, addressing one of strided, table, slot, rollback one of
/// intermediate, window; options appear at most once each, in the order shown.
std::string format_spec(const KernelSpec& spec);

/// Inverse of format_spec. Throws Error(invalid_spec) naming the bad field and the allowed values.
KernelSpec parse_spec(std::string_view name);

/// Throws Error(invalid_spec) naming the first field outside what this build supports.
void validate_spec(const KernelSpec& spec);

/// The variants `wyjit precompile --all` builds and CI compiles, every addressing mode
/// validate_spec accepts and K 1..17 for each family:
/// - gdn_verify: io f32, f16 and bf16, state f32, layout vk, dk = dv = 128; ordered by io,
///   then addressing, then K;
/// - conv1d_update, as Qwen3-Next and Qwen3.5 run it: io bf16, W 4, weights in the io dtype,
///   SiLU, no bias, rollback intermediate and window; ordered by io, then rollback, then
///   addressing, then K (docs/cli.md says why other io dtypes are left out).
///
/// All gdn_verify variants come first, then all conv1d_update ones.
std::vector<KernelSpec> standard_matrix();

const char* to_string(Family f) noexcept;
const char* to_string(DType t) noexcept;
const char* to_string(Addressing a) noexcept;
const char* to_string(Layout l) noexcept;
const char* to_string(Rollback r) noexcept;

/// Bytes of one element of `t`.
int dtype_size(DType t) noexcept;

}  // namespace wyjit
