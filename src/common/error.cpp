// SPDX-License-Identifier: Apache-2.0
#include "wyjit/error.hpp"

namespace wyjit {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_spec:
      return "invalid_spec";
    case ErrorCode::invalid_argument:
      return "invalid_argument";
    case ErrorCode::compile_failed:
      return "compile_failed";
    case ErrorCode::cache_io:
      return "cache_io";
    case ErrorCode::cache_miss_no_jit:
      return "cache_miss_no_jit";
    case ErrorCode::driver:
      return "driver";
    case ErrorCode::nvrtc:
      return "nvrtc";
    case ErrorCode::internal:
      return "internal";
  }
  return "unknown";
}

}  // namespace wyjit
