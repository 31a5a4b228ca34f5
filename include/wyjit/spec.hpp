// SPDX-License-Identifier: Apache-2.0
/// @file spec.hpp
/// @brief KernelSpec: every compile-time choice of a kernel variant, typed.
///
/// A spec has one canonical name, e.g. `gdn_verify.k4.io_bf16.st_f32.strided.vk.d128`,
/// and `parse_spec(format_spec(s)) == s` for every valid spec.
#pragma once

#include <compare>
#include <string>
#include <string_view>

namespace wyjit {

/// Kernel family.
enum class Family {
  gdn_verify,  ///< WY-form gated delta rule verify of K tokens
};

/// Element type of inputs/outputs or of the recurrent state. Arithmetic is always fp32.
enum class DType { f32, f16, bf16 };

/// How a launch finds each sequence's states.
enum class Addressing {
  strided,  ///< base pointers plus explicit per-sequence and per-token strides
  table,    ///< device tables of per-sequence pointers
  slot,     ///< one state pool indexed by int32 read/write slots
};

/// Memory layout of one head's state.
enum class Layout {
  vk,  ///< [dv][dk]: dk contiguous
  kv,  ///< [dk][dv]: dv contiguous
};

/// One kernel variant. Compare, hash and print it; never build one from strings by hand.
struct KernelSpec {
  Family family = Family::gdn_verify;
  int k = 4;                 ///< tokens verified per sequence, 1..32
  DType io = DType::bf16;    ///< q, k, v, out (and raw gating inputs)
  DType state = DType::f32;  ///< recurrent state storage
  Addressing addressing = Addressing::strided;
  Layout layout = Layout::vk;
  int dk = 128;               ///< key head dim: 64, 128 or 256
  int dv = 128;               ///< value head dim: 64, 128 or 256
  bool l2norm_qk = false;     ///< normalise q and k rows in the kernel
  bool fused_gating = false;  ///< compute g and beta from raw a, b, A_log, dt_bias

  friend auto operator<=>(const KernelSpec&, const KernelSpec&) = default;
};

/// Canonical name: `family.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]`
/// (`dkA.dvB` replaces `dD` when the head dims differ).
std::string format_spec(const KernelSpec& spec);

/// Inverse of format_spec. Throws Error(invalid_spec) naming the bad field and the allowed values.
KernelSpec parse_spec(std::string_view name);

/// Throws Error(invalid_spec) naming the first field outside what this build supports.
void validate_spec(const KernelSpec& spec);

const char* to_string(Family f) noexcept;
const char* to_string(DType t) noexcept;
const char* to_string(Addressing a) noexcept;
const char* to_string(Layout l) noexcept;

/// Bytes of one element of `t`.
int dtype_size(DType t) noexcept;

}  // namespace wyjit
