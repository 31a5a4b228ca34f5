// SPDX-License-Identifier: Apache-2.0
#include "launch/state_refs_guard.hpp"

#include <string>

namespace wyjit::detail {

void check_state_refs(const Guard& guard, Addressing addressing, const StateRefs& r,
                      const StateTileShape& shape, const StateRefsName& n) {
  const bool inter = shape.writes > 1;
  const auto stride_multiple = [&](const char* name, std::int64_t value) {
    if (shape.stride_multiple > 1) {
      guard.multiple_of(name, value, shape.stride_multiple, "state tiles stay aligned");
    }
  };
  switch (addressing) {
    case Addressing::strided:
      guard.pointer(n.state, r.state, shape.alignment, shape.alignment_why);
      if (inter) guard.pointer(n.inter, r.inter, shape.alignment, shape.alignment_why);
      if (shape.batch > 1) {
        guard.at_least(n.state_seq_stride, r.state_seq_stride, shape.tile, shape.tile_text);
      }
      stride_multiple(n.state_seq_stride, r.state_seq_stride);
      if (inter) {
        guard.at_least(n.inter_seq_stride, r.inter_seq_stride, 0, "non-negative");
        guard.at_least(n.inter_tok_stride, r.inter_tok_stride, 0, "non-negative");
        stride_multiple(n.inter_seq_stride, r.inter_seq_stride);
        stride_multiple(n.inter_tok_stride, r.inter_tok_stride);
        check_disjoint_inter_states(guard, shape.batch, shape.writes, r.inter_seq_stride,
                                    r.inter_tok_stride, shape.tile, shape.tile_text,
                                    n.inter_seq_stride, n.inter_tok_stride);
      }
      return;
    case Addressing::table:
      if (r.tables == nullptr) {
        guard.fail(std::string("args.") + n.tables +
                   " is null: stage the pointer tables first (TableStager::stage) and pass its "
                   "device_tables()");
      }
      guard.pointer(n.tables, r.tables, alignof(void*), "pointer alignment");
      if (inter) {
        guard.at_least(n.slab_stride, r.slab_stride, shape.batch,
                       "one entry per sequence in a slab");
      }
      return;
    case Addressing::slot:
      guard.pointer(n.state, r.state, shape.alignment, shape.alignment_why);
      guard.at_least(n.num_slots, r.num_slots, 1, "the pool holds at least one slot");
      guard.at_least(n.slot_stride, r.slot_stride, shape.tile, shape.tile_text);
      stride_multiple(n.slot_stride, r.slot_stride);
      if (shape.reads) {
        guard.pointer(n.read_slot, r.read_slot, alignof(std::int32_t), "int32 elements");
      }
      if (shape.writes > 0) {
        guard.pointer(n.write_slot, r.write_slot, alignof(std::int32_t), "int32 elements");
        guard.at_least(
            n.write_slot_stride, r.write_slot_stride, shape.writes,
            "a write slot for every tile a sequence writes: " + std::to_string(shape.writes));
      }
      return;
  }
  guard.fail("the variant's addressing is " + std::to_string(static_cast<int>(addressing)));
}

wyjit_kernels::StateRefs kernel_state_refs(const StateRefs& r) noexcept {
  return wyjit_kernels::StateRefs{
      .state = r.state,
      .state_seq_stride = r.state_seq_stride,
      .inter = r.inter,
      .inter_seq_stride = r.inter_seq_stride,
      .inter_tok_stride = r.inter_tok_stride,
      .tables = r.tables,
      .slab_stride = r.slab_stride,
      .slot_stride = r.slot_stride,
      .num_slots = r.num_slots,
      .read_slot = r.read_slot,
      .write_slot = r.write_slot,
      .write_slot_stride = r.write_slot_stride,
  };
}

// NOTE: the kernels read the same fields in the same order; a field added to one side only
// fails here.
static_assert(sizeof(wyjit_kernels::StateRefs) == sizeof(StateRefs),
              "wyjit_state_refs and wyjit_kernels::StateRefs hold the same fields");

}  // namespace wyjit::detail
