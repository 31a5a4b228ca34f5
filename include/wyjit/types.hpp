// SPDX-License-Identifier: Apache-2.0
/// @file types.hpp
/// @brief What the families' specs share: element types, addressing modes, layouts, and the
///        description of one spec field (FieldInfo) that names, checks and introspection read.
#pragma once

#include <span>
#include <string_view>

#include "wyjit/export.h"

namespace wyjit {

/// Element type of inputs/outputs or of a recurrent state. Arithmetic is always fp32.
enum class DType { f32, f16, bf16 };

/// How a launch finds each sequence's states (wyjit/state_refs.h).
enum class Addressing {
  strided,  ///< base pointers plus explicit per-sequence and per-token strides
  table,    ///< device tables of per-sequence pointers
  slot,     ///< one state pool indexed by int32 read/write slots
};

/// Memory layout of one head's GDN state.
enum class Layout {
  vk,  ///< [dv][dk]: dk contiguous
  kv,  ///< [dk][dv]: dv contiguous
};

WYJIT_API const char* to_string(DType t) noexcept;
WYJIT_API const char* to_string(Addressing a) noexcept;
WYJIT_API const char* to_string(Layout l) noexcept;

/// Bytes of one element of `t`.
WYJIT_API int dtype_size(DType t) noexcept;

/// What kind of value a spec field holds.
enum class FieldKind {
  integer,  ///< a number in [min, max], or one of `allowed`
  choice,   ///< one of `choices` (its value is the index)
  flag,     ///< on or off (its value is 0 or 1)
};

/// One field of a family's spec: the single description that the canonical name grammar, the
/// validation, the standard matrix, the CLI's selectors, the C API's introspection and Python
/// read. A family's fields, in order, are its name's parts after the family name: integers and
/// choices positionally, then the flags that are on, each at most once in field order.
struct FieldInfo {
  const char* name;   ///< identifier: `k`, `io`, `state` (`--set k=4`, introspection)
  const char* label;  ///< in messages: `K`, `io dtype`
  FieldKind kind;
  /// How the value is spelled in the canonical name: integer and choice fields are the prefix
  /// followed by the number or choice (`k4`, `io_bf16`; an empty prefix spells the choice
  /// alone, `strided`); a flag that is on is this word (`l2norm`).
  const char* spelling;
  std::span<const char* const> choices = {};  ///< choice: names, by value
  int min = 0;                                ///< integer: smallest allowed value
  int max = 0;                                ///< integer: largest allowed value
  std::span<const int> allowed = {};          ///< integer: the allowed values, when not a range
  int default_value = 0;                      ///< the value (choice: the index; flag: 0 or 1)
  /// The standard matrix's values of this field (as `--set` spells them: `1-17`, `f32,bf16`);
  /// null: only the default.
  const char* standard = nullptr;
  /// An integer field whose value equals the next field's is spelled once with this prefix
  /// instead of both (`d128` for dk = dv = 128, else `dk128.dv64`); null: never merged.
  const char* merged_spelling = nullptr;
  /// A choice field that may also be given as the name of this other choice field of the
  /// family, meaning "the same value" (`weight` = `io`); null: none.
  const char* same_as = nullptr;
  const char* doc = "";  ///< one line for `--help` and introspection
};

}  // namespace wyjit
