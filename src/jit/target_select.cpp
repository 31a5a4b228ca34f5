// SPDX-License-Identifier: Apache-2.0
#include "jit/target_select.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <string>

#include "compile/nvrtc_compiler.hpp"
#include "driver/driver_api.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

Target select_target(int device_arch, const std::vector<int>& supported) {
  int best_below = 0;
  for (const int arch : supported) {
    if (arch == device_arch) return Target{.arch = arch};
    if (arch < device_arch && arch > best_below) best_below = arch;
  }
  if (best_below == 0) {
    std::string list;
    for (const int arch : supported) list += (list.empty() ? "" : ", ") + std::to_string(arch);
    throw Error(ErrorCode::driver, "device architecture sm_" + std::to_string(device_arch) +
                                       " is older than every architecture this NVRTC supports (" +
                                       list + ")");
  }
  return Target{.arch = best_below, .ptx = true};
}

Target select_target(int device_arch) {
  static const std::vector<int> supported = nvrtc_supported_archs();
  return select_target(device_arch, supported);
}

int device_arch(CUdevice device) {
  int major = 0;
  int minor = 0;
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  return major * 10 + minor;
}

Target target_for_device(CUdevice device) {
  // NOTE: a device's compute capability never changes, and two attribute queries per
  // Jit::kernel call were most of a memory hit on the H200 (283 ns with 1 thread, 731 ns with
  // 8): remember it per device ordinal.
  constexpr int kCachedDevices = 64;
  static std::array<std::atomic<int>, kCachedDevices> known{};
  if (device < 0 || device >= kCachedDevices) return select_target(device_arch(device));
  int arch = known[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  if (arch == 0) {
    arch = device_arch(device);
    known[static_cast<std::size_t>(device)].store(arch, std::memory_order_relaxed);
  }
  return select_target(arch);
}

Target target_for_current_device() {
  CUcontext context = nullptr;
  WYJIT_CU_CHECK(cuCtxGetCurrent(&context));
  if (context == nullptr) {
    throw Error(ErrorCode::driver,
                "no CUDA context is current on the calling thread: the target for the current "
                "device needs one (cuCtxSetCurrent, or any CUDA runtime call, makes one current)");
  }
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuCtxGetDevice(&device));
  return target_for_device(device);
}

}  // namespace wyjit::detail
