// SPDX-License-Identifier: Apache-2.0
// The Jit manager: memory cache (single flight per key) -> read-only disk roots -> writable
// disk root -> NVRTC (under a per-key process lock). Loading into the driver: kernel_load.cpp.
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
#include "jit/jit_impl.hpp"
#include "jit/target_select.hpp"
#include "spec/family.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

using detail::CacheEntry;
using detail::Clock;
using detail::CompiledNode;
using detail::CompiledPtr;
using detail::LayeredCache;
using detail::ns_since;
using detail::to_ms;
using detail::VariantTarget;

bool Jit::Impl::take_disk_hit(const Target& target, const detail::CacheKey& key, bool writable_only,
                              CompiledKernel& result, std::size_t* corrupt) {
  const Clock::time_point start = Clock::now();
  LayeredCache::Lookup lookup =
      disk->lookup(target, key, detail::family_of(result.spec).roles(), writable_only);
  const std::uint64_t ns = ns_since(start);
  disk_read_ns.add(ns);
  corrupt_entries.add(lookup.corrupt);
  if (corrupt != nullptr) *corrupt = lookup.corrupt;
  if (!lookup.hit) return false;
  (lookup.hit->read_only ? ro_disk_hits : disk_hits).add();
  detail::logger().debug("{} for {}: {} hit '{}' in {:.3f} ms", format_spec(result.spec),
                         target.name(), lookup.hit->read_only ? "read-only disk" : "disk",
                         lookup.hit->path.string(), to_ms(ns));
  result.roles = std::move(lookup.hit->entry.roles);
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
  std::size_t corrupt = 0;
  if (disk && take_disk_hit(target, key, /*writable_only=*/false, *result, &corrupt)) return result;
  if (options.no_jit) {
    misses.add();
    throw_no_jit(spec, target, key);
  }

  // Step 2: one compile per key across processes: take the key's lock, then look again.
  // NOTE: also when the lock was free: another process may have published the entry and
  // released its lock between step 1 and now. Not when step 1 found the entry corrupt and
  // nobody held the lock since: it is the same file, to be overwritten.
  LayeredCache::KeyLock lock;
  if (disk) {
    lock = disk->lock_key(key);
    if (lock.waited) {
      lock_waits.add();
      lock_wait_ns.add(static_cast<std::uint64_t>(lock.wait_ms * 1e6));
      if (lock.timed_out) lock_timeouts.add();
    }
    if ((lock.waited || corrupt == 0) &&
        take_disk_hit(target, key, /*writable_only=*/true, *result, nullptr)) {
      return result;
    }
  }
  misses.add();

  // Step 3: compile.
  const std::string variant = format_spec(spec);
  const Clock::time_point start = Clock::now();
  detail::NvrtcResult nvrtc = detail::nvrtc_compile(source.text, source.program_name,
                                                    source.name_expressions, target, variant);
  const std::uint64_t ns = ns_since(start);
  compiles.add();
  compile_ns.add(ns);
  detail::logger().info("compiled {} for {} in {:.1f} ms", variant, target.name(), to_ms(ns));
  if (!nvrtc.log.empty()) detail::logger().warn("NVRTC log for {}:\n{}", variant, nvrtc.log);
  const auto roles = detail::family_of(spec).roles();
  for (std::size_t i = 0; i < roles.size(); ++i) {
    result->roles.push_back({std::string(roles[i]), nvrtc.lowered_names.at(i)});
  }
  result->binary = std::move(nvrtc.binary);
  if (!disk) return result;

  // Step 4: publish, still under the lock, so that waiters find the entry.
  const CacheEntry entry{
      .key_text = key.text,
      .variant = variant,
      .target = target.name(),
      .roles = result->roles,
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
    const LayeredCache::Lookup again =
        disk->lookup(target, key, detail::family_of(spec).roles(), /*writable_only=*/true);
    if (again.hit) result->path = again.hit->path.string();
  }
  return result;
}

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->owner = this;
  impl_->options = std::move(options);
  if (impl_->options.disk_cache) {
    impl_->disk.emplace(impl_->options);
    impl_->cache_dir = impl_->disk->writable_root().string();
  }
}

Jit::~Jit() { impl_->unload_all(); }

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
