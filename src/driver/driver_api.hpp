// SPDX-License-Identifier: Apache-2.0
// The CUDA driver, opened at run time (dlopen libcuda.so.1 + cuGetProcAddress), so that the
// library, the CLI and the CPU tests run on machines with no driver.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace wyjit::detail {

// Every driver entry point wyjit (and its GPU tests) call, each with the ABI version it is
// requested at. NOTE: the version pins the signature: cuGetProcAddress returns the newest
// version <= the one asked for, and CUDA 13 changed some (cuCtxSynchronize_v2 takes a context)
// without cuda.h renaming the old name. Members are named as cuda.h spells the call, so
// `driver().cuMemAlloc(...)` works through cuda.h's macro renames (cuMemAlloc -> cuMemAlloc_v2).
#define WYJIT_DRIVER_FUNCTIONS(X)       \
  X(cuInit, 2000)                       \
  X(cuDriverGetVersion, 2020)           \
  X(cuGetErrorName, 6000)               \
  X(cuGetErrorString, 6000)             \
  X(cuDeviceGet, 2000)                  \
  X(cuDeviceGetCount, 2000)             \
  X(cuDeviceGetName, 2000)              \
  X(cuDeviceGetAttribute, 2000)         \
  X(cuDevicePrimaryCtxRetain, 7000)     \
  X(cuCtxGetCurrent, 4000)              \
  X(cuCtxSetCurrent, 4000)              \
  X(cuCtxGetDevice, 2000)               \
  X(cuCtxSynchronize, 2000)             \
  X(cuLibraryLoadData, 12000)           \
  X(cuLibraryUnload, 12000)             \
  X(cuLibraryGetKernel, 12000)          \
  X(cuKernelGetFunction, 12000)         \
  X(cuKernelSetAttribute, 12000)        \
  X(cuLaunchKernel, 4000)               \
  X(cuMemAlloc, 3020)                   \
  X(cuMemFree, 3020)                    \
  X(cuMemcpyHtoD, 3020)                 \
  X(cuMemcpyDtoH, 3020)                 \
  X(cuMemcpyDtoD, 3020)                 \
  X(cuMemcpyDtoDAsync, 3020)            \
  X(cuMemcpyHtoDAsync, 3020)            \
  X(cuMemsetD32, 3020)                  \
  X(cuStreamCreate, 2000)               \
  X(cuStreamDestroy, 4000)              \
  X(cuStreamSynchronize, 2000)          \
  X(cuStreamBeginCapture, 10010)        \
  X(cuStreamEndCapture, 10000)          \
  X(cuGraphInstantiateWithFlags, 11040) \
  X(cuGraphLaunch, 10000)               \
  X(cuGraphExecDestroy, 10000)          \
  X(cuGraphDestroy, 10000)              \
  X(cuEventCreate, 2000)                \
  X(cuEventDestroy, 4000)               \
  X(cuEventRecord, 2000)                \
  X(cuEventSynchronize, 2000)           \
  X(cuEventElapsedTime, 12080)          \
  X(cuStreamIsCapturing, 10000)         \
  X(cuPointerGetAttribute, 4000)        \
  X(cuCtxPushCurrent, 4000)             \
  X(cuCtxPopCurrent, 4000)              \
  X(cuMemsetD2D32Async, 3020)

struct DriverApi {
#define WYJIT_DRIVER_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
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
#define WYJIT_CU_CHECK(call)                                                        \
  do {                                                                              \
    const CUresult wyjit_cu_result_ = ::wyjit::detail::driver().call;               \
    if (wyjit_cu_result_ != CUDA_SUCCESS) {                                         \
      ::wyjit::detail::throw_cu_error(__FILE__, __LINE__, #call, wyjit_cu_result_); \
    }                                                                               \
  } while (0)
