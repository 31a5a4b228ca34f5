// SPDX-License-Identifier: Apache-2.0
// NVRTC: compile stamped source to a cubin or PTX, find its kernels by name expression.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "wyjit/jit.hpp"

namespace wyjit::detail {

struct NvrtcResult {
  std::vector<std::uint8_t> binary;        ///< cubin, or PTX text including its terminating NUL
  std::vector<std::string> lowered_names;  ///< mangled names, one per name expression
  std::string log;                         ///< compiler log (warnings), possibly empty
};

/// The canonical option list for `target`, in order. One option per element: never re-split.
std::vector<std::string> nvrtc_options(const Target& target);

/// Compiles `source`; throws Error(compile_failed) carrying the log, the options and `variant`.
NvrtcResult nvrtc_compile(const std::string& source, const std::string& program_name,
                          std::span<const std::string> name_expressions, const Target& target,
                          const std::string& variant);

/// nvrtc_compile with an explicit option list instead of nvrtc_options(target); `target` only
/// picks cubin or PTX output. For benchmarks that compare option sets: a binary built this way
/// does not match its cache key unless `options` is nvrtc_options(target).
NvrtcResult nvrtc_compile_with(const std::string& source, const std::string& program_name,
                               std::span<const std::string> name_expressions, const Target& target,
                               const std::string& variant, const std::vector<std::string>& options);

/// "13.0 (<release line>; <build id>)": the version and the exact build, read once per process
/// from the header of a tiny PTX compile (NVRTC has no API for its build id).
const std::string& nvrtc_identity();

/// Architectures this NVRTC can target (nvrtcGetSupportedArchs), ascending, e.g. {75, ..., 121}.
std::vector<int> nvrtc_supported_archs();

}  // namespace wyjit::detail
