// SPDX-License-Identifier: Apache-2.0
// The state tiles of one benchmark launch in the variant's addressing (strided, table or slot),
// for every family: each one's arguments hold the same state references (args.states).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/bench_common.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/table_stager.hpp"

namespace wyjit::bench {

/// What one launch reads and writes, per sequence: one state tile read (and, strided and
/// table, the final state written over it), `inter_tiles` other tiles written in the strided
/// and table forms, `slot_writes` tiles written in the slot form (every written state gets its
/// own slot, as an engine that keeps each token's state does).
struct StateShape {
  int batch = 0;
  std::size_t tile_elems = 0;  ///< elements of one tile (the stride between tiles)
  std::size_t elem_bytes = 0;
  int inter_tiles = 0;  ///< K-1 (intermediate forms) or 0 (window form)
  int slot_writes = 0;  ///< K (intermediate forms) or 1 (window form)
  float fill = 0.0f;    ///< the state's value bits (intermediate tiles start at 0)
};

/// The tiles, laid out as the addressing needs them:
/// - strided: S_b = state + b*tile, Hi_t(b) = inter + (b*inter_tiles + t)*tile;
/// - table: the same tiles, behind a TableStager (inter_tiles + 1 slabs);
/// - slot: a pool of batch*(1 + slot_writes) tiles; sequence b reads slot b and writes slots
///   batch + b*slot_writes + t.
/// NOTE: the pointer tables and slot indices (<= 8 bytes per tile) are not counted in the
/// benchmarks' floors.
class BenchStates {
 public:
  BenchStates(Addressing addressing, const StateShape& shape, CUstream stream);

  /// The state references for the addressing.
  StateRefs refs() const {
    StateRefs a;
    const auto tile = static_cast<std::int64_t>(shape_.tile_elems);
    switch (addressing_) {
      case Addressing::strided:
        a.state = state_->get();
        a.state_seq_stride = tile;
        if (inter_) {
          a.inter = inter_->get();
          a.inter_tok_stride = tile;
          a.inter_seq_stride = tile * shape_.inter_tiles;
        }
        break;
      case Addressing::table:
        a.tables = stager_->device_tables();
        a.slab_stride = stager_->slab_stride();
        break;
      case Addressing::slot:
        a.state = state_->get();
        a.slot_stride = tile;
        a.num_slots = num_slots_;
        a.read_slot = static_cast<const std::int32_t*>(read_slot_->get());
        a.write_slot = static_cast<const std::int32_t*>(write_slot_->get());
        a.write_slot_stride = shape_.slot_writes;
        break;
    }
    return a;
  }

 private:
  Addressing addressing_;
  StateShape shape_;
  std::unique_ptr<Buffer> state_;
  std::unique_ptr<Buffer> inter_;
  std::unique_ptr<TableStager> stager_;
  std::unique_ptr<Buffer> read_slot_;
  std::unique_ptr<Buffer> write_slot_;
  std::int32_t num_slots_ = 0;
};

}  // namespace wyjit::bench
