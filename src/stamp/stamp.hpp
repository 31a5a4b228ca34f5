// SPDX-License-Identifier: Apache-2.0
// Source stamping: the family's embedded template text plus the few lines that vary per
// variant (one explicit instantiation per kernel role).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wyjit/spec.hpp"

namespace wyjit::detail {

struct StampedSource {
  std::string text;  ///< self-contained CUDA source (every include inlined)
  /// Per role, in the family's role order: the kernel's template-id, for nvrtcAddNameExpression.
  std::vector<std::string> name_expressions;
  std::string program_name;  ///< e.g. "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.cu"
};

StampedSource stamp(const KernelSpec& spec);

/// `file` from kernel_src/ with every `#include "x.cuh"` (a path inside kernel_src/) replaced by
/// x's text, each file once. Throws Error(internal) for an include of a file that is not
/// embedded.
std::string inline_kernel_file(std::string_view file);

}  // namespace wyjit::detail
