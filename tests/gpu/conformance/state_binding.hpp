// SPDX-License-Identifier: Apache-2.0
// The state references of a rig (wyjit/state_refs.h), written once for every family as the
// library shares them: one pool image of tiles, the strides, slot arrays or pointer tables of
// one addressing mode, and a new assignment of tiles to sequences for every launch.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/half_types.hpp"
#include "wyjit/state_refs.h"
#include "wyjit/table_stager.hpp"
#include "wyjit/types.hpp"

namespace wyjit::test::conformance {

/// What a family's launch asks of its state tiles.
struct TileShape {
  int writes = 1;                   ///< tiles a sequence writes per launch
  std::size_t span = 0;             ///< elements one tile spans
  std::size_t stride_multiple = 1;  ///< every tile starts at a multiple of this (alignment)
  IoType type = IoType::f32;        ///< element type of the tiles
};

/// Which sequences of one launch are padding, where the addressing mode can say so (table: a
/// null S_b; slot: a read slot outside the pool). Strided addressing has no way to: a family
/// may pad sequences of its own (conv1d_update's window offsets).
struct Padding {
  int tail = 0;  ///< the last `tail` sequences (table: not staged; slot: read slot = num_slots)
  /// With batch >= 3: sequence 1 (table: null S_1; slot: read slot -1), and sequence 0 skips its
  /// first write (table: null entry, where writes > 1; slot: write slot -1, or num_slots when
  /// it writes one tile).
  bool middle = false;
};

/// Where one launch's sequences read and write, as tiles of one pool image.
struct TilePlan {
  int batch = 0;
  int writes = 0;
  std::vector<std::size_t> tile_at;  ///< [tile]: element offset in the pool
  std::size_t pool_elems = 0;
  std::vector<int> read;   ///< [b]: the tile S_b; -1: padding (nothing of b read or written)
  std::vector<int> write;  ///< [b*writes + t]: the tile write t goes to; -1: not written

  bool padded(int b) const { return read[static_cast<std::size_t>(b)] < 0; }
  int write_tile(int b, int t) const {
    return write[static_cast<std::size_t>(b) * static_cast<std::size_t>(writes) +
                 static_cast<std::size_t>(t)];
  }
  std::size_t at(int tile) const { return tile_at[static_cast<std::size_t>(tile)]; }
};

/// The pool, and the slot arrays or pointer tables, of one addressing mode.
///
/// - strided: S_b is tile b, write t < writes-1 tile batch + b*(writes-1) + t, at the strides
///   of the layout (inter_seq_stride outer, or token-major: inter_tok_stride outer); the last
///   write goes over S_b. The same every launch.
/// - table: a pool of batch*(writes+1)+1 tiles, shuffled anew every launch; the tables go
///   through a TableStager with one more entry per slab than the batch when padded. A padded
///   sequence's intermediate entries still point at tiles, which must stay untouched.
/// - slot: the same pool, shuffled anew every launch; write_slot has one column more than the
///   writes, naming a real tile the kernel must not touch, and a padded sequence's write slots
///   are real tiles too.
class StateBinder {
 public:
  /// `padded`: gaps after tiles (poisoned, must stay untouched).
  StateBinder(Addressing addressing, int batch, const TileShape& shape, bool padded,
              bool token_major);
  StateBinder(const StateBinder&) = delete;
  StateBinder& operator=(const StateBinder&) = delete;

  Addressing addressing() const noexcept { return addressing_; }
  std::size_t pool_elems() const noexcept { return pool_elems_; }

  /// Device arrays this mode reads besides the pool (slot: read_slot, write_slot), by name
  /// and bytes, in the order bind() and plan() use.
  struct Array {
    std::string name;
    std::size_t bytes;
  };
  std::vector<Array> arrays() const;

  /// Sets every field of `refs` this mode reads, for the pool at `pool` and arrays() at
  /// `arrays`; table: makes the stager (in the current context).
  void bind(StateRefs& refs, void* pool, const std::vector<void*>& arrays);

  /// A new assignment for one launch, from `seed`; `images` receives the host images of
  /// arrays(). Throws std::invalid_argument when the padding leaves no sequence.
  TilePlan plan(std::uint64_t seed, const Padding& padding,
                std::vector<std::vector<std::uint8_t>>& images);

  /// Table: stages the tables of the plan() last made on `stream` (its host arrays live here
  /// until the next plan()). Other modes: nothing.
  void stage(CUstream stream);

  /// "strided (token-major)", "slot", ...
  std::string describe() const;

 private:
  Addressing addressing_;
  int batch_;
  TileShape shape_;
  bool padded_;
  bool token_major_;
  std::vector<std::size_t> tile_at_;
  std::size_t pool_elems_ = 0;
  std::int64_t state_seq_stride_ = 0, inter_seq_stride_ = 0, inter_tok_stride_ = 0;
  std::size_t inter_base_ = 0;
  std::size_t tile_stride_ = 0;  // table and slot
  // table
  void* pool_ = nullptr;
  std::optional<TableStager> stager_;
  std::vector<void*> staged_states_;
  std::vector<std::vector<void*>> staged_inter_;
  std::vector<void* const*> staged_rows_;
  int staged_count_ = 0;
};

/// Breaks the first field of `refs` that `addressing` reads (null state, tables or read slots);
/// returns what a refusal must say about it.
std::string break_state_refs(StateRefs& refs, Addressing addressing);

}  // namespace wyjit::test::conformance
