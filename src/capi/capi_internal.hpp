// SPDX-License-Identifier: Apache-2.0
// The C API's handle types and its exception firewall: every entry point runs its body through
// guarded(), which turns any exception into a status and the thread's last-error message.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/table_stager.hpp"
#include "wyjit/wyjit.h"

struct wyjit_kernel {
  wyjit::Kernel kernel;
};

struct wyjit_jit {
  explicit wyjit_jit(wyjit::JitOptions options) : jit(std::move(options)) {}
  wyjit::Jit jit;
  // NOTE: handles must outlive every call that returned them, so they live here, one per
  // (variant, first CUkernel): the same variant on devices of one architecture shares a handle.
  std::mutex kernels_mutex;
  std::map<std::pair<wyjit::KernelSpec, std::uintptr_t>, std::unique_ptr<wyjit_kernel>> kernels;
};

struct wyjit_table_stager {
  wyjit_table_stager(int writes, int max_batch) : stager(writes, max_batch) {}
  wyjit::TableStager stager;
};

namespace wyjit::capi {

/// Stores `message` as the calling thread's last error and returns `status`. Never throws.
wyjit_status fail(wyjit_status status, std::string_view function,
                  std::string_view message) noexcept;

wyjit_status status_of(ErrorCode code) noexcept;

/// Runs `body` (which returns a wyjit_status); every exception becomes a status and a message.
template <typename Body>
wyjit_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    return fail(status_of(e.code()), function, e.what());
  } catch (const std::bad_alloc&) {
    return fail(WYJIT_ERROR_INTERNAL, function, "out of host memory (std::bad_alloc)");
  } catch (const std::exception& e) {
    return fail(WYJIT_ERROR_INTERNAL, function, e.what());
  } catch (...) {
    return fail(WYJIT_ERROR_INTERNAL, function, "unknown exception");
  }
}

/// Throws Error(invalid_argument) "`name` is NULL" when `p` is null.
void require(const void* p, const char* name);

/// Throws Error(invalid_argument) unless `got` is `expected` (a struct from another version).
void require_struct_size(const char* type, std::size_t got, std::size_t expected);

/// Writes `text` as the C API returns text (wyjit.h, wyjit_spec_build): NUL-terminated into
/// `buffer`, its length into `*length`; throws Error(invalid_argument) when it does not fit.
void write_text(const std::string& text, char* buffer, std::size_t size, std::size_t* length);

}  // namespace wyjit::capi
