// SPDX-License-Identifier: Apache-2.0
#include "driver/driver_api.hpp"

#include <dlfcn.h>

#include <mutex>

#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

struct Loaded {
  DriverApi api;
  std::string error;  // empty when api is usable
};

Loaded load_driver() {
  Loaded loaded;
  // NOTE: the handle is never closed: function pointers from it live as long as the process.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    loaded.error = std::string("no NVIDIA driver on this machine: cannot open libcuda.so.1 (") +
                   (why != nullptr ? why : "unknown reason") + ")";
    return loaded;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    loaded.error =
        "the NVIDIA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2 "
        "(a CUDA 12 or newer driver is needed)";
    return loaded;
  }
  DriverApi& api = loaded.api;
  std::string missing;
#define WYJIT_DRIVER_LOAD(name, version)                                                       \
  {                                                                                            \
    void* fn = nullptr;                                                                        \
    CUdriverProcAddressQueryResult status{};                                                   \
    if (get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || \
        fn == nullptr) {                                                                       \
      missing += std::string(missing.empty() ? "" : ", ") + #name;                             \
    }                                                                                          \
    api.name = reinterpret_cast<decltype(api.name)>(fn);                                       \
  }
  WYJIT_DRIVER_FUNCTIONS(WYJIT_DRIVER_LOAD)
#undef WYJIT_DRIVER_LOAD
  if (!missing.empty()) {
    loaded.error = "the NVIDIA driver lacks entry points for CUDA " +
                   std::to_string(CUDA_VERSION / 1000) + "." +
                   std::to_string(CUDA_VERSION % 1000 / 10) + ": " + missing;
    return loaded;
  }
  if (const CUresult init = api.cuInit(0); init != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.cuGetErrorName(init, &name);
    loaded.error = std::string("cuInit failed: ") + (name != nullptr ? name : "unknown error");
  }
  return loaded;
}

const Loaded& loaded_driver() {
  static const Loaded loaded = load_driver();
  return loaded;
}

}  // namespace

const DriverApi& driver() {
  const Loaded& loaded = loaded_driver();
  if (!loaded.error.empty()) throw Error(ErrorCode::driver, loaded.error);
  return loaded.api;
}

std::string driver_unavailable_reason() noexcept {
  try {
    return loaded_driver().error;
  } catch (...) {
    return "driver load failed";
  }
}

bool driver_has_device() noexcept {
  try {
    if (!loaded_driver().error.empty()) return false;
    int count = 0;
    return driver().cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
  } catch (...) {
    return false;
  }
}

void throw_cu_error(const char* file, int line, const char* expr, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  const Loaded& loaded = loaded_driver();
  if (loaded.error.empty()) {
    loaded.api.cuGetErrorName(code, &name);
    loaded.api.cuGetErrorString(code, &text);
  }
  throw Error(ErrorCode::driver, std::string(expr) + " failed: " + (name ? name : "?") + " (" +
                                     std::to_string(static_cast<int>(code)) + ": " +
                                     (text ? text : "?") + ") at " + file + ":" +
                                     std::to_string(line));
}

}  // namespace wyjit::detail
