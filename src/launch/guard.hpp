// SPDX-License-Identifier: Apache-2.0
// Launch guards: each check throws Error(invalid_argument) naming the launch function, the
// variant, the argument and its actual value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::detail {

class Guard {
 public:
  /// `function` (a string literal) prefixes every message: "launch_gdn_verify(<variant>): ...".
  /// NOTE: nothing is formatted until a check fails: the launch path allocates nothing.
  Guard(const char* function, const KernelSpec& spec) : function_(function), spec_(spec) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::invalid_argument,
                std::string(function_) + "(" + format_spec(spec_) + "): " + what);
  }
  void equal(const char* name, std::int64_t value, std::int64_t expected, const char* why) const {
    if (value != expected) {
      fail(std::string("args.") + name + " is " + std::to_string(value) + ", must be " +
           std::to_string(expected) + " (" + why + ")");
    }
  }
  void at_least(const char* name, std::int64_t value, std::int64_t minimum,
                std::string_view why) const {
    if (value < minimum) {
      fail(std::string("args.") + name + " is " + std::to_string(value) +
           ", must be >= " + std::to_string(minimum) + " (" + std::string(why) + ")");
    }
  }
  void multiple_of(const char* name, std::int64_t value, std::int64_t factor,
                   const char* why) const {
    if (value % factor != 0) {
      fail(std::string("args.") + name + " is " + std::to_string(value) +
           ", must be a multiple of " + std::to_string(factor) + " (" + why + ")");
    }
  }
  /// Non-null and aligned to `alignment` bytes.
  void pointer(const char* name, const void* p, std::size_t alignment,
               const char* why = "vector loads") const {
    if (p == nullptr) fail(std::string("args.") + name + " is null");
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    if (address % alignment != 0) {
      fail(std::string("args.") + name + " = " + hex(address) + " is not aligned to " +
           std::to_string(alignment) + " bytes (" + why + ")");
    }
  }

 private:
  static std::string hex(std::uintptr_t value) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    do {
      text.insert(text.begin(), kDigits[value % 16]);
      value /= 16;
    } while (value != 0);
    return "0x" + text;
  }
  const char* function_;
  KernelSpec spec_;
};

}  // namespace wyjit::detail
