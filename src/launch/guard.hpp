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
  Guard(const char* function, const KernelSpec& spec) : function_(function), spec_(&spec) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCode::invalid_argument,
                std::string(function_) + "(" + format_spec(*spec_) + "): " + what);
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
  /// `a * b` (e.g. the elements a tile spans); fails naming both when it is beyond int64, which
  /// no buffer spans (and which would be undefined to compute).
  std::int64_t product(const char* what, const char* a_name, std::int64_t a, const char* b_name,
                       std::int64_t b) const {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) {
      fail(std::string(what) + " args." + a_name + " * args." + b_name + " = " + std::to_string(a) +
           " * " + std::to_string(b) + " elements, beyond int64");
    }
    return out;
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
  const KernelSpec* spec_;
};

/// The intermediate tiles, t < writes-1, b < batch, at seq_stride*b + tok_stride*t must be
/// disjoint tiles of `tile` elements (either stride may be the outer one).
inline void check_disjoint_inter_states(const Guard& guard, int batch, int writes,
                                        std::int64_t seq_stride, std::int64_t tok_stride,
                                        std::int64_t tile, const char* tile_text,
                                        const char* seq_name, const char* tok_name) {
  const std::int64_t tokens = writes - 1;
  const bool seq_outer = seq_stride >= tok_stride;
  const std::int64_t inner = seq_outer ? tok_stride : seq_stride;
  const std::int64_t outer = seq_outer ? seq_stride : tok_stride;
  const std::int64_t inner_count = seq_outer ? tokens : batch;
  const std::int64_t outer_count = seq_outer ? batch : tokens;
  const char* inner_name = seq_outer ? tok_name : seq_name;
  const char* outer_name = seq_outer ? seq_name : tok_name;
  if (inner_count > 1 || outer_count > 1) {
    guard.at_least(inner_name, inner, tile, std::string("one tile is ") + tile_text);
  }
  if (outer_count > 1) {
    std::int64_t span = 0;
    // NOTE: a span past INT64_MAX is more than any stride can be (and the product is undefined).
    const bool overflow = __builtin_mul_overflow(inner, inner_count, &span);
    if (overflow || outer < span) {
      const std::string count = std::to_string(inner_count);
      guard.fail(std::string("args.") + outer_name + " is " + std::to_string(outer) +
                 ", must be >= " +
                 (overflow ? std::to_string(inner) + " * " + count + ", beyond int64"
                           : std::to_string(span)) +
                 " (the intermediate states must not overlap: " + inner_name + " * " + count + ")");
    }
  }
}

}  // namespace wyjit::detail
