/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file state_refs.h
 * @brief Where a launch finds each sequence's state tiles: one struct, in every family's launch
 *        arguments, for all three addressing modes (the variant's `addressing` field says which
 *        fields are read).
 *
 * Per sequence b a launch reads one tile S_b and writes `writes` tiles (the family says how
 * many and what they hold: gdn_verify writes the state after each of its K tokens, the last one
 * being the final state). Strides are in elements of the state dtype.
 *
 * - strided: S_b = state + b*state_seq_stride; write t < writes-1 goes to inter +
 *   b*inter_seq_stride + t*inter_tok_stride; the last write goes over S_b.
 * - table: device array `tables` of tile pointers in slabs of slab_stride entries (a
 *   wyjit_table_stager's buffer keeps it at a fixed address for CUDA graphs): tables[b] is S_b
 *   (NULL: sequence b is padding, nothing of it read or written); write t < writes-1 goes to
 *   tables[(1+t)*slab_stride + b] (NULL: that tile is skipped); the last write goes over S_b.
 * - slot: `state` is a pool of num_slots tiles slot_stride elements apart; S_b is slot
 *   read_slot[b], write t goes to slot write_slot[b*write_slot_stride + t]. A read slot outside
 *   [0, num_slots) marks padding (nothing of b is read or written); such a write slot skips
 *   that one tile. The slot arrays are int32 in device memory and may hold anything.
 */
#ifndef WYJIT_STATE_REFS_H_
#define WYJIT_STATE_REFS_H_

#include <stdint.h>

#include "wyjit/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The state references of one launch (C and C++: wyjit::StateRefs). */
typedef struct wyjit_state_refs {
  /* strided: S_b = state + b*state_seq_stride; slot: the pool */
  void* state WYJIT_DEFAULT(nullptr);
  int64_t state_seq_stride WYJIT_DEFAULT(0);
  /* strided: the tiles other than the last write */
  void* inter WYJIT_DEFAULT(nullptr);
  int64_t inter_seq_stride WYJIT_DEFAULT(0);
  int64_t inter_tok_stride WYJIT_DEFAULT(0);
  /* table */
  void* const* tables WYJIT_DEFAULT(nullptr);
  int64_t slab_stride WYJIT_DEFAULT(0); /**< >= batch */
  /* slot */
  int64_t slot_stride WYJIT_DEFAULT(0);
  int32_t num_slots WYJIT_DEFAULT(0);
  const int32_t* read_slot WYJIT_DEFAULT(nullptr);  /**< [batch] */
  const int32_t* write_slot WYJIT_DEFAULT(nullptr); /**< [batch][write_slot_stride] */
  int64_t write_slot_stride WYJIT_DEFAULT(0);       /**< >= the tiles a sequence writes */
} wyjit_state_refs;

#ifdef __cplusplus
}  // extern "C"

namespace wyjit {
using StateRefs = ::wyjit_state_refs;
}  // namespace wyjit
#endif

#endif /* WYJIT_STATE_REFS_H_ */
