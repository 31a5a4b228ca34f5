// SPDX-License-Identifier: Apache-2.0
// The kernel_src/ files, embedded at build time (see cmake/EmbedKernelSources.cmake).
#pragma once

#include <span>
#include <string_view>

namespace wyjit::detail {

struct EmbeddedFile {
  std::string_view name;  // file name inside kernel_src/, e.g. "gdn_verify.cuh"
  std::string_view text;
};

/// Every embedded kernel_src file, in file-name order.
std::span<const EmbeddedFile> embedded_kernel_sources() noexcept;

}  // namespace wyjit::detail
