// SPDX-License-Identifier: Apache-2.0
#include "launch/launch_geometry.hpp"

#include "conv1d_update_params.cuh"
#include "gdn_verify_params.cuh"

namespace wyjit::detail {

LaunchGeometry launch_geometry(const KernelSpec& spec) {
  switch (spec.family) {
    case Family::gdn_verify: {
      const int layout =
          spec.layout == Layout::vk ? wyjit_kernels::kLayoutVK : wyjit_kernels::kLayoutKV;
      return LaunchGeometry{
          .threads = wyjit_kernels::gdn_threads(),
          .smem_bytes = wyjit_kernels::gdn_smem_bytes(spec.k, spec.dk, layout),
          .blocks_per_head = spec.dv / wyjit_kernels::gdn_block_cols(spec.dk, layout),
      };
    }
    case Family::conv1d_update:
      // NOTE: the shared memory is static (sized by K and W), within the 48 KiB default.
      return LaunchGeometry{
          .threads = wyjit_kernels::conv1d_threads(),
          .smem_bytes = 0,
          .channels_per_block = wyjit_kernels::conv1d_block_channels(),
      };
  }
  return {};
}

}  // namespace wyjit::detail
