// SPDX-License-Identifier: Apache-2.0
// Which target to build for a device: its exact SM when NVRTC supports it, else PTX.
#pragma once

#include <cuda.h>

#include <vector>

#include "wyjit/jit.hpp"

namespace wyjit::detail {

/// `sm_<arch>` when `supported` holds `arch`; otherwise `compute_<best>` for the highest
/// supported arch below it (the driver JIT-compiles the PTX). Throws Error(driver) when the
/// device is older than every supported arch. Never picks an arch-specific (`a`) target.
Target select_target(int device_arch, const std::vector<int>& supported);

/// select_target against this process's NVRTC (nvrtcGetSupportedArchs, read once).
Target select_target(int device_arch);

/// The compute capability of `device` as major * 10 + minor (90 for an H200), read from the
/// driver. Throws Error(driver).
int device_arch(CUdevice device);

/// The target a Jit builds for `device`: select_target(device_arch(device)).
Target target_for_device(CUdevice device);

/// target_for_device for the device of the calling thread's current CUDA context. Throws
/// Error(driver) when the driver fails or no context is current.
Target target_for_current_device();

}  // namespace wyjit::detail
