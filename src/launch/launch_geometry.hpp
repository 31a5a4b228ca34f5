// SPDX-License-Identifier: Apache-2.0
// Block size, shared memory and grid shape of each family's kernel, from its spec.
#pragma once

#include "wyjit/spec.hpp"

namespace wyjit::detail {

struct LaunchGeometry {
  int threads = 0;             ///< per block
  int smem_bytes = 0;          ///< dynamic shared memory per block
  int blocks_per_head = 0;     ///< gdn_verify: column strips per (sequence, value head)
  int channels_per_block = 0;  ///< conv1d_update: channels per block (grid: per sequence)
};

LaunchGeometry launch_geometry(const KernelSpec& spec);

}  // namespace wyjit::detail
