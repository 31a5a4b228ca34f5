// SPDX-License-Identifier: Apache-2.0
// Device helpers of the C API, over the run-time-loaded driver.
#include <string>

#include "capi/capi_internal.hpp"
#include "driver/driver_api.hpp"

using wyjit::capi::guarded;
using wyjit::capi::require;

namespace {

CUdeviceptr device_address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

extern "C" {

wyjit_status wyjit_device_count(int32_t* count) {
  return guarded("wyjit_device_count", [&] {
    require(count, "count");
    *count = 0;
    if (!wyjit::detail::driver_has_device()) return WYJIT_OK;
    int n = 0;
    WYJIT_CU_CHECK(cuDeviceGetCount(&n));
    *count = n;
    return WYJIT_OK;
  });
}

wyjit_status wyjit_device_make_current(int32_t ordinal) {
  return guarded("wyjit_device_make_current", [&] {
    int n = 0;
    WYJIT_CU_CHECK(cuDeviceGetCount(&n));
    if (ordinal < 0 || ordinal >= n) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "ordinal is " + std::to_string(ordinal) + ", the driver reports " +
                             std::to_string(n) + " device(s)");
    }
    CUdevice device = 0;
    WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
    CUcontext context = nullptr;
    WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
    WYJIT_CU_CHECK(cuCtxSetCurrent(context));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_device_synchronize(void) {
  return guarded("wyjit_device_synchronize", [&] {
    WYJIT_CU_CHECK(cuCtxSynchronize());
    return WYJIT_OK;
  });
}

wyjit_status wyjit_mem_alloc(size_t bytes, void** out) {
  return guarded("wyjit_mem_alloc", [&] {
    require(out, "out");
    if (bytes == 0) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument, "bytes is 0, must be at least 1");
    }
    CUdeviceptr p = 0;
    WYJIT_CU_CHECK(cuMemAlloc(&p, bytes));
    *out = reinterpret_cast<void*>(p);
    return WYJIT_OK;
  });
}

wyjit_status wyjit_mem_free(void* device_ptr) {
  return guarded("wyjit_mem_free", [&] {
    if (device_ptr != nullptr) WYJIT_CU_CHECK(cuMemFree(device_address(device_ptr)));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_memcpy_htod(void* device_dst, const void* host_src, size_t bytes) {
  return guarded("wyjit_memcpy_htod", [&] {
    require(device_dst, "device_dst");
    require(host_src, "host_src");
    WYJIT_CU_CHECK(cuMemcpyHtoD(device_address(device_dst), host_src, bytes));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_memcpy_dtoh(void* host_dst, const void* device_src, size_t bytes) {
  return guarded("wyjit_memcpy_dtoh", [&] {
    require(host_dst, "host_dst");
    require(device_src, "device_src");
    WYJIT_CU_CHECK(cuMemcpyDtoH(host_dst, device_address(device_src), bytes));
    return WYJIT_OK;
  });
}

const char* wyjit_device_unavailable_reason(void) {
  thread_local std::string reason;
  try {
    reason = wyjit::detail::driver_has_device() ? std::string()
             : wyjit::detail::driver_unavailable_reason().empty()
                 ? std::string("the driver reports 0 devices")
                 : wyjit::detail::driver_unavailable_reason();
  } catch (...) {
    reason.clear();
  }
  return reason.c_str();
}

}  // extern "C"
