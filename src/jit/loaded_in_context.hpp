// SPDX-License-Identifier: Apache-2.0
// Which kernels the calling thread has already loaded into which contexts.
#pragma once

#include <cuda.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace wyjit::detail {

/// (loaded library, context) pairs the calling thread has already loaded into that context
/// (and set the shared-memory attribute for): a direct-mapped table, so a memory hit makes no
/// driver call for it. A pair pushed out by a collision is simply loaded again (a cheap,
/// idempotent driver call). Libraries are named by a load id that is never reused, so an
/// unloaded library's handle, recycled by the driver, is never taken for a loaded one.
// NOTE: a context destroyed and another created at the same address would be taken as loaded;
// its first launch then loads the module lazily, which is still correct.
class LoadedInContext {
 public:
  static std::uint64_t next_load_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  static bool seen(std::uint64_t load_id, CUcontext context) noexcept {
    const Entry& e = table()[slot(load_id, context)];
    return e.load_id == load_id && e.context == context;
  }
  static void remember(std::uint64_t load_id, CUcontext context) noexcept {
    table()[slot(load_id, context)] = Entry{load_id, context};
  }

 private:
  struct Entry {
    std::uint64_t load_id = 0;  // 0: empty
    CUcontext context = nullptr;
  };
  static constexpr std::size_t kSlots = 128;
  static std::array<Entry, kSlots>& table() noexcept {
    thread_local std::array<Entry, kSlots> entries{};
    return entries;
  }
  static std::size_t slot(std::uint64_t load_id, CUcontext context) noexcept {
    const auto c = reinterpret_cast<std::uintptr_t>(context);
    return static_cast<std::size_t>((load_id ^ (c >> 4) ^ (c >> 12)) % kSlots);
  }
};

}  // namespace wyjit::detail
