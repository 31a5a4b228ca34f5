// SPDX-License-Identifier: Apache-2.0
// State references that a family lays out itself, besides the rig's pool: a launch with more
// than one set (gdn_replay: the checkpoints are the rig's; the log tiles and materialize's
// output are the family's). The same StateBinder as the rig's, in the variant's addressing
// mode, padded like the rig's plan, on a shuffle of its own; its pool and slot arrays are
// family buffers (so the rig poisons, guards and checks them like any other), its tables are
// staged from FamilyLaunch::stage.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/conformance/state_binding.hpp"

namespace wyjit::test::conformance {

class FamilyRefs {
 public:
  /// `name` prefixes the buffers' names ("log pool", "log read_slot"); `salt` makes this set's
  /// shuffle differ from the rig's and from the family's other sets.
  FamilyRefs(std::string name, Addressing addressing, int batch, const TileShape& shape,
             bool padded, std::uint64_t salt);

  /// The pool, then the slot arrays of the mode (slot: read_slot, write_slot).
  std::vector<BufferSpec> buffers() const;
  std::size_t count() const { return 1 + binder_.arrays().size(); }
  std::size_t pool_elems() const { return binder_.pool_elems(); }
  const TileShape& tiles() const { return shape_; }

  /// Sets every field of `refs` the mode reads, for buffers() at device[first ..]; table: makes
  /// the stager in the current context.
  void bind(StateRefs& refs, const std::vector<void*>& device, std::size_t first);

  /// A new assignment for the launch of `seed`: the sequences `padding` pads are padding here
  /// too (the same rule as the rig's binder, so they match its plan). Throws std::logic_error
  /// when they do not match `rig_plan`.
  TilePlan plan(std::uint64_t seed, const Padding& padding, const TilePlan& rig_plan);
  /// Appends `pool` (pool_elems() elements of the tiles' type) and the slot arrays of the last
  /// plan() to `images`, in buffers() order.
  void append_images(std::vector<std::uint8_t> pool,
                     std::vector<std::vector<std::uint8_t>>& images) const;
  /// Table: stages the tables of the last plan() on `stream`.
  void stage(CUstream stream) { binder_.stage(stream); }

 private:
  std::string name_;
  TileShape shape_;
  std::uint64_t salt_;
  StateBinder binder_;
  std::vector<std::vector<std::uint8_t>> arrays_;  // images of the last plan()
};

}  // namespace wyjit::test::conformance
