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
  switch (s.addressing) {
    case Addressing::strided:
      break;
    case Addressing::table:
    case Addressing::slot:
      reject(s, "addressing", to_string(s.addressing), "strided (table and slot: not yet built)");
  }
  switch (s.state) {
    case DType::f32:
      break;
    case DType::f16:
    case DType::bf16:
      reject(s, "state dtype", to_string(s.state), "f32 (f16 and bf16 states: not yet validated)");
  }
  if (s.fused_gating) reject(s, "option", "gating", "l2norm (fused gating: not yet built)");
}

}  // namespace wyjit
