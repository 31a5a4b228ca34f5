// SPDX-License-Identifier: Apache-2.0
// Which target to build for a device: its exact SM when NVRTC supports it, else PTX.
#pragma once

#include <vector>

#include "wyjit/jit.hpp"

namespace wyjit::detail {

/// `sm_<arch>` when `supported` holds `arch`; otherwise `compute_<best>` for the highest
/// supported arch below it (the driver JIT-compiles the PTX). Throws Error(driver) when the
/// device is older than every supported arch. Never picks an arch-specific (`a`) target.
Target select_target(int device_arch, const std::vector<int>& supported);

/// select_target against this process's NVRTC (nvrtcGetSupportedArchs, read once).
Target select_target(int device_arch);

}  // namespace wyjit::detail
