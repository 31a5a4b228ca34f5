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
