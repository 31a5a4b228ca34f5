// SPDX-License-Identifier: Apache-2.0
// The Jit manager's state, shared by its compile half (jit.cpp) and its load half
// (kernel_load.cpp).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "cache/cache_key.hpp"
#include "cache/layered_cache.hpp"
#include "cache/memory_table.hpp"
#include "spec/family.hpp"
#include "wyjit/jit.hpp"

namespace wyjit {

namespace detail {

using Clock = std::chrono::steady_clock;
using CompiledPtr = std::shared_ptr<const CompiledKernel>;

inline std::uint64_t ns_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

inline double to_ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

// NOTE: the target as plain fields, not its name: a memory hit builds no string.
struct VariantTarget {
  KernelSpec spec;
  int arch = 0;
  bool arch_specific = false;
  bool ptx = false;
  VariantTarget(const KernelSpec& s, const Target& t)
      : spec(s), arch(t.arch), arch_specific(t.arch_specific), ptx(t.ptx) {}
  friend auto operator<=>(const VariantTarget&, const VariantTarget&) = default;
};

// NOTE: equality (the defaulted <=>) decides; the hash reads every field of the family's table.
struct VariantTargetHash {
  std::size_t operator()(const VariantTarget& v) const noexcept {
    const Family& family = family_of(v.spec);
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto mix = [&h](std::uint64_t x) { h = (h ^ x) * 0x100000001b3ull; };
    mix(v.spec.index());
    for (std::size_t i = 0; i < family.fields().size(); ++i) {
      mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(family.get(v.spec, i))));
    }
    mix(static_cast<std::uint64_t>(v.arch));
    mix(v.arch_specific ? 1 : 0);
    mix(v.ptx ? 1 : 0);
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct CompiledNode {
  VariantTarget key;
  CompiledPtr value;
};

struct LoadedLibrary {
  CUlibrary library = nullptr;
  std::array<CUkernel, Kernel::kMaxRoles> kernels{};  ///< by role
  std::uint64_t load_id = 0;  ///< unique in the process, never reused (LoadedInContext)
};

struct LoadedNode {
  VariantTarget key;
  LoadedLibrary value;
};

struct Counter {
  std::atomic<std::uint64_t> value{0};
  void add(std::uint64_t n = 1) noexcept { value.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return value.load(std::memory_order_relaxed); }
};

// A counter bumped on every memory hit: one cache line per shard, a shard per thread (round
// robin), so that threads hitting at once do not bounce one line between cores.
class ShardedCounter {
 public:
  void add() noexcept { shards_[shard()].value.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept {
    std::uint64_t sum = 0;
    for (const Shard& s : shards_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  static constexpr std::size_t kShards = 16;
  struct alignas(64) Shard {
    std::atomic<std::uint64_t> value{0};
  };
  static std::size_t shard() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t index = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return index;
  }
  std::array<Shard, kShards> shards_{};
};

}  // namespace detail

// NOTE: hidden: a nested class takes its visibility from Jit, which is exported.
struct __attribute__((visibility("hidden"))) Jit::Impl {
  Jit* owner = nullptr;
  JitOptions options;
  std::string cache_dir;
  std::optional<detail::LayeredCache> disk;

  // Memory tier. NOTE: hits read `compiled` without a lock; a miss takes compile_mutex, which
  // guards `compiled`'s inserts and `in_flight` (single flight per key) and is never held
  // while compiling. Only successful builds are published.
  detail::MemoryTable<detail::CompiledNode, detail::VariantTargetHash> compiled;
  std::mutex compile_mutex;
  std::map<detail::VariantTarget, std::shared_future<detail::CompiledPtr>> in_flight;

  // Libraries loaded into the driver: read without a lock, inserted under load_mutex.
  detail::MemoryTable<detail::LoadedNode, detail::VariantTargetHash> loaded;
  std::mutex load_mutex;

  detail::ShardedCounter memory_hits;
  detail::Counter ro_disk_hits, disk_hits, misses, compiles, corrupt_entries, evictions,
      write_failures, lock_waits, lock_timeouts, loads;
  detail::Counter compile_ns, disk_read_ns, lock_wait_ns, load_ns;

  detail::CompiledPtr build(const KernelSpec& spec, const Target& target);
  /// The library of `id` loaded into the driver (once per process), its shared-memory
  /// attributes set on every device of the target (kernel_load.cpp).
  const detail::LoadedLibrary& load(const detail::VariantTarget& id);
  /// Unloads every library (the destructor).
  void unload_all() noexcept;
  /// Looks `key` up on disk (every root, or only the writable one), counting what it finds;
  /// `*corrupt` (when not null) receives the unusable entries seen.
  bool take_disk_hit(const Target& target, const detail::CacheKey& key, bool writable_only,
                     CompiledKernel& result, std::size_t* corrupt);
  [[noreturn]] void throw_no_jit(const KernelSpec& spec, const Target& target,
                                 const detail::CacheKey& key) const;
};

}  // namespace wyjit
