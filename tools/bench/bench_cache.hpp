// SPDX-License-Identifier: Apache-2.0
// bench_cache: what its steps share (statistics, timers, a temporary cache directory).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "wyjit/jit.hpp"

namespace wyjit::cache_bench {

using Clock = std::chrono::steady_clock;

inline const Target kSm90{.arch = 90};

double ns_between(Clock::time_point a, Clock::time_point b);

/// Median and 90th percentile (nearest rank) of `v`; zeros when `v` is empty.
struct Stats {
  double median = 0.0;
  double p90 = 0.0;
};
Stats stats(std::vector<double> v);

/// CPU time of this process, all threads (NVRTC may use helper threads), in ms.
double process_cpu_ms();

/// The 1-minute load average, or -1 when unknown.
double load_average();

/// A temporary directory, removed with everything in it on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

/// Cold compiles: per round, one variant of the standard matrix for each (family, K in `ks`),
/// each in a fresh memory-only Jit. Prints median and p90 (wall and process CPU) per (family,
/// K), per family and over all compiles, and the process's first compile apart.
void bench_cold_compiles(const std::vector<int>& ks, int rounds);

/// Interleaved A/B of NVRTC option lists on the variants bench_cold_compiles picks (ABBA per
/// variant): A is what wyjit ships (nvrtc_options), B is A without `drop` and with `extra`.
/// Prints per (family, K) the median CPU ms of each, the change, whether A's and B's binaries
/// are byte-identical and whether each is the same when compiled again.
void bench_nvrtc_ab(const std::vector<int>& ks, int rounds, const std::vector<std::string>& extra,
                    const std::vector<std::string>& drop);

/// On a GPU: the full disk hit through the driver (fresh Jit, empty memory tier, entry on
/// disk: Jit::kernel = stamp, key, read, verify, cuLibraryLoadData, cuLibraryGetKernel,
/// cuKernelGetFunction) and its parts, then Jit::kernel memory hits with 1 and 8 threads.
/// Without one it prints "... skipped: no GPU (<why>)" and returns.
void bench_gpu(int reps);

}  // namespace wyjit::cache_bench
