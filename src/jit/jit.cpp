// SPDX-License-Identifier: Apache-2.0
// The Jit manager: memory cache (single flight per key) -> read-only disk roots -> writable
// disk root -> NVRTC (under a per-key process lock); driver loading.
#include "wyjit/jit.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>

#include "cache/cache_env.hpp"
#include "cache/cache_key.hpp"
#include "cache/layered_cache.hpp"
#include "cache/memory_table.hpp"
#include "common/log.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "driver/driver_api.hpp"
#include "jit/loaded_in_context.hpp"
#include "jit/target_select.hpp"
#include "launch/launch_geometry.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

using detail::CacheEntry;
using detail::LayeredCache;

namespace {

using Clock = std::chrono::steady_clock;
using CompiledPtr = std::shared_ptr<const CompiledKernel>;

std::uint64_t ns_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

double to_ms(std::uint64_t ns) { return static_cast<double>(ns) / 1e6; }

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

// NOTE: equality (the defaulted <=>) decides; a field left out here only costs longer probes.
struct VariantTargetHash {
  std::size_t operator()(const VariantTarget& v) const noexcept {
    const KernelSpec& s = v.spec;
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const std::uint64_t x :
         {std::uint64_t(s.family), std::uint64_t(s.k), std::uint64_t(s.io), std::uint64_t(s.state),
          std::uint64_t(s.addressing), std::uint64_t(s.layout), std::uint64_t(s.dk),
          std::uint64_t(s.dv), std::uint64_t(s.l2norm_qk), std::uint64_t(s.fused_gating),
          std::uint64_t(s.width), std::uint64_t(s.weight), std::uint64_t(s.bias),
          std::uint64_t(s.silu), std::uint64_t(s.rollback), std::uint64_t(v.arch),
          std::uint64_t(v.arch_specific), std::uint64_t(v.ptx)}) {
      h = (h ^ x) * 0x100000001b3ull;
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct CompiledNode {
  VariantTarget key;
  CompiledPtr value;
};

struct LoadedLibrary {
  CUlibrary library = nullptr;
  CUkernel kernel = nullptr;
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

}  // namespace

struct Jit::Impl {
  JitOptions options;
  std::string cache_dir;
  std::optional<LayeredCache> disk;

  // Memory tier. NOTE: hits read `compiled` without a lock; a miss takes compile_mutex, which
  // guards `compiled`'s inserts and `in_flight` (single flight per key) and is never held
  // while compiling. Only successful builds are published.
  detail::MemoryTable<CompiledNode, VariantTargetHash> compiled;
  std::mutex compile_mutex;
  std::map<VariantTarget, std::shared_future<CompiledPtr>> in_flight;

  // Libraries loaded into the driver: read without a lock, inserted under load_mutex.
  detail::MemoryTable<LoadedNode, VariantTargetHash> loaded;
  std::mutex load_mutex;

  ShardedCounter memory_hits;
  Counter ro_disk_hits, disk_hits, misses, compiles, corrupt_entries, evictions, write_failures,
      lock_waits, lock_timeouts, loads;
  Counter compile_ns, disk_read_ns, lock_wait_ns, load_ns;

  CompiledPtr build(const KernelSpec& spec, const Target& target);
  /// Looks `key` up on disk (every root, or only the writable one), counting what it finds.
  bool take_disk_hit(const Target& target, const detail::CacheKey& key, bool writable_only,
                     CompiledKernel& result);
  [[noreturn]] void throw_no_jit(const KernelSpec& spec, const Target& target,
                                 const detail::CacheKey& key) const;
};

bool Jit::Impl::take_disk_hit(const Target& target, const detail::CacheKey& key, bool writable_only,
                              CompiledKernel& result) {
  const Clock::time_point start = Clock::now();
  LayeredCache::Lookup lookup = disk->lookup(target, key, writable_only);
  const std::uint64_t ns = ns_since(start);
  disk_read_ns.add(ns);
  corrupt_entries.add(lookup.corrupt);
  if (!lookup.hit) return false;
  (lookup.hit->read_only ? ro_disk_hits : disk_hits).add();
  detail::logger().debug("{} for {}: {} hit '{}' in {:.3f} ms", format_spec(result.spec),
                         target.name(), lookup.hit->read_only ? "read-only disk" : "disk",
                         lookup.hit->path.string(), to_ms(ns));
  result.lowered_name = lookup.hit->entry.lowered_names.front();
  result.binary = std::move(lookup.hit->entry.payload);
  result.from_disk = true;
  result.path = lookup.hit->path.string();
  return true;
}

void Jit::Impl::throw_no_jit(const KernelSpec& spec, const Target& target,
                             const detail::CacheKey& key) const {
  const std::string variant = format_spec(spec);
  const std::string searched =
      disk ? "searched " + disk->describe_roots() : std::string("the disk cache is off");
  throw Error(ErrorCode::cache_miss_no_jit,
              "no cached binary for variant " + variant + ", target " + target.name() + " (entry " +
                  target.name() + "/" + key.file_name + "), and compiling is off " +
                  "(WYJIT_NO_JIT / JitOptions::no_jit); " + searched +
                  ". Build it with: wyjit compile " + variant + " --arch " + target.name() +
                  " --cache-dir DIR");
}

CompiledPtr Jit::Impl::build(const KernelSpec& spec, const Target& target) {
  const detail::StampedSource source = detail::stamp(spec);
  const detail::CacheKey key = detail::make_cache_key(spec, source, target);
  auto result = std::make_shared<CompiledKernel>();
  result->spec = spec;
  result->target = target;
  result->key_hash = key.hash;

  // Step 1: the disk tiers, read-only roots first.
  if (disk && take_disk_hit(target, key, /*writable_only=*/false, *result)) return result;
  if (options.no_jit) {
    misses.add();
    throw_no_jit(spec, target, key);
  }

  // Step 2: one compile per key across processes: wait for the key's lock, then look again.
  LayeredCache::KeyLock lock;
  if (disk) {
    lock = disk->lock_key(key);
    if (lock.waited) {
      lock_waits.add();
      lock_wait_ns.add(static_cast<std::uint64_t>(lock.wait_ms * 1e6));
      if (lock.timed_out) lock_timeouts.add();
      if (take_disk_hit(target, key, /*writable_only=*/true, *result)) return result;
    }
  }
  misses.add();

  // Step 3: compile.
  const std::string variant = format_spec(spec);
  const Clock::time_point start = Clock::now();
  detail::NvrtcResult nvrtc = detail::nvrtc_compile(source.text, source.program_name,
                                                    source.name_expression, target, variant);
  const std::uint64_t ns = ns_since(start);
  compiles.add();
  compile_ns.add(ns);
  detail::logger().info("compiled {} for {} in {:.1f} ms", variant, target.name(), to_ms(ns));
  if (!nvrtc.log.empty()) detail::logger().warn("NVRTC log for {}:\n{}", variant, nvrtc.log);
  result->lowered_name = nvrtc.lowered_name;
  result->binary = std::move(nvrtc.binary);
  if (!disk) return result;

  // Step 4: publish, still under the lock, so that waiters find the entry.
  const CacheEntry entry{
      .key_text = key.text,
      .variant = variant,
      .target = target.name(),
      .lowered_names = {result->lowered_name},
      .payload = result->binary,
  };
  const LayeredCache::Stored stored = disk->store(target, key, entry, source.text);
  evictions.add(stored.evicted);
  if (!stored.path.empty()) {
    result->path = stored.path.string();
  } else if (disk->writable()) {
    write_failures.add();
    // NOTE: the write (usually its rename) failed; another process may have published the
    // same key meanwhile. One more lookup finds it, so the caller gets a path on disk.
    const LayeredCache::Lookup again = disk->lookup(target, key, /*writable_only=*/true);
    if (again.hit) result->path = again.hit->path.string();
  }
  return result;
}

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.disk_cache) {
    impl_->disk.emplace(impl_->options);
    impl_->cache_dir = impl_->disk->writable_root().string();
  }
}

Jit::~Jit() {
  // NOTE: no driver calls here beyond unloading what we loaded; never throw from a destructor.
  for (const auto& node : impl_->loaded.nodes()) {
    if (node->value.library != nullptr) detail::driver().cuLibraryUnload(node->value.library);
  }
}

std::shared_ptr<const CompiledKernel> Jit::compile(const KernelSpec& spec, const Target& target) {
  const VariantTarget id(spec, target);
  // Fast path: no lock, no shared write but the returned pointer's reference count.
  if (const CompiledNode* node = impl_->compiled.find(id)) {
    impl_->memory_hits.add();
    return node->value;
  }
  // NOTE: validated only here: every spec in the table was validated before it went in, so a
  // memory hit skips validate_spec (about 9 ns; Jit::kernel does call it on every hit).
  validate_spec(spec);
  std::promise<CompiledPtr> promise;
  std::shared_future<CompiledPtr> future;
  {
    const std::lock_guard lock(impl_->compile_mutex);
    if (const CompiledNode* node = impl_->compiled.find(id)) {  // published meanwhile
      impl_->memory_hits.add();
      return node->value;
    }
    auto [it, inserted] = impl_->in_flight.try_emplace(id);
    if (!inserted) {
      impl_->memory_hits.add();  // another thread is building it: wait for that build
      future = it->second;
    } else {
      it->second = promise.get_future().share();
    }
  }
  if (future.valid()) return future.get();

  // This thread builds the variant.
  try {
    CompiledPtr built = impl_->build(spec, target);
    {
      const std::lock_guard lock(impl_->compile_mutex);
      impl_->compiled.publish(std::make_unique<CompiledNode>(CompiledNode{id, built}));
      impl_->in_flight.erase(id);
    }
    promise.set_value(built);
    return built;
  } catch (...) {
    // NOTE: forget the failure so that a later call retries (the error may be transient).
    {
      const std::lock_guard lock(impl_->compile_mutex);
      impl_->in_flight.erase(id);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

Kernel Jit::kernel(const KernelSpec& spec) {
  validate_spec(spec);
  CUcontext context = nullptr;
  WYJIT_CU_CHECK(cuCtxGetCurrent(&context));
  if (context == nullptr) {
    throw Error(ErrorCode::driver,
                "Jit::kernel(" + format_spec(spec) +
                    ") needs a current CUDA context on the calling thread (cuCtxSetCurrent, or "
                    "any CUDA runtime call, makes one current)");
  }
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuCtxGetDevice(&device));
  const Target target = detail::target_for_device(device);
  const VariantTarget id(spec, target);

  CUkernel kernel = nullptr;
  std::uint64_t load_id = 0;
  if (const LoadedNode* node = impl_->loaded.find(id)) {
    kernel = node->value.kernel;
    load_id = node->value.load_id;
  }
  if (kernel == nullptr) {
    const CompiledPtr compiled = compile(spec, target);
    const Clock::time_point start = Clock::now();
    LoadedLibrary fresh;
    // NOTE: cuLibrary* is context-independent: one load serves every context and device of
    // this architecture; the driver loads it into a context on first use.
    WYJIT_CU_CHECK(cuLibraryLoadData(&fresh.library, compiled->binary.data(), nullptr, nullptr, 0,
                                     nullptr, nullptr, 0));
    const CUresult got = detail::driver().cuLibraryGetKernel(&fresh.kernel, fresh.library,
                                                             compiled->lowered_name.c_str());
    if (got != CUDA_SUCCESS) {
      detail::driver().cuLibraryUnload(fresh.library);
      detail::throw_cu_error(__FILE__, __LINE__, "cuLibraryGetKernel", got);
    }
    const std::uint64_t ns = ns_since(start);
    impl_->loads.add();
    impl_->load_ns.add(ns);
    detail::logger().debug("loaded {} for {} in {:.3f} ms", format_spec(spec), target.name(),
                           to_ms(ns));
    const std::lock_guard lock(impl_->load_mutex);
    if (const LoadedNode* node = impl_->loaded.find(id)) {
      detail::driver().cuLibraryUnload(fresh.library);  // another thread won
      kernel = node->value.kernel;
      load_id = node->value.load_id;
    } else {
      fresh.load_id = detail::LoadedInContext::next_load_id();
      impl_->loaded.publish(std::make_unique<LoadedNode>(LoadedNode{id, fresh}));
      kernel = fresh.kernel;
      load_id = fresh.load_id;
    }
  }
  if (!detail::LoadedInContext::seen(load_id, context)) {
    const detail::LaunchGeometry geometry = detail::launch_geometry(spec);
    if (geometry.smem_bytes > 48 * 1024) {
      WYJIT_CU_CHECK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          geometry.smem_bytes, kernel, device));
    }
    // NOTE: load into the current context now, so that a later launch (perhaps during graph
    // capture) does no module loading.
    CUfunction function = nullptr;
    WYJIT_CU_CHECK(cuKernelGetFunction(&function, kernel));
    detail::LoadedInContext::remember(load_id, context);
  }
  return Kernel(spec, kernel);
}

const std::string& Jit::cache_dir() const noexcept { return impl_->cache_dir; }

std::vector<CacheRootInfo> Jit::cache_roots() const {
  if (!impl_->disk) return {};
  return impl_->disk->roots();
}

JitCounters Jit::counters() const {
  const Impl& i = *impl_;
  JitCounters c;
  c.memory_hits = i.memory_hits.get();
  c.ro_disk_hits = i.ro_disk_hits.get();
  c.disk_hits = i.disk_hits.get();
  c.misses = i.misses.get();
  c.compiles = i.compiles.get();
  c.corrupt_entries = i.corrupt_entries.get();
  c.evictions = i.evictions.get();
  c.write_failures = i.write_failures.get();
  c.lock_waits = i.lock_waits.get();
  c.lock_timeouts = i.lock_timeouts.get();
  c.loads = i.loads.get();
  c.compile_ms_total = to_ms(i.compile_ns.get());
  c.disk_read_ms_total = to_ms(i.disk_read_ns.get());
  c.lock_wait_ms_total = to_ms(i.lock_wait_ns.get());
  c.load_ms_total = to_ms(i.load_ns.get());
  return c;
}

JitOptions JitOptions::from_env() {
  JitOptions options;
  options.cache_dir = detail::default_cache_root().string();
  if (auto dirs = detail::env_value("WYJIT_CACHE_RO_DIRS")) {
    options.read_only_dirs = detail::split_path_list(*dirs);
  }
  const auto flag = [](const char* name, bool fallback) {
    const std::optional<std::string> text = detail::env_value(name);
    if (!text) return fallback;
    if (const std::optional<bool> value = detail::parse_flag(*text)) return *value;
    detail::logger().warn("ignoring {}='{}': expected 1 or 0 (also true/false, yes/no, on/off)",
                          name, *text);
    return fallback;
  };
  options.no_jit = flag("WYJIT_NO_JIT", options.no_jit);
  options.save_source = flag("WYJIT_SAVE_SOURCE", options.save_source);
  if (auto text = detail::env_value("WYJIT_CACHE_MAX_BYTES")) {
    if (const std::optional<std::uint64_t> bytes = detail::parse_byte_size(*text)) {
      options.max_bytes = *bytes;
    } else {
      detail::logger().warn(
          "ignoring WYJIT_CACHE_MAX_BYTES='{}': expected a byte count such as 1073741824, 512M "
          "or 1G (0: no bound); using {}",
          *text, options.max_bytes);
    }
  }
  if (auto dir = detail::env_value("WYJIT_LOCK_DIR")) options.lock_dir = *dir;
  return options;
}

std::string stamped_source(const KernelSpec& spec) { return detail::stamp(spec).text; }

}  // namespace wyjit
