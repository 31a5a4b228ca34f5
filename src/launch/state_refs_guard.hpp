// SPDX-License-Identifier: Apache-2.0
// The guards of the state references (wyjit/state_refs.h), shared by every family, and their
// kernel-side form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/state_refs.cuh"
#include "launch/guard.hpp"
#include "wyjit/state_refs.h"
#include "wyjit/types.hpp"

namespace wyjit::detail {

/// What a family's launch asks of its state tiles.
struct StateTileShape {
  int batch = 0;
  int writes = 0;          ///< tiles written per sequence (the last one over S_b when strided)
  std::int64_t tile = 0;   ///< elements one tile spans
  const char* tile_text;   ///< how the family names `tile`, e.g. "num_v_heads*dk*dv"
  std::size_t alignment;   ///< bytes every tile pointer must be aligned to
  const char* alignment_why;
  /// Every tile stride a multiple of this (1: any), so that tiles stay `alignment`-aligned.
  std::int64_t stride_multiple = 1;
};

/// Checks the fields of `refs` that `addressing` reads (args.states.*), with the actual values
/// in the message; throws Error(invalid_argument) through `guard`.
void check_state_refs(const Guard& guard, Addressing addressing, const StateRefs& refs,
                      const StateTileShape& shape);

/// The same references in the kernels' parameter block.
wyjit_kernels::StateRefs kernel_state_refs(const StateRefs& refs) noexcept;

}  // namespace wyjit::detail
