// SPDX-License-Identifier: Apache-2.0
// Shared by the launch-guard tests of every family (C++ and C API): fake device addresses and
// "what does the guard say about these arguments".
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "wyjit/error.hpp"
#include "wyjit/state_refs.h"

namespace wyjit::test {

/// A fake, well-aligned device address: the guards never dereference it.
template <typename T = void>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

/// Fake but valid state references for every mode at once (strided, table, slot): tiles of
/// `tile` elements, `batch` sequences, `k` tokens, `write_slots` write slots per sequence.
inline void fake_state_addressing(StateRefs& r, std::int64_t tile, int batch, int k,
                                  int write_slots) {
  r.state = fake(0x1000000);
  r.state_seq_stride = tile;
  r.inter = fake(0x9000000);
  r.inter_tok_stride = tile;
  r.inter_seq_stride = (k - 1) * tile;
  r.tables = fake<void* const>(0x70000);
  r.slab_stride = batch;
  r.slot_stride = tile;
  r.num_slots = 10;
  r.read_slot = fake<const std::int32_t>(0x80000);
  r.write_slot = fake<const std::int32_t>(0x90000);
  r.write_slot_stride = write_slots;
}

/// The guard's message for `valid` changed by `edit`, or "accepted"; a refusal must be an
/// invalid_argument error.
template <typename Args, typename Check>
std::string guard_message_of(Args a, const std::function<void(Args&)>& edit, Check check) {
  edit(a);
  try {
    check(a);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_argument);
    return e.what();
  }
  return "accepted";
}

}  // namespace wyjit::test
