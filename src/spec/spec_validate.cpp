// SPDX-License-Identifier: Apache-2.0
// What this build supports: validate_spec.
#include <string>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

namespace {

[[noreturn]] void reject(const KernelSpec& s, const std::string& field, const std::string& got,
                         const std::string& allowed) {
  throw Error(ErrorCode::invalid_spec, "invalid spec " + format_spec(s) + ": " + field + " is " +
                                           got + ", allowed: " + allowed);
}

bool is_supported_head_dim(int d) { return d == 64 || d == 128 || d == 256; }

}  // namespace

void validate_spec(const KernelSpec& s) {
  switch (s.family) {
    case Family::gdn_verify:
      break;
  }
  if (s.k < 1 || s.k > 32) reject(s, "K", std::to_string(s.k), "1..32");
  if (!is_supported_head_dim(s.dk)) reject(s, "dk", std::to_string(s.dk), "64, 128, 256");
  if (!is_supported_head_dim(s.dv)) reject(s, "dv", std::to_string(s.dv), "64, 128, 256");
  // NOTE: every addressing mode, state dtype and option is built and GPU-tested; the family
  // switch above is where a family that supports less would refuse it.
}

}  // namespace wyjit
