// SPDX-License-Identifier: Apache-2.0
// The manager through the C API: create/destroy, kernels, counters, precompile, and the table
// stager.
#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "capi/capi_internal.hpp"

using wyjit::capi::guarded;
using wyjit::capi::require;
using wyjit::capi::require_struct_size;

namespace {

// NOTE: wyjit_counters mirrors every JitCounters field; a new one must be added there too (and
// in python/wyjit/_lib.py and tests/consumers/rust/src/main.rs).
static_assert(sizeof(wyjit::JitCounters) == 15 * 8,
              "JitCounters changed: mirror it in wyjit_counters (include/wyjit/wyjit.h)");

wyjit_kernel* kernel_handle(wyjit_jit& jit, const wyjit::Kernel& kernel) {
  const std::pair key{kernel.spec(), reinterpret_cast<std::uintptr_t>(kernel.handle(0))};
  const std::lock_guard lock(jit.kernels_mutex);
  auto [it, inserted] = jit.kernels.try_emplace(key);
  if (inserted) {
    try {
      it->second = std::make_unique<wyjit_kernel>(wyjit_kernel{kernel});
    } catch (...) {
      jit.kernels.erase(it);
      throw;
    }
  }
  return it->second.get();
}

// One variant's outcome in wyjit_precompile.
struct Outcome {
  wyjit_status status = WYJIT_OK;
  std::string message;
};

Outcome compile_one(wyjit::Jit& jit, const wyjit::KernelSpec& spec, const wyjit::Target& target) {
  Outcome outcome;
  try {
    jit.compile(spec, target);
  } catch (const wyjit::Error& e) {
    outcome.status = wyjit::capi::status_of(e.code());
    outcome.message = e.what();
  } catch (const std::exception& e) {
    outcome.status = WYJIT_ERROR_INTERNAL;
    outcome.message = e.what();
  } catch (...) {
    outcome.status = WYJIT_ERROR_INTERNAL;
    outcome.message = "unknown exception";
  }
  return outcome;
}

}  // namespace

extern "C" {

void wyjit_jit_options_init(wyjit_jit_options* options) {
  if (options == nullptr) return;
  *options = wyjit_jit_options{};
  options->struct_size = sizeof(wyjit_jit_options);
  options->cache_dir = nullptr;
  options->read_only_dirs = nullptr;
  options->num_read_only_dirs = 0;
  options->no_jit = WYJIT_FROM_ENV;
  options->disk_cache = 1;
  options->log_level = WYJIT_LOG_FROM_ENV;
}

wyjit_status wyjit_jit_create(const wyjit_jit_options* options, wyjit_jit** out) {
  return guarded("wyjit_jit_create", [&] {
    require(out, "out");
    wyjit_jit_options c;
    wyjit_jit_options_init(&c);
    if (options != nullptr) {
      require_struct_size("wyjit_jit_options", options->struct_size, sizeof(wyjit_jit_options));
      c = *options;
    }
    if (c.disk_cache != 0 && c.disk_cache != 1) {
      throw wyjit::Error(
          wyjit::ErrorCode::invalid_argument,
          "options->disk_cache is " + std::to_string(c.disk_cache) + ", must be 0 or 1");
    }
    if (c.log_level < WYJIT_LOG_FROM_ENV || c.log_level > WYJIT_LOG_OFF) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "options->log_level is " + std::to_string(c.log_level) +
                             ", allowed: -1 (WYJIT_LOG_FROM_ENV), 0 (WYJIT_LOG_TRACE) .. 6 "
                             "(WYJIT_LOG_OFF)");
    }
    if (c.log_level != WYJIT_LOG_FROM_ENV) wyjit_set_log_level(c.log_level);
    if (c.no_jit != WYJIT_FROM_ENV && c.no_jit != 0 && c.no_jit != 1) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "options->no_jit is " + std::to_string(c.no_jit) +
                             ", must be 0, 1 or -1 (WYJIT_FROM_ENV)");
    }
    if (c.read_only_dirs == nullptr && c.num_read_only_dirs != 0) {
      throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                         "options->read_only_dirs is NULL but options->num_read_only_dirs is " +
                             std::to_string(c.num_read_only_dirs));
    }
    wyjit::JitOptions options_cpp = wyjit::JitOptions::from_env();
    if (c.cache_dir != nullptr && *c.cache_dir != '\0') options_cpp.cache_dir = c.cache_dir;
    if (c.read_only_dirs != nullptr) {
      options_cpp.read_only_dirs.clear();
      for (std::size_t i = 0; i < c.num_read_only_dirs; ++i) {
        if (c.read_only_dirs[i] == nullptr || *c.read_only_dirs[i] == '\0') {
          throw wyjit::Error(wyjit::ErrorCode::invalid_argument,
                             "options->read_only_dirs[" + std::to_string(i) + "] is NULL or empty");
        }
        options_cpp.read_only_dirs.emplace_back(c.read_only_dirs[i]);
      }
    }
    if (c.no_jit != WYJIT_FROM_ENV) options_cpp.no_jit = c.no_jit == 1;
    options_cpp.disk_cache = c.disk_cache == 1;
    *out = new wyjit_jit(std::move(options_cpp));
    return WYJIT_OK;
  });
}

void wyjit_jit_destroy(wyjit_jit* jit) { delete jit; }

const char* wyjit_jit_cache_dir(const wyjit_jit* jit) {
  return jit == nullptr ? "" : jit->jit.cache_dir().c_str();
}

void wyjit_counters_init(wyjit_counters* counters) {
  if (counters == nullptr) return;
  *counters = wyjit_counters{};
  counters->struct_size = sizeof(wyjit_counters);
}

wyjit_status wyjit_jit_get_counters(const wyjit_jit* jit, wyjit_counters* out) {
  return guarded("wyjit_jit_get_counters", [&] {
    require(jit, "jit");
    require(out, "out");
    require_struct_size("wyjit_counters", out->struct_size, sizeof(wyjit_counters));
    const wyjit::JitCounters c = jit->jit.counters();
    out->memory_hits = c.memory_hits;
    out->ro_disk_hits = c.ro_disk_hits;
    out->disk_hits = c.disk_hits;
    out->misses = c.misses;
    out->compiles = c.compiles;
    out->corrupt_entries = c.corrupt_entries;
    out->evictions = c.evictions;
    out->write_failures = c.write_failures;
    out->lock_waits = c.lock_waits;
    out->lock_timeouts = c.lock_timeouts;
    out->loads = c.loads;
    out->compile_ms_total = c.compile_ms_total;
    out->disk_read_ms_total = c.disk_read_ms_total;
    out->lock_wait_ms_total = c.lock_wait_ms_total;
    out->load_ms_total = c.load_ms_total;
    return WYJIT_OK;
  });
}

wyjit_status wyjit_precompile(wyjit_jit* jit, const char* const* names, size_t count,
                              const char* target, int32_t jobs, wyjit_status* statuses) {
  return guarded("wyjit_precompile", [&] {
    require(jit, "jit");
    require(target, "target");
    if (count > 0) require(names, "names");
    // Every name is checked before anything is compiled or written.
    const wyjit::Target parsed = wyjit::Target::parse(target);
    std::vector<wyjit::KernelSpec> cpp_specs;
    cpp_specs.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      try {
        require(names[i], "name");
        cpp_specs.push_back(wyjit::parse_spec(names[i]));
      } catch (const wyjit::Error& e) {
        throw wyjit::Error(e.code(), "names[" + std::to_string(i) + "]: " + e.what());
      }
    }
    std::vector<Outcome> outcomes(count);
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t threads =
        std::min<std::size_t>(count, jobs > 0 ? static_cast<std::size_t>(jobs) : hardware);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t i = next++; i < count; i = next++) {
        outcomes[i] = compile_one(jit->jit, cpp_specs[i], parsed);
      }
    };
    {
      std::vector<std::jthread> workers;
      for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work);
      work();
    }  // joined here
    wyjit_status first = WYJIT_OK;
    std::string report;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (statuses != nullptr) statuses[i] = outcomes[i].status;
      if (outcomes[i].status == WYJIT_OK) continue;
      if (first == WYJIT_OK) first = outcomes[i].status;
      ++failed;
      report += "\n  " + wyjit::format_spec(cpp_specs[i]) + ": " + outcomes[i].message;
    }
    if (first != WYJIT_OK) {
      return wyjit::capi::fail(first, "wyjit_precompile",
                               std::to_string(failed) + " of " + std::to_string(count) +
                                   " variants failed for " + parsed.name() + ":" + report);
    }
    return WYJIT_OK;
  });
}

wyjit_status wyjit_jit_get_kernel(wyjit_jit* jit, const char* name, wyjit_kernel** out) {
  return guarded("wyjit_jit_get_kernel", [&] {
    require(jit, "jit");
    require(name, "name");
    require(out, "out");
    *out = kernel_handle(*jit, jit->jit.kernel(wyjit::parse_spec(name)));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_kernel_name(const wyjit_kernel* kernel, char* buffer, size_t size,
                               size_t* length) {
  return guarded("wyjit_kernel_name", [&] {
    require(kernel, "kernel");
    wyjit::capi::write_text(wyjit::format_spec(kernel->kernel.spec()), buffer, size, length);
    return WYJIT_OK;
  });
}

wyjit_status wyjit_table_stager_create(int32_t writes, int32_t max_batch,
                                       wyjit_table_stager** out) {
  return guarded("wyjit_table_stager_create", [&] {
    require(out, "out");
    *out = new wyjit_table_stager(writes, max_batch);
    return WYJIT_OK;
  });
}

void wyjit_table_stager_destroy(wyjit_table_stager* stager) { delete stager; }

wyjit_status wyjit_table_stager_stage(wyjit_table_stager* stager, void* const* states,
                                      void* const* const* inter, int32_t batch, void* stream) {
  return guarded("wyjit_table_stager_stage", [&] {
    require(stager, "stager");
    stager->stager.stage(states, inter, batch, static_cast<CUstream>(stream));
    return WYJIT_OK;
  });
}

void* const* wyjit_table_stager_tables(const wyjit_table_stager* stager) {
  return stager == nullptr ? nullptr : stager->stager.device_tables();
}

int64_t wyjit_table_stager_slab_stride(const wyjit_table_stager* stager) {
  return stager == nullptr ? 0 : stager->stager.slab_stride();
}

}  // extern "C"
