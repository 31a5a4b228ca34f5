// SPDX-License-Identifier: Apache-2.0
// wyjit_array_swap_run: new arrays into a kept launch argument struct, each read through a
// framework's DLPack exchange API and checked against the array it replaces (wyjit/array_swap.h).
#include <cstdint>
#include <cstring>
#include <string>

#include "capi/capi_internal.hpp"
#include "wyjit/array_swap.h"

namespace {

constexpr const char* kFunction = "wyjit_array_swap_run";

std::string listed(const std::int64_t* values, std::int32_t n) {
  std::string text = "[";
  for (std::int32_t i = 0; i < n; ++i) {
    text += (i ? ", " : "") + std::to_string(values[i]);
  }
  return text + "]";
}

std::string dtype(const wyjit_dltensor& t) {
  return "code " + std::to_string(t.dtype_code) + " bits " + std::to_string(t.dtype_bits) +
         " lanes " + std::to_string(t.dtype_lanes);
}

/// What of `got` differs from `want` ("" when nothing does).
/// NOTE: runs on every swapped array of every step, so it builds no string unless one differs.
std::string differs(const wyjit_dltensor& got, const wyjit_dltensor& want) {
  if (got.device_type != want.device_type || got.device_id != want.device_id) {
    return "device " + std::to_string(got.device_type) + ":" + std::to_string(got.device_id) +
           ", prepared with " + std::to_string(want.device_type) + ":" +
           std::to_string(want.device_id);
  }
  if (got.dtype_code != want.dtype_code || got.dtype_bits != want.dtype_bits ||
      got.dtype_lanes != want.dtype_lanes) {
    return "dtype " + dtype(got) + ", prepared with " + dtype(want);
  }
  bool same = got.ndim == want.ndim;
  for (std::int32_t i = 0; same && i < got.ndim; ++i) same = got.shape[i] == want.shape[i];
  if (!same) {
    return "shape " + listed(got.shape, got.ndim) + ", prepared with " +
           listed(want.shape, want.ndim);
  }
  // NOTE: DLPack allows NULL strides for a compact row-major array: compare what they mean.
  std::int64_t compact = 1;
  for (std::int32_t i = got.ndim - 1; same && i >= 0; --i) {
    same = (got.strides ? got.strides[i] : compact) == want.strides[i];
    compact *= got.shape[i];
  }
  if (!same) {
    return std::string("strides ") + (got.strides ? listed(got.strides, got.ndim) : "compact") +
           ", prepared with " + listed(want.strides, want.ndim);
  }
  return {};
}

}  // namespace

extern "C" wyjit_status wyjit_array_swap_run(wyjit_array_swap* swap, size_t count) {
  using wyjit::Error;
  using wyjit::ErrorCode;
  return wyjit::capi::guarded(kFunction, [&] {
    wyjit::capi::require(swap, "swap");
    wyjit::capi::require_struct_size("wyjit_array_swap", swap->struct_size,
                                     sizeof(wyjit_array_swap));
    if (count > swap->capacity) {
      throw Error(ErrorCode::invalid_argument,
                  std::to_string(count) + " arrays, capacity " + std::to_string(swap->capacity));
    }
    if (count == 0) return WYJIT_OK;
    wyjit::capi::require(swap->args, "swap->args");
    wyjit::capi::require(swap->slots, "swap->slots");
    wyjit::capi::require(swap->which, "swap->which");
    wyjit::capi::require(swap->objects, "swap->objects");
    wyjit::capi::require(swap->previous, "swap->previous");
    if (swap->from_object == nullptr) {
      throw Error(ErrorCode::invalid_argument, "swap->from_object is null");
    }
    // ---- every array read and checked; the new pointers wait in previous[] ----
    for (size_t i = 0; i < count; ++i) {
      const std::int32_t s = swap->which[i];
      const auto refuse = [&](const std::string& why) {
        swap->refused = i;
        throw Error(ErrorCode::invalid_argument,
                    "objects[" + std::to_string(i) + "] (slot " + std::to_string(s) + "): " + why);
      };
      if (s < 0 || static_cast<size_t>(s) >= swap->num_slots) {
        refuse("no such slot, there are " + std::to_string(swap->num_slots));
      }
      const wyjit_array_slot& slot = swap->slots[s];
      if (slot.word >= swap->args_size / 8) {
        refuse("word " + std::to_string(slot.word) + " is past the " +
               std::to_string(swap->args_size) + "-byte argument struct");
      }
      wyjit_dltensor got{};
      if (swap->from_object(swap->objects[i], &got) != 0) {
        refuse("the framework could not describe it");
      }
      if (std::string why = differs(got, slot.expected); !why.empty()) refuse(why);
      swap->previous[i] = reinterpret_cast<std::uintptr_t>(got.data) + got.byte_offset;
    }
    // ---- all of them fit: write them, keeping what each replaced ----
    auto* words = static_cast<unsigned char*>(swap->args);
    for (size_t i = 0; i < count; ++i) {
      unsigned char* word = words + 8 * swap->slots[swap->which[i]].word;
      std::uint64_t old = 0;
      std::memcpy(&old, word, sizeof old);
      std::memcpy(word, &swap->previous[i], sizeof old);
      swap->previous[i] = old;
    }
    return WYJIT_OK;
  });
}
