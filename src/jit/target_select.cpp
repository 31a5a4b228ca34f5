// SPDX-License-Identifier: Apache-2.0
#include "jit/target_select.hpp"

#include <string>

#include "compile/nvrtc_compiler.hpp"
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

}  // namespace wyjit::detail
