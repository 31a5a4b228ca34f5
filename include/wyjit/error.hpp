// SPDX-License-Identifier: Apache-2.0
/// @file error.hpp
/// @brief The one exception type wyjit throws, with a machine-readable code.
#pragma once

#include <stdexcept>
#include <string>

#include "wyjit/export.h"

namespace wyjit {

/// What went wrong, coarse enough for a C status code.
enum class ErrorCode {
  invalid_spec,       ///< a KernelSpec field or a canonical name is not allowed
  invalid_argument,   ///< a launch or API argument failed a guard
  compile_failed,     ///< NVRTC rejected the stamped source
  cache_io,           ///< the disk cache could not be read or written
  cache_miss_no_jit,  ///< WYJIT_NO_JIT is set and no cached binary exists
  driver,             ///< the CUDA driver is missing or returned an error
  nvrtc,              ///< an NVRTC call other than compilation failed
  internal,           ///< a wyjit bug: please report it
};

/// Printable name of an ErrorCode ("invalid_spec", ...).
WYJIT_API const char* to_string(ErrorCode code) noexcept;

/// Every error wyjit raises. `what()` carries the full message, with the
/// offending values (argument names, sizes, the variant, compiler logs).
class WYJIT_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace wyjit
