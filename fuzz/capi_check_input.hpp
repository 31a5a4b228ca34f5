// SPDX-License-Identifier: Apache-2.0
// The input layout of the C API check target (fuzz_capi_check.cpp), shared with the seed
// generator (make_seeds.cpp) so that the checked-in seeds always mean what the target reads.
//
//   byte 0   which check function (kChecks, index modulo their count)
//   byte 1   flags (kFlag*)
//   8 bytes  struct_size, only with kFlagStructSize (else the size the library expects)
//   n bytes  the variant: one byte per field of the family (spec_from_bytes)
//   the rest the argument struct after struct_size, as raw bytes (missing bytes stay zero,
//            bytes past the struct are ignored)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "spec/family.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::fuzz {

inline constexpr std::uint8_t kFlagStructSize = 1;   ///< struct_size comes from the input
inline constexpr std::uint8_t kFlagOtherFamily = 2;  ///< the variant is of the next family
inline constexpr std::uint8_t kFlagNullArgs = 4;     ///< args is NULL
inline constexpr std::uint8_t kFlagNullSpec = 8;     ///< the variant name is NULL

/// One C check entry point, type-erased over its argument struct.
struct CheckFn {
  const char* name;    ///< "wyjit_check_gdn_verify": every message it leaves starts with it
  const char* family;  ///< the family of the variants it takes
  std::size_t args_size;
  void (*init)(void* args);
  wyjit_status (*check)(const char* spec, const void* args);
};

#define WYJIT_FUZZ_CHECK_FN(name, family, Args)                           \
  CheckFn {                                                               \
    "wyjit_check_" #name, family, sizeof(Args),                           \
        [](void* a) { wyjit_##name##_args_init(static_cast<Args*>(a)); }, \
        [](const char* s, const void* a) {                                \
          return wyjit_check_##name(s, static_cast<const Args*>(a));      \
        }                                                                 \
  }

inline constexpr std::array<CheckFn, 5> kChecks = {
    WYJIT_FUZZ_CHECK_FN(gdn_verify, "gdn_verify", wyjit_gdn_verify_args),
    WYJIT_FUZZ_CHECK_FN(conv1d_update, "conv1d_update", wyjit_conv1d_update_args),
    WYJIT_FUZZ_CHECK_FN(gdn_replay_verify, "gdn_replay", wyjit_gdn_replay_verify_args),
    WYJIT_FUZZ_CHECK_FN(gdn_replay_commit, "gdn_replay", wyjit_gdn_replay_commit_args),
    WYJIT_FUZZ_CHECK_FN(gdn_replay_materialize, "gdn_replay", wyjit_gdn_replay_materialize_args),
};

#undef WYJIT_FUZZ_CHECK_FN

/// Room for the largest argument struct.
inline constexpr std::size_t kMaxArgsSize = 512;

/// The family after `family` in the list (a family of the wrong kind for a check).
inline const detail::Family& next_family(const detail::Family& family) {
  const auto all = detail::families();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == &family) return *all[(i + 1) % all.size()];
  }
  return *all[0];
}

/// The variant of `family` that `bytes` (one a field) select: each field's value by the byte
/// modulo its number of values, so that every byte selects a value the field table allows (the
/// family's rule across fields may still refuse the variant).
inline KernelSpec spec_from_bytes(const detail::Family& family,
                                  std::span<const std::uint8_t> bytes) {
  KernelSpec spec = family.make();
  const auto fields = family.fields();
  for (std::size_t i = 0; i < fields.size() && i < bytes.size(); ++i) {
    const FieldInfo& f = fields[i];
    const int b = bytes[i];
    int value = 0;
    switch (f.kind) {
      case FieldKind::integer:
        value = f.allowed.empty() ? f.min + b % (f.max - f.min + 1)
                                  : f.allowed[static_cast<std::size_t>(b) % f.allowed.size()];
        break;
      case FieldKind::choice:
        value = b % static_cast<int>(f.choices.size());
        break;
      case FieldKind::flag:
        value = b & 1;
        break;
    }
    family.set(spec, i, value);
  }
  return spec;
}

/// The bytes spec_from_bytes reads back as `spec`.
inline std::vector<std::uint8_t> spec_bytes(const KernelSpec& spec) {
  const detail::Family& family = detail::family_of(spec);
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < family.fields().size(); ++i) {
    const FieldInfo& f = family.fields()[i];
    const int v = family.get(spec, i);
    int b = v;
    if (f.kind == FieldKind::integer) {
      b = v - f.min;
      for (std::size_t a = 0; a < f.allowed.size(); ++a) {
        if (f.allowed[a] == v) b = static_cast<int>(a);
      }
    }
    out.push_back(static_cast<std::uint8_t>(b));
  }
  return out;
}

/// An input that calls check `check` with `spec` and the argument struct `args` (struct_size
/// included, which the input leaves out: the flags say whether to keep it).
inline std::vector<std::uint8_t> check_input(std::size_t check, std::uint8_t flags,
                                             const KernelSpec& spec, const void* args,
                                             std::size_t args_size) {
  std::vector<std::uint8_t> out = {static_cast<std::uint8_t>(check), flags};
  const auto* bytes = static_cast<const std::uint8_t*>(args);
  if ((flags & kFlagStructSize) != 0) out.insert(out.end(), bytes, bytes + sizeof(std::size_t));
  const std::vector<std::uint8_t> fields = spec_bytes(spec);
  out.insert(out.end(), fields.begin(), fields.end());
  out.insert(out.end(), bytes + sizeof(std::size_t), bytes + args_size);
  return out;
}

}  // namespace wyjit::fuzz
