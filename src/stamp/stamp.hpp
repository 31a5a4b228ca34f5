// SPDX-License-Identifier: Apache-2.0
// Source stamping: the embedded template text plus the few lines that vary per variant.
#pragma once

#include <string>
#include <string_view>

#include "wyjit/spec.hpp"

namespace wyjit::detail {

struct StampedSource {
  std::string text;             ///< self-contained CUDA source (every include inlined)
  std::string name_expression;  ///< the kernel's template-id, for nvrtcAddNameExpression
  std::string program_name;     ///< e.g. "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.cu"
};

StampedSource stamp(const KernelSpec& spec);

/// `file` from kernel_src/ with every `#include "x.cuh"` replaced by x's text, each file once.
/// Throws Error(internal) for an include of a file that is not embedded.
std::string inline_kernel_file(std::string_view file);

}  // namespace wyjit::detail
