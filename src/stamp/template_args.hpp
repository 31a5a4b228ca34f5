// SPDX-License-Identifier: Apache-2.0
// Typed template arguments of kernel name expressions, as the kernel templates spell them
// (kernel_src/common): families build their name expressions from these.
#pragma once

#include <string>

#include "wyjit/types.hpp"

namespace wyjit::detail {

/// The kernel-side element type of `t`: `float`, `wyjit_kernels::Half`, `wyjit_kernels::Bf16`.
const char* kernel_type(DType t) noexcept;
/// `wyjit_kernels::kAddrStrided`, ... (common/state_refs.cuh).
const char* kernel_addressing(Addressing a) noexcept;
/// `wyjit_kernels::kLayoutVK` or `wyjit_kernels::kLayoutKV`.
const char* kernel_layout(Layout l) noexcept;
/// `true` or `false`.
inline const char* kernel_bool(bool b) noexcept { return b ? "true" : "false"; }

/// `name<arg0, arg1, ...>` with a space before the closing `>` when the last argument ends in
/// `>` (NVRTC's name expressions must parse as C++03 too).
std::string template_id(const std::string& name, std::initializer_list<std::string> args);

}  // namespace wyjit::detail
