// SPDX-License-Identifier: Apache-2.0
// bench_cache on a GPU: the full disk hit through the driver, and Jit::kernel memory hits.
#include <fmt/format.h>

#include <barrier>
#include <thread>

#include "bench/bench_cache.hpp"
#include "bench/bench_common.hpp"
#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"
#include "stamp/stamp.hpp"

namespace wyjit::cache_bench {

namespace {

using detail::driver;

void print_stats(const std::string& label, const std::vector<double>& us) {
  const Stats s = stats(us);
  fmt::print("  {:<52} median {:8.1f} us  p90 {:8.1f} us  (n {})\n", label, s.median, s.p90,
             us.size());
}

// One variant: each repetition builds a fresh Jit on a cache directory that holds the entry,
// so its memory tiers are empty and Jit::kernel takes the whole disk-hit path.
void bench_disk_hit(const KernelSpec& spec, const Target& target, int reps) {
  TempDir dir;
  const JitOptions options{.cache_dir = dir.path.string()};
  std::string path;
  {
    Jit warm(options);
    warm.kernel(spec);  // compiles and writes the entry
    path = warm.compile(spec, target)->path;
  }
  const detail::CacheKey key = detail::make_cache_key(spec, detail::stamp(spec), target);
  std::vector<double> full_us, read_us, load_us;
  for (int i = 0; i < reps; ++i) {
    {
      Jit jit(options);
      const Clock::time_point t0 = Clock::now();
      const Kernel kernel = jit.kernel(spec);
      full_us.push_back(ns_between(t0, Clock::now()) / 1e3);
      const JitCounters c = jit.counters();
      if (kernel.handle(0) == nullptr || c.disk_hits != 1 || c.compiles != 0 || c.loads != 1) {
        throw std::runtime_error("bench_cache: expected one disk hit and one load, no compile");
      }
    }  // ~Jit unloads the library, outside the timing
    // The parts: read + verify (checksum, key), then the driver alone on the same bytes.
    const Clock::time_point t1 = Clock::now();
    const detail::EntryRead read = detail::read_entry_file(path, key.text);
    read_us.push_back(ns_between(t1, Clock::now()) / 1e3);
    if (read.status != detail::EntryRead::Status::ok) {
      throw std::runtime_error("bench_cache: entry did not verify");
    }
    CUlibrary library = nullptr;
    CUkernel handle = nullptr;
    CUfunction function = nullptr;
    const Clock::time_point t2 = Clock::now();
    WYJIT_CU_CHECK(cuLibraryLoadData(&library, read.entry.payload.data(), nullptr, nullptr, 0,
                                     nullptr, nullptr, 0));
    WYJIT_CU_CHECK(
        cuLibraryGetKernel(&handle, library, read.entry.roles.front().lowered_name.c_str()));
    WYJIT_CU_CHECK(cuKernelGetFunction(&function, handle));
    load_us.push_back(ns_between(t2, Clock::now()) / 1e3);
    driver().cuLibraryUnload(library);
  }
  fmt::print("{} ({} bytes on disk):\n", format_spec(spec), std::filesystem::file_size(path));
  print_stats("disk hit, fresh Jit::kernel (read, verify, load)", full_us);
  print_stats("  of which read + verify (read_entry_file)", read_us);
  print_stats("  of which cuLibraryLoadData + GetKernel + GetFunction", load_us);
}

// Jit::kernel on a variant already loaded: validate_spec, the driver's context and device
// queries, the memory tier, cuKernelGetFunction. Every thread has the context current.
void bench_kernel_memory_hits(int threads) {
  CUcontext context = nullptr;
  WYJIT_CU_CHECK(cuCtxGetCurrent(&context));
  Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
  const KernelSpec spec = GdnVerifySpec{.k = 4, .io = DType::bf16};
  jit.kernel(spec);
  constexpr int kBatch = 2000;
  constexpr int kBatches = 100;
  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(threads));
  std::barrier start(threads);
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        WYJIT_CU_CHECK(cuCtxSetCurrent(context));
        std::vector<double>& out = per_thread[static_cast<std::size_t>(t)];
        start.arrive_and_wait();
        for (int b = 0; b < kBatches; ++b) {
          const Clock::time_point t0 = Clock::now();
          for (int i = 0; i < kBatch; ++i) {
            if (jit.kernel(spec).handle(0) == nullptr) std::abort();
          }
          out.push_back(ns_between(t0, Clock::now()) / kBatch);
        }
      });
    }
  }
  std::vector<double> all;
  for (const auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  const Stats s = stats(all);
  fmt::print("  Jit::kernel memory hit, {} thread(s): median {:8.1f} ns  p90 {:8.1f} ns\n", threads,
             s.median, s.p90);
}

}  // namespace

void bench_gpu(int reps) {
  if (!detail::driver_has_device()) {
    std::string why = detail::driver_unavailable_reason();
    if (why.empty()) why = "the driver reports no device";
    fmt::print("disk hit through the driver: skipped: no GPU ({})\n", why);
    return;
  }
  const bench::BenchDevice device = bench::open_device();
  fmt::print("GPU: {} (sm_{}{}), target {}, load average {:.1f}\n", device.name, device.major,
             device.minor, device.target.name(), load_average());
  for (const int k : {4, 17}) {
    bench_disk_hit(GdnVerifySpec{.k = k, .io = DType::bf16}, device.target, reps);
  }
  bench_kernel_memory_hits(1);
  bench_kernel_memory_hits(8);
}

}  // namespace wyjit::cache_bench
