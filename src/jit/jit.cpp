// SPDX-License-Identifier: Apache-2.0
// The Jit manager: memory cache (single flight per key) -> disk cache -> NVRTC; driver loading.
#include "wyjit/jit.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "cache/cache_key.hpp"
#include "cache/disk_cache.hpp"
#include "common/log.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "driver/driver_api.hpp"
#include "jit/target_select.hpp"
#include "launch/launch_geometry.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

using detail::CacheEntry;
using detail::DiskCache;

namespace {

using Clock = std::chrono::steady_clock;
using CompiledPtr = std::shared_ptr<const CompiledKernel>;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct VariantTarget {
  KernelSpec spec;
  std::string target;
  friend auto operator<=>(const VariantTarget&, const VariantTarget&) = default;
};

struct LoadedLibrary {
  CUlibrary library = nullptr;
  CUkernel kernel = nullptr;
};

}  // namespace

struct Jit::Impl {
  JitOptions options;
  std::string cache_dir;
  std::optional<DiskCache> disk;

  std::mutex compiled_mutex;  // guards `compiled` only; never held while compiling
  std::map<VariantTarget, std::shared_future<CompiledPtr>> compiled;

  std::shared_mutex loaded_mutex;  // guards `loaded`
  std::map<VariantTarget, LoadedLibrary> loaded;

  std::atomic<std::uint64_t> memory_hits{0};
  std::atomic<std::uint64_t> disk_hits{0};
  std::atomic<std::uint64_t> compiles{0};
  std::atomic<std::uint64_t> corrupt_entries{0};
  mutable std::mutex timing_mutex;
  double compile_ms_total = 0.0;
  double disk_read_ms_total = 0.0;

  CompiledPtr build(const KernelSpec& spec, const Target& target);
};

CompiledPtr Jit::Impl::build(const KernelSpec& spec, const Target& target) {
  const detail::StampedSource source = detail::stamp(spec);
  const detail::CacheKey key = detail::make_cache_key(spec, source, target);
  auto result = std::make_shared<CompiledKernel>();
  result->spec = spec;
  result->target = target;
  result->key_hash = key.hash;
  if (disk) {
    result->path = disk->entry_path(target, key).string();
    const Clock::time_point start = Clock::now();
    CacheEntry entry;
    const DiskCache::Lookup lookup = disk->load(target, key, entry);
    {
      const std::lock_guard lock(timing_mutex);
      disk_read_ms_total += ms_since(start);
    }
    if (lookup == DiskCache::Lookup::hit && entry.lowered_names.size() == 1) {
      ++disk_hits;
      result->lowered_name = entry.lowered_names.front();
      result->binary = std::move(entry.payload);
      result->from_disk = true;
      return result;
    }
    if (lookup == DiskCache::Lookup::corrupt) ++corrupt_entries;
  }
  const Clock::time_point start = Clock::now();
  detail::NvrtcResult nvrtc = detail::nvrtc_compile(
      source.text, source.program_name, source.name_expression, target, format_spec(spec));
  const double ms = ms_since(start);
  ++compiles;
  {
    const std::lock_guard lock(timing_mutex);
    compile_ms_total += ms;
  }
  detail::logger().info("compiled {} for {} in {:.1f} ms", format_spec(spec), target.name(), ms);
  if (!nvrtc.log.empty()) {
    detail::logger().warn("NVRTC log for {}:\n{}", format_spec(spec), nvrtc.log);
  }
  result->lowered_name = nvrtc.lowered_name;
  result->binary = std::move(nvrtc.binary);
  if (disk) {
    const CacheEntry entry{
        .key_text = key.text,
        .variant = format_spec(spec),
        .target = target.name(),
        .lowered_names = {result->lowered_name},
        .payload = result->binary,
    };
    if (!disk->store(target, key, entry)) result->path.clear();
  }
  return result;
}

Jit::Jit(JitOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.disk_cache) {
    const std::filesystem::path root = impl_->options.cache_dir.empty()
                                           ? detail::default_cache_root()
                                           : std::filesystem::path(impl_->options.cache_dir);
    impl_->cache_dir = root.string();
    impl_->disk.emplace(root);
  }
}

Jit::~Jit() {
  // NOTE: no driver calls here beyond unloading what we loaded; never throw from a destructor.
  for (auto& [id, lib] : impl_->loaded) {
    if (lib.library != nullptr) detail::driver().cuLibraryUnload(lib.library);
  }
}

std::shared_ptr<const CompiledKernel> Jit::compile(const KernelSpec& spec, const Target& target) {
  validate_spec(spec);
  const VariantTarget id{spec, target.name()};
  std::promise<CompiledPtr> promise;
  std::shared_future<CompiledPtr> future;
  bool builder = false;
  {
    const std::lock_guard lock(impl_->compiled_mutex);
    auto [it, inserted] = impl_->compiled.try_emplace(id);
    if (inserted) {
      it->second = promise.get_future().share();
      builder = true;
    } else {
      ++impl_->memory_hits;
    }
    future = it->second;
  }
  if (builder) {
    try {
      promise.set_value(impl_->build(spec, target));
    } catch (...) {
      promise.set_exception(std::current_exception());
      // NOTE: forget the failure so that a later call retries (the error may be transient).
      const std::lock_guard lock(impl_->compiled_mutex);
      impl_->compiled.erase(id);
    }
  }
  return future.get();
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
  int major = 0;
  int minor = 0;
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  const Target target = detail::select_target(major * 10 + minor);
  const VariantTarget id{spec, target.name()};

  CUkernel kernel = nullptr;
  {
    const std::shared_lock lock(impl_->loaded_mutex);
    if (auto it = impl_->loaded.find(id); it != impl_->loaded.end()) kernel = it->second.kernel;
  }
  if (kernel == nullptr) {
    const CompiledPtr compiled = compile(spec, target);
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
    const std::unique_lock lock(impl_->loaded_mutex);
    auto [it, inserted] = impl_->loaded.try_emplace(id, fresh);
    if (!inserted) detail::driver().cuLibraryUnload(fresh.library);  // another thread won
    kernel = it->second.kernel;
  }
  const detail::LaunchGeometry geometry = detail::launch_geometry(spec);
  if (geometry.smem_bytes > 48 * 1024) {
    WYJIT_CU_CHECK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        geometry.smem_bytes, kernel, device));
  }
  // NOTE: load into the current context now, so that a later launch (perhaps during graph
  // capture) does no module loading.
  CUfunction function = nullptr;
  WYJIT_CU_CHECK(cuKernelGetFunction(&function, kernel));
  return Kernel(spec, kernel);
}

const std::string& Jit::cache_dir() const noexcept { return impl_->cache_dir; }

JitCounters Jit::counters() const {
  JitCounters c;
  c.memory_hits = impl_->memory_hits.load();
  c.disk_hits = impl_->disk_hits.load();
  c.compiles = impl_->compiles.load();
  c.corrupt_entries = impl_->corrupt_entries.load();
  const std::lock_guard lock(impl_->timing_mutex);
  c.compile_ms_total = impl_->compile_ms_total;
  c.disk_read_ms_total = impl_->disk_read_ms_total;
  return c;
}

JitOptions JitOptions::from_env() {
  JitOptions options;
  options.cache_dir = detail::default_cache_root().string();
  return options;
}

std::string stamped_source(const KernelSpec& spec) { return detail::stamp(spec).text; }

}  // namespace wyjit
