// SPDX-License-Identifier: Apache-2.0
// Where NVRTC comes from: the wheel folder a binding passes, and which NVRTC was loaded and why.
#include <string>

#include "capi/capi_internal.hpp"
#include "compile/nvrtc_library.hpp"

extern "C" {

WYJIT_API const char* wyjit_nvrtc_file_name(void) {
  // NOTE: never throws: the name depends on the build only.
  static const std::string name = wyjit::detail::nvrtc_file_name();
  return name.c_str();
}

WYJIT_API wyjit_status wyjit_nvrtc_set_wheel_dir(const char* dir) {
  return wyjit::capi::guarded("wyjit_nvrtc_set_wheel_dir", [&] {
    wyjit::detail::set_nvrtc_wheel_dir(dir != nullptr ? dir : "");
    return WYJIT_OK;
  });
}

WYJIT_API void wyjit_nvrtc_info_init(wyjit_nvrtc_info* info) {
  if (info == nullptr) return;
  *info = wyjit_nvrtc_info{};
  info->struct_size = sizeof(wyjit_nvrtc_info);
}

WYJIT_API wyjit_status wyjit_nvrtc_get_info(wyjit_nvrtc_info* info) {
  return wyjit::capi::guarded("wyjit_nvrtc_get_info", [&] {
    wyjit::capi::require(info, "info");
    wyjit::capi::require_struct_size("wyjit_nvrtc_info", info->struct_size,
                                     sizeof(wyjit_nvrtc_info));
    // NOTE: the library is loaded once and never changes, so its strings outlive every caller.
    const wyjit::detail::NvrtcLibrary& nvrtc = wyjit::detail::nvrtc_library();
    const bool loaded = nvrtc.error.empty();
    info->path = loaded ? nvrtc.path.c_str() : nullptr;
    info->rule = loaded ? nvrtc.rule.c_str() : nullptr;
    info->tried = nvrtc.tried.c_str();
    info->version_major = nvrtc.major;
    info->version_minor = nvrtc.minor;
    if (!loaded) throw wyjit::Error(wyjit::ErrorCode::nvrtc, nvrtc.error);
    return WYJIT_OK;
  });
}

}  // extern "C"
