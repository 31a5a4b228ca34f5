// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the C API's check functions (wyjit_check_<kernel>, one per kernel of every
// family) over argument structs built from the input's bytes (layout: capi_check_input.hpp).
// They run on the host and never dereference a device pointer, so any values may go in.
//
// Properties: a check returns a status, never crashes nor lets an exception through (which the
// C API would turn into WYJIT_ERROR_INTERNAL); the status is
//   - invalid_argument for a NULL variant or args, or a struct_size of another version;
//   - else invalid_spec exactly when the variant is not one this build supports;
//   - else invalid_argument for a variant of another family;
//   - else ok or invalid_argument;
// every refusal leaves a message starting with the function's name, and a second call with the
// same arguments returns the same status.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "capi_check_input.hpp"
#include "fuzz_support.hpp"
#include "spec/family.hpp"
#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

using wyjit::fuzz::CheckFn;

bool supported(const wyjit::KernelSpec& spec) {
  try {
    wyjit::validate_spec(spec);
    return true;
  } catch (const wyjit::Error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> in(data, size);
  if (in.size() < 2) return 0;
  const CheckFn& fn = wyjit::fuzz::kChecks[in[0] % wyjit::fuzz::kChecks.size()];
  const std::uint8_t flags = in[1];
  in = in.subspan(2);

  alignas(std::max_align_t) unsigned char args[wyjit::fuzz::kMaxArgsSize] = {};
  static_assert(sizeof(std::size_t) <= wyjit::fuzz::kMaxArgsSize);
  fn.init(args);
  std::size_t struct_size = fn.args_size;
  if ((flags & wyjit::fuzz::kFlagStructSize) != 0) {
    if (in.size() < sizeof(struct_size)) return 0;
    std::memcpy(&struct_size, in.data(), sizeof(struct_size));
    std::memcpy(args, &struct_size, sizeof(struct_size));
    in = in.subspan(sizeof(struct_size));
  }

  const wyjit::detail::Family& own = *wyjit::detail::find_family(fn.family);
  const bool other_family = (flags & wyjit::fuzz::kFlagOtherFamily) != 0;
  const wyjit::detail::Family& family = other_family ? wyjit::fuzz::next_family(own) : own;
  const std::size_t field_bytes = std::min(in.size(), family.fields().size());
  const wyjit::KernelSpec spec = wyjit::fuzz::spec_from_bytes(family, in.first(field_bytes));
  in = in.subspan(field_bytes);
  const std::string name = wyjit::format_spec(spec);

  // The struct after struct_size.
  const std::size_t body = std::min(in.size(), fn.args_size - sizeof(std::size_t));
  std::memcpy(args + sizeof(std::size_t), in.data(), body);

  const bool null_args = (flags & wyjit::fuzz::kFlagNullArgs) != 0;
  const bool null_spec = (flags & wyjit::fuzz::kFlagNullSpec) != 0;
  const char* spec_arg = null_spec ? nullptr : name.c_str();
  const void* args_arg = null_args ? nullptr : args;
  const wyjit_status status = fn.check(spec_arg, args_arg);

  const std::string context = std::string(fn.name) + "(" + name +
                              "): " + wyjit_status_name(status) + ": " +
                              (status == WYJIT_OK ? "" : wyjit_last_error());
  if (null_args || null_spec || struct_size != fn.args_size) {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_ERROR_INVALID_ARGUMENT, context);
  } else if (!supported(spec)) {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_ERROR_INVALID_SPEC, context);
  } else if (other_family) {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_ERROR_INVALID_ARGUMENT, context);
  } else {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_OK || status == WYJIT_ERROR_INVALID_ARGUMENT, context);
  }
  if (status != WYJIT_OK) {
    const std::string prefix = std::string(fn.name) + ": ";
    WYJIT_FUZZ_REQUIRE(std::string(wyjit_last_error()).starts_with(prefix), context);
  }
  WYJIT_FUZZ_REQUIRE(fn.check(spec_arg, args_arg) == status, context + " (called again)");
  return 0;
}
