// SPDX-License-Identifier: Apache-2.0
// Many threads, one Jit: 16 threads request random variants at once (single flight per variant)
// and launch them on their own streams; every result is checked against the reference.
#include <catch2/catch.hpp>
#include <cstdint>
#include <latch>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu/graph_support.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

namespace {

// Twelve distinct variants across K, io dtype, layout, addressing (those this build accepts)
// and the l2norm option.
std::vector<KernelSpec> variant_pool() {
  std::vector<Addressing> modes{Addressing::strided};
  for (const Addressing a : {Addressing::table, Addressing::slot}) {
    if (addressing_supported(a)) modes.push_back(a);
  }
  constexpr int kKs[] = {1, 2, 3, 4, 5, 8};
  constexpr DType kIos[] = {DType::f32, DType::f16, DType::bf16};
  std::set<KernelSpec> pool;
  for (int i = 0; pool.size() < 12; ++i) {
    pool.insert(KernelSpec{.k = kKs[i % 6],
                           .io = kIos[i % 3],
                           .addressing = modes[static_cast<std::size_t>(i / 2) % modes.size()],
                           .layout = (i / 3) % 2 == 0 ? Layout::vk : Layout::kv,
                           .l2norm_qk = i % 5 == 0});
  }
  return {pool.begin(), pool.end()};
}

}  // namespace

TEST_CASE(
    "threads: 16 threads request random variants from one Jit at once and launch them on "
    "their own streams",
    "[gpu][threads]") {
  make_context_current();
  const std::vector<KernelSpec> pool = variant_pool();
  constexpr int kThreads = 16;
  constexpr int kLaunchesPerThread = 3;
  const JitCounters before = test_jit().counters();

  std::latch start(kThreads);
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<int> launched(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // NOTE: Catch2 assertions are not thread-safe: workers only record what went wrong.
      std::mt19937_64 rng(100 + static_cast<std::uint64_t>(t));
      start.arrive_and_wait();
      const std::string setup = failure_of([&] {
        make_context_current();
        const Stream stream;
        for (int i = 0; i < kLaunchesPerThread; ++i) {
          const KernelSpec spec = pool[rng() % pool.size()];
          const int batch = 1 + static_cast<int>(rng() % 3);
          const std::uint64_t seed = 10000 + static_cast<std::uint64_t>(t * kLaunchesPerThread + i);
          const std::string error = failure_of([&] {
            const Kernel kernel = test_jit().kernel(spec);
            VerifyRig rig(spec, batch, 2, 4);
            rig.prepare(seed, stream.get());
            launch_gdn_verify(kernel, rig.args(), stream.get());
            stream.synchronize();
            for (const RigCheck& c : rig.check()) {
              if (!c.passed()) {
                failures[t].push_back(rig.describe() + ": " + c.comparison.describe(c.name) +
                                      " tolerance " + std::to_string(c.tolerance));
              }
            }
            ++launched[t];
          });
          if (!error.empty()) failures[t].push_back(format_spec(spec) + ": " + error);
        }
      });
      if (!setup.empty()) failures[t].push_back("thread " + std::to_string(t) + ": " + setup);
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::size_t failed = 0;
  std::string report;
  int total = 0;
  for (int t = 0; t < kThreads; ++t) {
    total += launched[t];
    for (const std::string& f : failures[t]) {
      ++failed;
      report += "\n  thread " + std::to_string(t) + ": " + f;
    }
  }
  INFO("failures:" << report);
  CHECK(failed == 0);
  CHECK(total == kThreads * kLaunchesPerThread);
  // Single flight: each variant was looked up on disk (then read, or compiled) at most once.
  const JitCounters after = test_jit().counters();
  const std::uint64_t builds = (after.misses - before.misses) +
                               (after.disk_hits - before.disk_hits) +
                               (after.ro_disk_hits - before.ro_disk_hits);
  INFO("builds " << builds << " for " << pool.size() << " variants");
  CHECK(builds <= pool.size());
}

}  // namespace wyjit::test
