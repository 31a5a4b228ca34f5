// SPDX-License-Identifier: Apache-2.0
// The device side of a conv1d_update case: shapes and strides, a pool of state tiles, where each
// sequence reads and writes, and the buffers of one launch.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "common/conv1d_reference.hpp"
#include "gpu/families/conv1d_update/rollback_case.hpp"
#include "gpu/support/device.hpp"
#include "gpu/support/host_tensor.hpp"

namespace wyjit::test {

/// Shapes and strides of one case. The state pool is an image of tiles; element (channel c,
/// column j) of a tile is at c*channel_stride + j*col_stride from the tile's start.
struct Conv1dGeometry {
  int batch = 0, channels = 0, K = 0, H = 0;  ///< H = W-1 history columns
  bool window = false;
  int writes = 0;        ///< tiles a sequence writes: K (intermediate) or 1 (window)
  int written_cols = 0;  ///< columns written per channel: H (intermediate), H+K (window)
  std::int64_t x_stride = 0, y_stride = 0;
  std::int64_t cols = 0;  ///< columns of a tile (state_cols)
  std::int64_t channel_stride = 0, col_stride = 0;
  std::size_t tile = 0;         ///< elements one tile spans
  std::vector<std::size_t> at;  ///< element offset of each tile in the image
  std::size_t image_elems = 0;
  // strided addressing only
  std::int64_t state_seq_stride = 0, inter_seq_stride = 0, inter_tok_stride = 0;

  std::size_t element(int tile_index, int c, std::int64_t j) const {
    return at[static_cast<std::size_t>(tile_index)] +
           static_cast<std::size_t>(c * channel_stride + j * col_stride);
  }
};

Conv1dGeometry make_conv1d_geometry(const Conv1dCase& c);

/// Where each sequence reads and writes in one launch, as tile indices (-1: none).
struct Conv1dPlan {
  std::vector<int> read;    ///< [b]; -1 marks a padded sequence
  std::vector<int> offset;  ///< [b] window: first history column (out of range: padded)
  std::vector<int> write;   ///< [b*writes + t]; -1 skips that state
};

/// The engine's view of each sequence between launches.
struct Conv1dCursor {
  std::vector<std::vector<int>> group;  ///< [b]: the tiles sequence b owns
  std::vector<int> current;             ///< [b]: the tile its state is in
  std::vector<int> offset;              ///< [b]: window column of its history
};

Conv1dCursor make_conv1d_cursor(const Conv1dCase& c, const Conv1dGeometry& g, std::mt19937_64& rng);

/// The plan for the cursor; `pad_sequences` adds the padding of Conv1dCase::padded.
Conv1dPlan make_conv1d_plan(const Conv1dCase& c, const Conv1dGeometry& g, const Conv1dCursor& cur,
                            bool pad_sequences);

/// True when the launch must leave sequence b alone.
bool padded_sequence(const Conv1dGeometry& g, const Conv1dPlan& plan, int b);

/// Everything of one case on the device, and the host image of the state pool.
class Conv1dRig {
 public:
  Conv1dRig(const Conv1dCase& c, const Conv1dGeometry& g, const Conv1dProblem& first);

  HostTensor& image() { return image_; }
  float state_at(int tile, int channel, std::int64_t col) const {
    return image_.get(g_.element(tile, channel, col));
  }

  /// Uploads x and the image, poisons y, launches per `plan`, downloads y and the image.
  HostTensor launch(const Conv1dProblem& p, const Conv1dPlan& plan);

 private:
  const Conv1dCase& c_;
  const Conv1dGeometry& g_;
  IoType io_;
  HostTensor image_;
  DeviceBuffer x_, y_, weight_, bias_, state_, tables_, read_slot_, write_slot_, offsets_;
};

}  // namespace wyjit::test
