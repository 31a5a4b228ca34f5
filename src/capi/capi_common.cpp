// SPDX-License-Identifier: Apache-2.0
// Status codes, the thread-local last error, version, logging and spec conversions.
#include <spdlog/spdlog.h>

#include <cstring>
#include <string>

#include "capi/capi_internal.hpp"
#include "common/log.hpp"

namespace wyjit::capi {

namespace {

// NOTE: wyjit_spec mirrors every KernelSpec field (to_cpp / to_c below); a new field must be
// added there too, and in python/wyjit/_lib.py and tests/consumers/rust/src/main.rs.
static_assert(sizeof(KernelSpec) == 52,
              "KernelSpec changed: mirror it in wyjit_spec (include/wyjit/wyjit.h)");

thread_local std::string t_last_error;

#define WYJIT_STR2(x) #x
#define WYJIT_STR(x) WYJIT_STR2(x)
constexpr const char kVersionString[] = WYJIT_STR(WYJIT_VERSION_MAJOR) "." WYJIT_STR(
    WYJIT_VERSION_MINOR) "." WYJIT_STR(WYJIT_VERSION_PATCH);
#undef WYJIT_STR
#undef WYJIT_STR2

[[noreturn]] void bad_field(const char* field, std::int32_t value, const char* allowed) {
  throw Error(ErrorCode::invalid_spec, std::string("spec->") + field + " is " +
                                           std::to_string(value) + ", allowed: " + allowed);
}

bool to_bool(const char* field, std::int32_t value) {
  if (value != 0 && value != 1) bad_field(field, value, "0 or 1");
  return value == 1;
}

DType to_dtype(const char* field, std::int32_t value) {
  switch (value) {
    case WYJIT_DTYPE_F32:
      return DType::f32;
    case WYJIT_DTYPE_F16:
      return DType::f16;
    case WYJIT_DTYPE_BF16:
      return DType::bf16;
    default:
      bad_field(field, value, "0 (WYJIT_DTYPE_F32), 1 (WYJIT_DTYPE_F16), 2 (WYJIT_DTYPE_BF16)");
  }
}

std::int32_t from_dtype(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return WYJIT_DTYPE_F32;
    case DType::f16:
      return WYJIT_DTYPE_F16;
    case DType::bf16:
      return WYJIT_DTYPE_BF16;
  }
  return -1;
}

}  // namespace

wyjit_status fail(wyjit_status status, std::string_view function,
                  std::string_view message) noexcept {
  try {
    t_last_error.assign(function);
    t_last_error += ": ";
    t_last_error += message;
  } catch (...) {
    // NOTE: out of memory while reporting; a literal needs no allocation beyond what clear keeps.
    t_last_error.clear();
  }
  return status;
}

wyjit_status status_of(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_spec:
      return WYJIT_ERROR_INVALID_SPEC;
    case ErrorCode::invalid_argument:
      return WYJIT_ERROR_INVALID_ARGUMENT;
    case ErrorCode::compile_failed:
      return WYJIT_ERROR_COMPILE_FAILED;
    case ErrorCode::cache_io:
      return WYJIT_ERROR_CACHE_IO;
    case ErrorCode::cache_miss_no_jit:
      return WYJIT_ERROR_CACHE_MISS_NO_JIT;
    case ErrorCode::driver:
      return WYJIT_ERROR_DRIVER;
    case ErrorCode::nvrtc:
      return WYJIT_ERROR_NVRTC;
    case ErrorCode::internal:
      return WYJIT_ERROR_INTERNAL;
  }
  return WYJIT_ERROR_INTERNAL;
}

void require(const void* p, const char* name) {
  if (p == nullptr) throw Error(ErrorCode::invalid_argument, std::string(name) + " is NULL");
}

void require_struct_size(const char* type, std::size_t got, std::size_t expected) {
  if (got != expected) {
    throw Error(ErrorCode::invalid_argument,
                std::string(type) + ".struct_size is " + std::to_string(got) + ", wyjit " +
                    kVersionString + " expects " + std::to_string(expected) + " (fill it with " +
                    type + "_init, and check that wyjit.h and the library are the same version)");
  }
}

KernelSpec to_cpp(const wyjit_spec& c) {
  KernelSpec s;
  switch (c.family) {
    case WYJIT_FAMILY_GDN_VERIFY:
      s.family = Family::gdn_verify;
      break;
    case WYJIT_FAMILY_CONV1D_UPDATE:
      s.family = Family::conv1d_update;
      break;
    default:
      bad_field("family", c.family, "0 (WYJIT_FAMILY_GDN_VERIFY), 1 (WYJIT_FAMILY_CONV1D_UPDATE)");
  }
  s.k = c.k;
  s.io = to_dtype("io", c.io);
  s.state = to_dtype("state", c.state);
  switch (c.addressing) {
    case WYJIT_ADDRESSING_STRIDED:
      s.addressing = Addressing::strided;
      break;
    case WYJIT_ADDRESSING_TABLE:
      s.addressing = Addressing::table;
      break;
    case WYJIT_ADDRESSING_SLOT:
      s.addressing = Addressing::slot;
      break;
    default:
      bad_field("addressing", c.addressing,
                "0 (WYJIT_ADDRESSING_STRIDED), 1 (WYJIT_ADDRESSING_TABLE), 2 "
                "(WYJIT_ADDRESSING_SLOT)");
  }
  switch (c.layout) {
    case WYJIT_LAYOUT_VK:
      s.layout = Layout::vk;
      break;
    case WYJIT_LAYOUT_KV:
      s.layout = Layout::kv;
      break;
    default:
      bad_field("layout", c.layout, "0 (WYJIT_LAYOUT_VK), 1 (WYJIT_LAYOUT_KV)");
  }
  s.dk = c.dk;
  s.dv = c.dv;
  s.l2norm_qk = to_bool("l2norm_qk", c.l2norm_qk);
  s.fused_gating = to_bool("fused_gating", c.fused_gating);
  s.width = c.width;
  s.weight = to_dtype("weight", c.weight);
  s.bias = to_bool("bias", c.bias);
  s.silu = to_bool("silu", c.silu);
  switch (c.rollback) {
    case WYJIT_ROLLBACK_INTERMEDIATE:
      s.rollback = Rollback::intermediate;
      break;
    case WYJIT_ROLLBACK_WINDOW:
      s.rollback = Rollback::window;
      break;
    default:
      bad_field("rollback", c.rollback,
                "0 (WYJIT_ROLLBACK_INTERMEDIATE), 1 (WYJIT_ROLLBACK_WINDOW)");
  }
  return s;
}

wyjit_spec to_c(const KernelSpec& s) noexcept {
  wyjit_spec c{};
  switch (s.family) {
    case Family::gdn_verify:
      c.family = WYJIT_FAMILY_GDN_VERIFY;
      break;
    case Family::conv1d_update:
      c.family = WYJIT_FAMILY_CONV1D_UPDATE;
      break;
  }
  c.k = s.k;
  c.io = from_dtype(s.io);
  c.state = from_dtype(s.state);
  switch (s.addressing) {
    case Addressing::strided:
      c.addressing = WYJIT_ADDRESSING_STRIDED;
      break;
    case Addressing::table:
      c.addressing = WYJIT_ADDRESSING_TABLE;
      break;
    case Addressing::slot:
      c.addressing = WYJIT_ADDRESSING_SLOT;
      break;
  }
  switch (s.layout) {
    case Layout::vk:
      c.layout = WYJIT_LAYOUT_VK;
      break;
    case Layout::kv:
      c.layout = WYJIT_LAYOUT_KV;
      break;
  }
  c.dk = s.dk;
  c.dv = s.dv;
  c.l2norm_qk = s.l2norm_qk ? 1 : 0;
  c.fused_gating = s.fused_gating ? 1 : 0;
  c.width = s.width;
  c.weight = from_dtype(s.weight);
  c.bias = s.bias ? 1 : 0;
  c.silu = s.silu ? 1 : 0;
  switch (s.rollback) {
    case Rollback::intermediate:
      c.rollback = WYJIT_ROLLBACK_INTERMEDIATE;
      break;
    case Rollback::window:
      c.rollback = WYJIT_ROLLBACK_WINDOW;
      break;
  }
  return c;
}

}  // namespace wyjit::capi

using wyjit::capi::guarded;
using wyjit::capi::require;

extern "C" {

const char* wyjit_status_name(wyjit_status status) {
  switch (status) {
    case WYJIT_OK:
      return "ok";
    case WYJIT_ERROR_INVALID_SPEC:
      return "invalid_spec";
    case WYJIT_ERROR_INVALID_ARGUMENT:
      return "invalid_argument";
    case WYJIT_ERROR_COMPILE_FAILED:
      return "compile_failed";
    case WYJIT_ERROR_CACHE_IO:
      return "cache_io";
    case WYJIT_ERROR_CACHE_MISS_NO_JIT:
      return "cache_miss_no_jit";
    case WYJIT_ERROR_DRIVER:
      return "driver";
    case WYJIT_ERROR_NVRTC:
      return "nvrtc";
    case WYJIT_ERROR_INTERNAL:
      return "internal";
    case WYJIT_STATUS_MAX_ENUM:
      break;
  }
  return "unknown";
}

const char* wyjit_last_error(void) { return wyjit::capi::t_last_error.c_str(); }

uint32_t wyjit_version(void) { return WYJIT_VERSION; }

const char* wyjit_version_string(void) { return wyjit::capi::kVersionString; }

wyjit_status wyjit_set_log_level(int32_t level) {
  return guarded("wyjit_set_log_level", [&] {
    if (level < WYJIT_LOG_TRACE || level > WYJIT_LOG_OFF) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "level is " + std::to_string(level) +
                             ", allowed: 0 (WYJIT_LOG_TRACE) .. 6 (WYJIT_LOG_OFF)");
    }
    // NOTE: WYJIT_LOG_* are spdlog's level numbers (trace = 0 .. off = 6).
    static_assert(int{spdlog::level::trace} == int{WYJIT_LOG_TRACE} &&
                  int{spdlog::level::off} == int{WYJIT_LOG_OFF});
    wyjit::detail::logger().set_level(static_cast<spdlog::level::level_enum>(level));
    return WYJIT_OK;
  });
}

void wyjit_spec_init(wyjit_spec* spec) {
  if (spec != nullptr) *spec = wyjit::capi::to_c(wyjit::KernelSpec{});
}

wyjit_status wyjit_spec_parse(const char* name, wyjit_spec* out) {
  return guarded("wyjit_spec_parse", [&] {
    require(name, "name");
    require(out, "out");
    *out = wyjit::capi::to_c(wyjit::parse_spec(name));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_spec_format(const wyjit_spec* spec, char* buffer, size_t size, size_t* length) {
  return guarded("wyjit_spec_format", [&] {
    require(spec, "spec");
    const std::string name = wyjit::format_spec(wyjit::capi::to_cpp(*spec));
    if (length != nullptr) *length = name.size();
    if (buffer == nullptr && size == 0) return WYJIT_OK;
    require(buffer, "buffer");
    if (size <= name.size()) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "size is " + std::to_string(size) + " bytes, the name '" + name +
                             "' needs " + std::to_string(name.size() + 1));
    }
    std::memcpy(buffer, name.c_str(), name.size() + 1);
    return WYJIT_OK;
  });
}

wyjit_status wyjit_spec_validate(const wyjit_spec* spec) {
  return guarded("wyjit_spec_validate", [&] {
    require(spec, "spec");
    wyjit::validate_spec(wyjit::capi::to_cpp(*spec));
    return WYJIT_OK;
  });
}

}  // extern "C"
