// SPDX-License-Identifier: Apache-2.0
// Shared by the launch-guard tests of every family (C++ and C API): fake device addresses and
// "what does the guard say about these arguments".
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "wyjit/error.hpp"

namespace wyjit::test {

/// A fake, well-aligned device address: the guards never dereference it.
template <typename T = void>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

/// Fake but valid state addressing for every mode at once (strided, table, slot): tiles of
/// `tile` elements, `batch` sequences, `k` tokens, `write_slots` write slots per sequence.
template <typename Args>
void fake_state_addressing(Args& a, std::int64_t tile, int batch, int k, int write_slots) {
  a.state = fake(0x1000000);
  a.state_seq_stride = tile;
  a.inter = fake(0x9000000);
  a.inter_tok_stride = tile;
  a.inter_seq_stride = (k - 1) * tile;
  a.tables = fake<void* const>(0x70000);
  a.slab_stride = batch;
  a.slot_stride = tile;
  a.num_slots = 10;
  a.read_slot = fake<const std::int32_t>(0x80000);
  a.write_slot = fake<const std::int32_t>(0x90000);
  a.write_slot_stride = write_slots;
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
