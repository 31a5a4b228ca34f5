// SPDX-License-Identifier: Apache-2.0
// Cache benchmark: memory hits under 8 threads, disk read + verify, cold NVRTC compiles per K,
// the disk hit through the driver (on a GPU; "skipped: no GPU" otherwise) and
// `wyjit precompile --all --arch sm_90`. Prints to stdout.
//
//   build/bin/bench_cache [--skip-precompile] [--memory-only] [--compile-only] [--gpu]
//                         [--k 1,2,...] [--rounds N] [--reps N]
//                         [--ab "EXTRA NVRTC OPTIONS"] [--ab-drop OPTION]...
#include "bench/bench_cache.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <sstream>
#include <thread>

#include "bench/bench_common.hpp"
#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "stamp/stamp.hpp"

namespace wyjit::cache_bench {

namespace fs = std::filesystem;

double ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count();
}

Stats stats(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  const std::size_t rank = (9 * n + 9) / 10;  // nearest rank: ceil(0.9 n)
  return {.median = median, .p90 = v[std::min(n, std::max<std::size_t>(rank, 1)) - 1]};
}

double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double load_average() {
  double load = 0.0;
  return ::getloadavg(&load, 1) == 1 ? load : -1.0;
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "wyjit-bench-cache-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

namespace {

// `threads` threads call `lookup` in batches; the median and p90 are over every batch of every
// thread (a batch's mean per call).
void time_hits(const char* label, int threads, const std::function<void()>& lookup) {
  constexpr int kBatch = 2000;
  constexpr int kBatches = 200;
  std::vector<std::vector<double>> per_thread(static_cast<std::size_t>(threads));
  std::barrier start(threads);
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::vector<double>& out = per_thread[static_cast<std::size_t>(t)];
        start.arrive_and_wait();
        for (int b = 0; b < kBatches; ++b) {
          const Clock::time_point t0 = Clock::now();
          for (int i = 0; i < kBatch; ++i) lookup();
          out.push_back(ns_between(t0, Clock::now()) / kBatch);
        }
      });
    }
  }
  std::vector<double> all;
  for (const auto& v : per_thread) all.insert(all.end(), v.begin(), v.end());
  const Stats s = stats(all);
  fmt::print("memory hit, {} thread(s), {:<34} median {:7.1f} ns  (p90 {:.1f})\n", threads, label,
             s.median, s.p90);
}

// Step: memory hits: Jit::compile alone (it skips validate_spec on a hit), and validate_spec
// followed by Jit::compile (the CPU part of a Jit::kernel hit).
void bench_memory_hits() {
  Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
  const KernelSpec spec = GdnVerifySpec{.k = 4, .io = DType::bf16};
  jit.compile(spec, kSm90);
  const auto hit = [&] {
    if (jit.compile(spec, kSm90)->binary.empty()) std::abort();
  };
  const auto validated_hit = [&] {
    validate_spec(spec);
    hit();
  };
  for (const int threads : {1, 8}) {
    time_hits("Jit::compile:", threads, hit);
    time_hits("validate_spec + Jit::compile:", threads, validated_hit);
  }
}

// Step: disk hits on the CPU. read_entry_file is the read + verify (checksum, key) of one entry;
// a fresh Jit adds stamping the source and building the key.
void bench_disk_hits() {
  TempDir dir;
  const KernelSpec spec = GdnVerifySpec{.k = 8, .io = DType::bf16};
  std::string path;
  {
    Jit jit(JitOptions{.cache_dir = dir.path.string()});
    path = jit.compile(spec, kSm90)->path;
  }
  const detail::CacheKey key = detail::make_cache_key(spec, detail::stamp(spec), kSm90);
  std::vector<double> read_us;
  for (int i = 0; i < 2000; ++i) {
    const Clock::time_point t0 = Clock::now();
    const detail::EntryRead read = detail::read_entry_file(path, key.text);
    read_us.push_back(ns_between(t0, Clock::now()) / 1e3);
    if (read.status != detail::EntryRead::Status::ok) std::abort();
  }
  std::vector<double> jit_us;
  for (int i = 0; i < 300; ++i) {
    Jit jit(JitOptions{.cache_dir = dir.path.string()});
    const Clock::time_point t0 = Clock::now();
    const auto hit = jit.compile(spec, kSm90);
    jit_us.push_back(ns_between(t0, Clock::now()) / 1e3);
    if (!hit->from_disk) std::abort();
  }
  const Stats r = stats(read_us);
  const Stats j = stats(jit_us);
  fmt::print(
      "disk hit, read + verify:            median {:8.1f} us  p90 {:8.1f} us  ({} bytes, "
      "SHA-256 {})\n",
      r.median, r.p90, fs::file_size(path),
      detail::sha256_hardware_available() ? "SHA-NI" : "portable");
  fmt::print(
      "disk hit, fresh Jit::compile:       median {:8.1f} us  p90 {:8.1f} us  (+ stamp, "
      "key, touch)\n",
      j.median, j.p90);
}

double children_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
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
        standard_matrix().size(), cores);
  }
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

int usage() {
  fmt::print(stderr,
             "usage: bench_cache [--skip-precompile] [--memory-only] [--compile-only] [--gpu]\n"
             "                   [--k 1,2,...] [--rounds N] [--reps N]\n"
             "                   [--ab \"EXTRA NVRTC OPTIONS\"] [--ab-drop OPTION]...\n");
  return 2;
}

}  // namespace

}  // namespace wyjit::cache_bench

int main(int argc, char** argv) {
  using namespace wyjit::cache_bench;
  bool skip_precompile = false;
  bool ab = false;
  std::string only;
  std::vector<int> ks;
  for (int k = 1; k <= 17; ++k) ks.push_back(k);
  int rounds = 3;
  int reps = 200;
  std::vector<std::string> extra, drop;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--skip-precompile") {
      skip_precompile = true;
    } else if (arg == "--memory-only" || arg == "--compile-only" || arg == "--gpu") {
      only = arg;
    } else if (arg == "--k" && has_value) {
      ks = wyjit::bench::parse_list(argv[++i]);
    } else if (arg == "--rounds" && has_value) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--reps" && has_value) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--ab" && has_value) {
      ab = true;
      for (std::string& w : split_words(argv[++i])) extra.push_back(std::move(w));
    } else if (arg == "--ab-drop" && has_value) {
      ab = true;
      drop.emplace_back(argv[++i]);
    } else {
      return usage();
    }
  }
  utsname host{};
  ::uname(&host);
  fmt::print("wyjit cache benchmark: {} {}, {} hardware threads, load average {:.1f}\n",
             host.sysname, host.release, std::thread::hardware_concurrency(), load_average());
  if (ab) {
    bench_nvrtc_ab(ks, rounds, extra, drop);
    return 0;
  }
  if (only == "--gpu") {
    bench_gpu(reps);
    return 0;
  }
  if (only == "--compile-only") {
    bench_cold_compiles(ks, rounds);
    return 0;
  }
  bench_memory_hits();
  if (only == "--memory-only") return 0;
  bench_disk_hits();
  bench_cold_compiles(ks, rounds);
  bench_gpu(reps);
  if (!skip_precompile) {
    fmt::print("load average before the precompile: {:.1f}\n", load_average());
    const fs::path cli = fs::canonical("/proc/self/exe").parent_path() / "wyjit";
    bench_precompile(cli.string());
  }
  return 0;
}
