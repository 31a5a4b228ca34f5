// SPDX-License-Identifier: Apache-2.0
/// @file spec.hpp
/// @brief KernelSpec: a variant of one of the kernel families, typed; its canonical name and the
///        field tables every reader iterates.
///
/// A spec has one canonical name, e.g. `gdn_verify.k4.io_bf16.st_f32.strided.vk.d128` or
/// `conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.silu`, and
/// `parse_spec(format_spec(s)) == s` for every valid spec. The name is the family's name
/// followed by its fields as FieldInfo spells them (family_fields()).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "wyjit/types.hpp"
// The families, one header each. Adding a family: its header here and its spec in KernelSpec.
#include "wyjit/conv1d_update.hpp"
#include "wyjit/gdn_replay.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit {

/// One kernel variant: the spec of one family. Compare, hash and print it.
using KernelSpec = std::variant<GdnVerifySpec, Conv1dUpdateSpec, GdnReplaySpec>;

/// The canonical name (see the family headers for each grammar).
WYJIT_API std::string format_spec(const KernelSpec& spec);

/// Inverse of format_spec. Throws Error(invalid_spec) naming the bad field and the allowed values.
WYJIT_API KernelSpec parse_spec(std::string_view name);

/// Throws Error(invalid_spec) naming the first field outside what this build supports.
WYJIT_API void validate_spec(const KernelSpec& spec);

/// The variants `wyjit precompile --all` builds and CI compiles: per family, the product of its
/// fields' standard values (FieldInfo::standard), families in KernelSpec's order. gdn_verify:
/// io f32, f16 and bf16, state f32, every addressing mode, layout vk, dk = dv = 128, K 1..17,
/// ordered by io, then addressing, then K; conv1d_update as Qwen3-Next and Qwen3.5 run it: io
/// bf16, W 4, weights in the io dtype, SiLU, no bias, both rollback forms, every addressing
/// mode, K 1..17, ordered by rollback, then addressing, then K.
WYJIT_API std::vector<KernelSpec> standard_matrix();

/// The family's name (`gdn_verify`, ...).
WYJIT_API std::string_view family_name(const KernelSpec& spec) noexcept;

/// Every family's name, in KernelSpec's order.
WYJIT_API std::vector<std::string_view> family_names();

/// The fields of family `family`, in name order. Throws Error(invalid_spec) for an unknown family.
WYJIT_API std::span<const FieldInfo> family_fields(std::string_view family);

/// The value of `field` in `spec` as text: a number, a choice's name, or `on` / `off`.
/// Throws Error(invalid_spec) when the family has no such field.
WYJIT_API std::string field_value(const KernelSpec& spec, std::string_view field);

/// The spec of `family` with the given fields set (each value as field_value prints it, or for
/// a choice field with FieldInfo::same_as that field's name, e.g. `weight` = `io`) and the
/// others at their defaults; validated. Throws
/// Error(invalid_spec) naming the field and the allowed values.
WYJIT_API KernelSpec make_spec(std::string_view family,
                               std::span<const std::pair<std::string, std::string>> fields);

}  // namespace wyjit
