// SPDX-License-Identifier: Apache-2.0
// The CUDA driver, opened at run time (dlopen libcuda.so.1 + cuGetProcAddress), so that the
// library, the CLI and the CPU tests run on machines with no driver.
#pragma once

#include <cuda.h>

#include <string>

namespace wyjit::detail {

// Every driver entry point wyjit (and its GPU tests) call. Names are cuda.h's, so the macro
// renames there (cuMemAlloc -> cuMemAlloc_v2) apply to the member types automatically.
#define WYJIT_DRIVER_FUNCTIONS(X) \
  X(cuInit)                       \
  X(cuDriverGetVersion)           \
  X(cuGetErrorName)               \
  X(cuGetErrorString)             \
  X(cuDeviceGet)                  \
  X(cuDeviceGetCount)             \
  X(cuDeviceGetName)              \
  X(cuDeviceGetAttribute)         \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease)    \
  X(cuCtxGetCurrent)              \
  X(cuCtxSetCurrent)              \
  X(cuCtxGetDevice)               \
  X(cuCtxSynchronize)             \
  X(cuLibraryLoadData)            \
  X(cuLibraryUnload)              \
  X(cuLibraryGetKernel)           \
  X(cuKernelGetFunction)          \
  X(cuKernelSetAttribute)         \
  X(cuLaunchKernel)               \
  X(cuMemAlloc)                   \
  X(cuMemFree)                    \
  X(cuMemcpyHtoD)                 \
  X(cuMemcpyDtoH)                 \
  X(cuMemcpyDtoD)                 \
  X(cuMemsetD8)                   \
  X(cuMemsetD32)                  \
  X(cuStreamCreate)               \
  X(cuStreamDestroy)              \
  X(cuStreamSynchronize)          \
  X(cuStreamBeginCapture)         \
  X(cuStreamEndCapture)           \
  X(cuGraphInstantiate)           \
  X(cuGraphLaunch)                \
  X(cuGraphExecDestroy)           \
  X(cuGraphDestroy)               \
  X(cuEventCreate)                \
  X(cuEventDestroy)               \
  X(cuEventRecord)                \
  X(cuEventSynchronize)           \
  X(cuEventElapsedTime)

struct DriverApi {
#define WYJIT_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  WYJIT_DRIVER_FUNCTIONS(WYJIT_DRIVER_MEMBER)
#undef WYJIT_DRIVER_MEMBER
};

/// The driver, loaded and cuInit'ed on first use. Throws Error(driver) with the reason when
/// libcuda.so.1 is absent or too old ("no NVIDIA driver on this machine: ...").
const DriverApi& driver();

/// True when a driver loads and reports at least one device; never throws.
bool driver_has_device() noexcept;

/// Why driver() failed, or empty when it works; never throws.
std::string driver_unavailable_reason() noexcept;

[[noreturn]] void throw_cu_error(const char* file, int line, const char* expr, CUresult code);

}  // namespace wyjit::detail

/// Calls a driver function through the loaded table; throws Error(driver) naming the call.
#define WYJIT_CU_CHECK(call)                                                              \
  do {                                                                                    \
    const CUresult wyjit_cu_result_ = ::wyjit::detail::driver().call;                     \
    if (wyjit_cu_result_ != CUDA_SUCCESS) {                                               \
      ::wyjit::detail::throw_cu_error(__FILE__, __LINE__, #call, wyjit_cu_result_);       \
    }                                                                                     \
  } while (0)
