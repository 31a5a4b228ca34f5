// SPDX-License-Identifier: Apache-2.0
// The launch contract every family follows (STYLE 5): the user's arguments -> the family's check
// -> its plan (parameter block, grid, block, shared memory, role) -> launch(), written once here.
#pragma once

#include <cuda.h>

#include <string>
#include <type_traits>
#include <variant>

#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::detail {

/// How one launch runs: which of the variant's kernels, its shape and its one parameter.
struct LaunchPlan {
  int role = 0;  ///< index into the family's roles
  unsigned grid = 0;
  unsigned block = 0;
  unsigned smem_bytes = 0;  ///< dynamic shared memory
};

/// The spec of `kernel` as family Spec; throws Error(invalid_argument) naming `function` when the
/// kernel is another family's.
template <class Spec>
const Spec& spec_of(const Kernel& kernel, const char* function) {
  const Spec* spec = std::get_if<Spec>(&kernel.spec());
  if (spec == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(function) + "(" + format_spec(kernel.spec()) + "): the kernel is a " +
                    std::string(family_name(kernel.spec())) + " variant, not " +
                    std::string(family_name(KernelSpec(Spec{}))));
  }
  return *spec;
}

/// Launches role `plan.role` of `kernel` with `params` (the kernel's one by-value parameter) on
/// `stream`. Throws Error(invalid_argument) when the kernel has no handle for the role (a Kernel
/// not obtained from Jit::kernel), Error(driver) when the launch fails.
void launch(const Kernel& kernel, const char* function, const LaunchPlan& plan, void* params,
            CUstream stream);

/// launch() for a parameter block of type P (checked trivially copyable: it is copied by value
/// into the launch).
template <class P>
void launch_with(const Kernel& kernel, const char* function, const LaunchPlan& plan, P& params,
                 CUstream stream) {
  static_assert(std::is_trivially_copyable_v<P>, "kernel parameters are copied by value");
  launch(kernel, function, plan, &params, stream);
}

}  // namespace wyjit::detail
