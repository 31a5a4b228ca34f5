// SPDX-License-Identifier: Apache-2.0
/// @file table_stager.hpp
/// @brief TableStager: the fixed device buffer that table addressing reads its tile pointers
///        from, for every family.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "wyjit/export.h"

namespace wyjit {

/// A fixed device buffer that holds the pointer tables of table addressing (StateRefs::tables).
/// Its address never changes, so a CUDA graph that captured a launch reading it stays valid
/// when stage() writes new tables between replays.
///
/// Layout: `writes` slabs of max_batch pointers; slab 0 holds S_b, slab 1+t the tile of write t
/// (t = 0..writes-2). Make it for the tiles a sequence writes per launch, as the family's
/// arguments say (e.g. K for gdn_verify).
class WYJIT_API TableStager {
 public:
  /// Allocates room for `max_batch` sequences writing `writes` tiles each (1..32).
  TableStager(int writes, int max_batch);
  ~TableStager();
  TableStager(const TableStager&) = delete;
  TableStager& operator=(const TableStager&) = delete;

  /// Copies `states[b]` (S_b) and `inter[t][b]` (write t, t = 0..writes-2) for b < batch into
  /// the buffer with cuMemcpyHtoDAsync on `stream`; entries batch..max_batch-1 become null. The
  /// host arrays must stay alive until the copy completes.
  ///
  /// Null entries are padding, anywhere in the batch (what a CUDA-graph engine needs when a
  /// slot of a captured batch is free this step):
  /// - `states[b]` null: sequence b is skipped whole (nothing read, nothing written, its output
  ///   rows left as they were); its `inter[t][b]` entries are ignored and may be anything.
  /// - `inter[t][b]` null while `states[b]` is not: that tile is not written (the sequence is
  ///   still processed, its other tiles written), like a negative write slot.
  /// The arrays themselves (`states`, and `inter` and each `inter[t]` when writes > 1) must not
  /// be null. Throws Error(invalid_argument) (see check_stage) before copying anything, or when
  /// `stream` is being captured.
  void stage(void* const* states, void* const* const* inter, int batch, CUstream stream);

  /// The argument checks of stage() for a stager of `writes` and `max_batch`, without a stager
  /// or a driver: batch in 1..max_batch, non-null arrays. Throws Error(invalid_argument) naming
  /// the argument.
  static void check_stage(int writes, int max_batch, void* const* states, void* const* const* inter,
                          int batch);

  void* const* device_tables() const noexcept { return tables_; }
  std::int64_t slab_stride() const noexcept { return max_batch_; }
  int writes() const noexcept { return writes_; }
  int max_batch() const noexcept { return max_batch_; }

 private:
  int writes_ = 0;
  int max_batch_ = 0;
  void* const* tables_ = nullptr;
};

}  // namespace wyjit
