// SPDX-License-Identifier: Apache-2.0
// What this build supports: validate_spec.
#include <string>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

namespace {

// NOTE: the checks below pass plain values and build a message only on failure: validate_spec
// runs on every Jit::kernel call, and a passing check must cost no string (nor allocation).
[[noreturn, gnu::cold, gnu::noinline]] void reject(const KernelSpec& s, const std::string& field,
                                                   const std::string& got,
                                                   const std::string& allowed) {
  throw Error(ErrorCode::invalid_spec, "invalid spec " + format_spec(s) + ": " + field + " is " +
                                           got + ", allowed: " + allowed);
}

bool is_supported_head_dim(int d) { return d == 64 || d == 128 || d == 256; }

std::string text(int v) { return std::to_string(v); }
std::string text(bool b) { return b ? "true" : "false"; }
template <typename Enum>
std::string text(Enum e) {
  return to_string(e);
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_non_default(const KernelSpec& s,
                                                               const char* field,
                                                               const std::string& got,
                                                               const std::string& expected) {
  reject(s, field, got,
         expected + " (the default: " + to_string(s.family) + " does not use " + field + ")");
}

// A field the family does not use must keep its default, so that one variant has one spec.
template <typename T>
void require_default(const KernelSpec& s, const char* field, T got, T expected) {
  if (got != expected) reject_non_default(s, field, text(got), text(expected));
}

void validate_gdn_verify(const KernelSpec& s) {
  const KernelSpec d;
  require_default(s, "width", s.width, d.width);
  require_default(s, "weight", s.weight, d.weight);
  require_default(s, "bias", s.bias, d.bias);
  require_default(s, "silu", s.silu, d.silu);
  require_default(s, "rollback", s.rollback, d.rollback);
  if (!is_supported_head_dim(s.dk)) reject(s, "dk", std::to_string(s.dk), "64, 128, 256");
  if (!is_supported_head_dim(s.dv)) reject(s, "dv", std::to_string(s.dv), "64, 128, 256");
  // NOTE: every addressing mode, state dtype and option is built and GPU-tested.
}

void validate_conv1d_update(const KernelSpec& s) {
  const KernelSpec d;
  require_default(s, "state", s.state, d.state);
  require_default(s, "layout", s.layout, d.layout);
  require_default(s, "dk", s.dk, d.dk);
  require_default(s, "dv", s.dv, d.dv);
  require_default(s, "l2norm_qk", s.l2norm_qk, d.l2norm_qk);
  require_default(s, "fused_gating", s.fused_gating, d.fused_gating);
  if (s.width < 2 || s.width > 8) reject(s, "width", std::to_string(s.width), "2..8");
  if (s.weight != s.io && s.weight != DType::f32) {
    reject(s, "weight", to_string(s.weight),
           std::string(to_string(s.io)) + " (the io dtype) or f32");
  }
}

}  // namespace

void validate_spec(const KernelSpec& s) {
  if (s.k < 1 || s.k > 32) reject(s, "K", std::to_string(s.k), "1..32");
  switch (s.family) {
    case Family::gdn_verify:
      validate_gdn_verify(s);
      return;
    case Family::conv1d_update:
      validate_conv1d_update(s);
      return;
  }
  reject(s, "family", std::to_string(static_cast<int>(s.family)), "gdn_verify, conv1d_update");
}

}  // namespace wyjit
