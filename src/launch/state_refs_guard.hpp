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
  int writes = 0;         ///< tiles written per sequence (the last one over S_b when strided)
  bool reads = true;      ///< whether S_b is read (false: the references only name writes)
  std::int64_t tile = 0;  ///< elements one tile spans
  const char* tile_text;  ///< how the family names `tile`, e.g. "num_v_heads*dk*dv"
  std::size_t alignment;  ///< bytes every tile pointer must be aligned to
  const char* alignment_why;
  /// Every tile stride a multiple of this (1: any), so that tiles stay `alignment`-aligned.
  std::int64_t stride_multiple = 1;
};

/// Which argument a set of state references is: its fields' names in messages.
struct StateRefsName {
  const char* state;
  const char* state_seq_stride;
  const char* inter;
  const char* inter_seq_stride;
  const char* inter_tok_stride;
  const char* tables;
  const char* slab_stride;
  const char* slot_stride;
  const char* num_slots;
  const char* read_slot;
  const char* write_slot;
  const char* write_slot_stride;
};

/// The names of the references in `args.<member>`: args.states.state, ...
#define WYJIT_STATE_REFS_NAME(member)                                                              \
  ::wyjit::detail::StateRefsName {                                                                 \
#member ".state", #member ".state_seq_stride", #member ".inter", #member ".inter_seq_stride",  \
        #member ".inter_tok_stride", #member ".tables", #member ".slab_stride",                    \
        #member ".slot_stride", #member ".num_slots", #member ".read_slot", #member ".write_slot", \
        #member ".write_slot_stride"                                                               \
  }

/// Checks the fields of `refs` that `addressing` reads, with the actual values in the message;
/// throws Error(invalid_argument) through `guard`. `name`: which argument (default
/// args.states).
void check_state_refs(const Guard& guard, Addressing addressing, const StateRefs& refs,
                      const StateTileShape& shape,
                      const StateRefsName& name = WYJIT_STATE_REFS_NAME(states));

/// The same references in the kernels' parameter block.
wyjit_kernels::StateRefs kernel_state_refs(const StateRefs& refs) noexcept;

}  // namespace wyjit::detail
