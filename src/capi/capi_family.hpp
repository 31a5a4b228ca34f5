// SPDX-License-Identifier: Apache-2.0
// A launch's three C entry points (args_init, check, launch), made by one macro in the family's
// launch file: the C argument struct is the C++ one, so nothing is copied field by field.
#pragma once

#include <cuda.h>

#include <variant>

#include "capi/capi_internal.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::capi {

template <class Args>
void args_init(Args* args) noexcept {
  if (args != nullptr) *args = Args{};
}

template <class Spec, class Args, class Check>
wyjit_status check_family(const char* function, const char* args_type, const char* spec_name,
                          const Args* args, Check check) noexcept {
  return guarded(function, [&] {
    require(spec_name, "spec");
    require(args, "args");
    require_struct_size(args_type, args->struct_size, sizeof(Args));
    const KernelSpec spec = parse_spec(spec_name);
    const Spec* typed = std::get_if<Spec>(&spec);
    if (typed == nullptr) {
      throw Error(ErrorCode::invalid_argument,
                  "spec '" + std::string(spec_name) + "' is a " + std::string(family_name(spec)) +
                      " variant, not " + std::string(family_name(KernelSpec(Spec{}))));
    }
    check(*typed, *args);
    return WYJIT_OK;
  });
}

template <class Args, class Launch>
wyjit_status launch_family(const char* function, const char* args_type, const wyjit_kernel* kernel,
                           const Args* args, void* stream, Launch launch) noexcept {
  return guarded(function, [&] {
    require(kernel, "kernel");
    require(args, "args");
    require_struct_size(args_type, args->struct_size, sizeof(Args));
    launch(kernel->kernel, *args, static_cast<CUstream>(stream));
    return WYJIT_OK;
  });
}

}  // namespace wyjit::capi

/// The C entry points wyjit_<name>_args_init, wyjit_check_<name> and wyjit_launch_<name>
/// (declared in the family's wyjit/<family>.h) over one of the family's C++ checks and launches
/// (a family with several kernels has a launch per kernel: e.g. gdn_replay_verify).
#define WYJIT_C_LAUNCH(name, Spec, Args, check_fn, launch_fn)                                     \
  extern "C" void wyjit_##name##_args_init(Args* args) { wyjit::capi::args_init(args); }          \
  extern "C" wyjit_status wyjit_check_##name(const char* spec, const Args* args) {                \
    return wyjit::capi::check_family<Spec>("wyjit_check_" #name, #Args, spec, args,               \
                                           [](const Spec& s, const Args& a) { check_fn(s, a); }); \
  }                                                                                               \
  extern "C" wyjit_status wyjit_launch_##name(const wyjit_kernel* kernel, const Args* args,       \
                                              void* stream) {                                     \
    return wyjit::capi::launch_family(                                                            \
        "wyjit_launch_" #name, #Args, kernel, args, stream,                                       \
        [](const wyjit::Kernel& k, const Args& a, CUstream s) { launch_fn(k, a, s); });           \
  }
