// SPDX-License-Identifier: Apache-2.0
// Status codes, the thread-local last error, version, logging, and variants by name with the
// families' field tables.
#include <spdlog/spdlog.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "capi/capi_internal.hpp"
#include "common/log.hpp"
#include "spec/family.hpp"

namespace wyjit::capi {

namespace {

thread_local std::string t_last_error;

#define WYJIT_STR2(x) #x
#define WYJIT_STR(x) WYJIT_STR2(x)
constexpr const char kVersionString[] = WYJIT_STR(WYJIT_VERSION_MAJOR) "." WYJIT_STR(
    WYJIT_VERSION_MINOR) "." WYJIT_STR(WYJIT_VERSION_PATCH);
#undef WYJIT_STR
#undef WYJIT_STR2

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

void write_text(const std::string& text, char* buffer, std::size_t size, std::size_t* length) {
  if (length != nullptr) *length = text.size();
  if (buffer == nullptr && size == 0) return;
  require(buffer, "buffer");
  if (size <= text.size()) {
    throw Error(ErrorCode::invalid_argument, "size is " + std::to_string(size) + " bytes, '" +
                                                 text + "' needs " +
                                                 std::to_string(text.size() + 1));
  }
  std::memcpy(buffer, text.c_str(), text.size() + 1);
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

size_t wyjit_family_count(void) { return wyjit::detail::families().size(); }

const char* wyjit_family_name(size_t index) {
  const auto all = wyjit::detail::families();
  // NOTE: the families' names are string literals (their descriptors), so NUL-terminated.
  return index < all.size() ? all[index]->name().data() : nullptr;
}

wyjit_status wyjit_family_field_count(const char* family, size_t* count) {
  return guarded("wyjit_family_field_count", [&] {
    require(family, "family");
    require(count, "count");
    *count = wyjit::family_fields(family).size();
    return WYJIT_OK;
  });
}

wyjit_status wyjit_family_field(const char* family, size_t index, wyjit_field_info* out) {
  return guarded("wyjit_family_field", [&] {
    require(family, "family");
    require(out, "out");
    wyjit::capi::require_struct_size("wyjit_field_info", out->struct_size,
                                     sizeof(wyjit_field_info));
    const auto fields = wyjit::family_fields(family);
    if (index >= fields.size()) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "index is " + std::to_string(index) + ", " + family + " has " +
                             std::to_string(fields.size()) + " fields");
    }
    const wyjit::FieldInfo& f = fields[index];
    static_assert(sizeof(int) == sizeof(int32_t), "allowed values are int32 in C");
    *out = wyjit_field_info{
        .struct_size = sizeof(wyjit_field_info),
        .name = f.name,
        .label = f.label,
        .kind = static_cast<int32_t>(f.kind),
        .spelling = f.spelling,
        .choices = f.choices.data(),
        .num_choices = f.choices.size(),
        .min = f.min,
        .max = f.max,
        .allowed = reinterpret_cast<const int32_t*>(f.allowed.data()),
        .num_allowed = f.allowed.size(),
        .default_value = f.default_value,
        .standard = f.standard,
        .merged_spelling = f.merged_spelling,
        .same_as = f.same_as,
        .doc = f.doc,
    };
    return WYJIT_OK;
  });
}

wyjit_status wyjit_spec_build(const char* family, const char* const* fields,
                              const char* const* values, size_t count, char* buffer, size_t size,
                              size_t* length) {
  return guarded("wyjit_spec_build", [&] {
    require(family, "family");
    if (count > 0) {
      require(fields, "fields");
      require(values, "values");
    }
    std::vector<std::pair<std::string, std::string>> given;
    for (size_t i = 0; i < count; ++i) {
      require(fields[i], ("fields[" + std::to_string(i) + "]").c_str());
      require(values[i], ("values[" + std::to_string(i) + "]").c_str());
      given.emplace_back(fields[i], values[i]);
    }
    wyjit::capi::write_text(wyjit::format_spec(wyjit::make_spec(family, given)), buffer, size,
                            length);
    return WYJIT_OK;
  });
}

wyjit_status wyjit_spec_validate(const char* name) {
  return guarded("wyjit_spec_validate", [&] {
    require(name, "name");
    wyjit::parse_spec(name);
    return WYJIT_OK;
  });
}

wyjit_status wyjit_spec_field(const char* name, const char* field, char* buffer, size_t size,
                              size_t* length) {
  return guarded("wyjit_spec_field", [&] {
    require(name, "name");
    require(field, "field");
    wyjit::capi::write_text(wyjit::field_value(wyjit::parse_spec(name), field), buffer, size,
                            length);
    return WYJIT_OK;
  });
}

}  // extern "C"
