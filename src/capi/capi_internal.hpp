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
#include "wyjit/gdn_verify.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/wyjit.h"

struct wyjit_kernel {
  wyjit::Kernel kernel;
};

struct wyjit_jit {
  explicit wyjit_jit(wyjit::JitOptions options) : jit(std::move(options)) {}
  wyjit::Jit jit;
  // NOTE: handles must outlive every call that returned them, so they live here, one per
  // (variant, CUkernel): the same variant on devices of one architecture shares a handle.
  std::mutex kernels_mutex;
  std::map<std::pair<wyjit::KernelSpec, std::uintptr_t>, std::unique_ptr<wyjit_kernel>> kernels;
};

struct wyjit_table_stager {
  wyjit_table_stager(int k, int max_batch) : stager(k, max_batch) {}
  wyjit::GdnTableStager stager;
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

/// Copies the state addressing fields (strided, table and slot), which the C and C++ launch
/// argument structs of every family name alike.
template <class From, class To>
void copy_state_addressing(const From& c, To& a) {
  a.state = c.state;
  a.state_seq_stride = c.state_seq_stride;
  a.inter = c.inter;
  a.inter_seq_stride = c.inter_seq_stride;
  a.inter_tok_stride = c.inter_tok_stride;
  a.tables = c.tables;
  a.slab_stride = c.slab_stride;
  a.slot_stride = c.slot_stride;
  a.num_slots = c.num_slots;
  a.read_slot = c.read_slot;
  a.write_slot = c.write_slot;
  a.write_slot_stride = c.write_slot_stride;
}

/// Throws Error(invalid_argument) "`name` is NULL" when `p` is null.
void require(const void* p, const char* name);

/// Throws Error(invalid_argument) unless `got` is `expected` (a struct from another version).
void require_struct_size(const char* type, std::size_t got, std::size_t expected);

/// Throws Error(invalid_spec) naming the field and its value when an enumeration is out of range.
KernelSpec to_cpp(const wyjit_spec& spec);
wyjit_spec to_c(const KernelSpec& spec) noexcept;

}  // namespace wyjit::capi
