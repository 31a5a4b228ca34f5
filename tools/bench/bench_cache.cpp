// SPDX-License-Identifier: Apache-2.0
// CPU-side cache benchmark: memory hits under 8 threads, disk read + verify, cold NVRTC
// compiles, and `wyjit precompile --all --arch sm_90`. Needs no GPU. Prints to stdout.
//
//   build/bin/bench_cache [--skip-precompile] [--memory-only]
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/jit.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using wyjit::Jit;
using wyjit::JitOptions;
using wyjit::KernelSpec;
using wyjit::Target;

double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

/// A temp directory removed at exit.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "wyjit-bench-cache-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const Target kSm90{.arch = 90};

double thread_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double children_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double load_average() {
  double load = 0.0;
  return ::getloadavg(&load, 1) == 1 ? load : -1.0;
}

// Step: memory hits. Each thread times batches of calls; the median is over every batch of
// every thread (a batch's mean per call).
void bench_memory_hits(int threads) {
  Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
  const KernelSpec spec{.k = 4, .io = wyjit::DType::bf16};
  jit.compile(spec, kSm90);
  constexpr int kBatch = 2000;
  constexpr int kBatches = 200;
  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(threads));
  std::barrier start(threads);
  std::vector<std::jthread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<double>& out = per_thread[static_cast<std::size_t>(t)];
      start.arrive_and_wait();
      for (int b = 0; b < kBatches; ++b) {
        const Clock::time_point t0 = Clock::now();
        for (int i = 0; i < kBatch; ++i) {
          const auto hit = jit.compile(spec, kSm90);
          if (hit->binary.empty()) std::abort();
        }
        out.push_back(ns_between(t0, Clock::now()) / kBatch);
      }
    });
  }
  pool.clear();
  std::vector<double> all;
  for (const auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  fmt::print("memory hit, {} thread(s):        median {:8.1f} ns per Jit::compile  (p90 {:.1f})\n",
             threads, median(all), [&] {
               std::sort(all.begin(), all.end());
               return all[all.size() * 9 / 10];
             }());
}

// Step: disk hits. read_entry_file is the read + verify (checksum, key) of one entry; a fresh
// Jit adds stamping the source and building the key.
void bench_disk_hits() {
  TempDir dir;
  const KernelSpec spec{.k = 8, .io = wyjit::DType::bf16};
  std::string path;
  {
    Jit jit(JitOptions{.cache_dir = dir.path.string()});
    path = jit.compile(spec, kSm90)->path;
  }
  const wyjit::detail::CacheKey key =
      wyjit::detail::make_cache_key(spec, wyjit::detail::stamp(spec), kSm90);
  std::vector<double> read_ns;
  for (int i = 0; i < 2000; ++i) {
    const Clock::time_point t0 = Clock::now();
    const wyjit::detail::EntryRead read = wyjit::detail::read_entry_file(path, key.text);
    read_ns.push_back(ns_between(t0, Clock::now()));
    if (read.status != wyjit::detail::EntryRead::Status::ok) std::abort();
  }
  std::vector<double> jit_ns;
  for (int i = 0; i < 300; ++i) {
    Jit jit(JitOptions{.cache_dir = dir.path.string()});
    const Clock::time_point t0 = Clock::now();
    const auto hit = jit.compile(spec, kSm90);
    jit_ns.push_back(ns_between(t0, Clock::now()));
    if (!hit->from_disk) std::abort();
  }
  fmt::print("disk hit, read + verify:            median {:8.1f} us  ({} bytes, SHA-256 {})\n",
             median(read_ns) / 1e3, fs::file_size(path),
             wyjit::detail::sha256_hardware_available() ? "SHA-NI" : "portable");
  fmt::print("disk hit, fresh Jit::compile:       median {:8.1f} us  (+ stamp, key, touch)\n",
             median(jit_ns) / 1e3);
}

// Step: cold compiles, each in a fresh memory-only Jit; the first compile of the process
// (NVRTC's own start-up) is reported apart.
void bench_cold_compiles() {
  const std::vector<KernelSpec> specs = {
      {.k = 1, .io = wyjit::DType::f32},
      {.k = 4, .io = wyjit::DType::bf16, .addressing = wyjit::Addressing::table},
      {.k = 8, .io = wyjit::DType::f16, .addressing = wyjit::Addressing::slot},
      {.k = 17, .io = wyjit::DType::bf16},
  };
  std::vector<double> ms;
  std::vector<double> cpu_ms;
  std::vector<std::vector<double>> per_variant(specs.size());
  std::vector<std::vector<double>> per_variant_cpu(specs.size());
  double first = -1.0;
  for (int round = 0; round < 4; ++round) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
      const double cpu0 = thread_cpu_ms();
      const Clock::time_point t0 = Clock::now();
      jit.compile(specs[i], kSm90);
      const double t = ns_between(t0, Clock::now()) / 1e6;
      const double cpu = thread_cpu_ms() - cpu0;
      if (first < 0) {
        first = t;
        continue;
      }
      ms.push_back(t);
      cpu_ms.push_back(cpu);
      per_variant[i].push_back(t);
      per_variant_cpu[i].push_back(cpu);
    }
  }
  fmt::print(
      "cold compile, one variant, sm_90:   median {:8.1f} ms wall, {:.1f} ms CPU  ({} compiles "
      "of {} variants; first in process {:.1f} ms wall)\n",
      median(ms), median(cpu_ms), ms.size(), specs.size(), first);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    fmt::print("  {:<48} median {:8.1f} ms wall, {:.1f} ms CPU\n", wyjit::format_spec(specs[i]),
               median(per_variant[i]), median(per_variant_cpu[i]));
  }
}

// Step: the CLI, as a deployer runs it.
void bench_precompile(const std::string& cli) {
  TempDir dir;
  const std::string command = fmt::format(
      "'{}' precompile --all --arch sm_90 --cache-dir '{}' > /dev/null", cli, dir.path.string());
  for (const char* label : {"cold", "all cached"}) {
    const double cpu0 = children_cpu_s();
    const Clock::time_point t0 = Clock::now();
    const int status = std::system(command.c_str());
    const double s = ns_between(t0, Clock::now()) / 1e9;
    const double cpu = children_cpu_s() - cpu0;
    if (status != 0) {
      fmt::print("precompile --all --arch sm_90 ({}): FAILED (status {})\n", label, status);
      return;
    }
    // NOTE: CPU time over the core count is what the wall time is on an otherwise idle
    // machine (the compiles are independent and CPU-bound).
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    fmt::print(
        "precompile --all --arch sm_90, {}:{:>{}} {:8.1f} s wall, {:.1f} s CPU = {:.1f} s "
        "per core  ({} variants, -j {})\n",
        label, "", 10 - static_cast<int>(std::string(label).size()), s, cpu, cpu / cores,
        wyjit::standard_matrix().size(), cores);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool skip_precompile = false;
  bool memory_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--skip-precompile") {
      skip_precompile = true;
    } else if (arg == "--memory-only") {
      memory_only = true;
    } else {
      fmt::print(stderr, "usage: bench_cache [--skip-precompile] [--memory-only]\n");
      return 2;
    }
  }
  utsname host{};
  ::uname(&host);
  fmt::print("wyjit cache benchmark (CPU side): {} {}, {} hardware threads, load average {:.1f}\n",
             host.sysname, host.release, std::thread::hardware_concurrency(), load_average());
  bench_memory_hits(1);
  bench_memory_hits(8);
  if (memory_only) return 0;
  bench_disk_hits();
  bench_cold_compiles();
  if (!skip_precompile) {
    fmt::print("load average before the precompile: {:.1f}\n", load_average());
    const fs::path cli = fs::canonical("/proc/self/exe").parent_path() / "wyjit";
    bench_precompile(cli.string());
  }
  return 0;
}
