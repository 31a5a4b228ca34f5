// SPDX-License-Identifier: Apache-2.0
#include "launch/launch.hpp"

#include "driver/driver_api.hpp"

namespace wyjit::detail {

void launch(const Kernel& kernel, const char* function, const LaunchPlan& plan, void* params,
            CUstream stream) {
  const CUkernel handle = kernel.handle(plan.role);
  if (handle == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(function) + "(" + format_spec(kernel.spec()) + "): the kernel has no " +
                    "function handle for its '" +
                    std::string(kernel.roles()[static_cast<std::size_t>(plan.role)]) +
                    "' kernel (get it from Jit::kernel)");
  }
  void* args[] = {params};
  WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(handle), plan.grid, 1, 1, plan.block,
                                1, 1, plan.smem_bytes, stream, args, nullptr));
}

}  // namespace wyjit::detail
