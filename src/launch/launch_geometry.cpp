// SPDX-License-Identifier: Apache-2.0
#include "launch/launch_geometry.hpp"

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
  }
  return {};
}

}  // namespace wyjit::detail
