// SPDX-License-Identifier: Apache-2.0
// Many threads, one Jit: 16 threads request random variants of the family at once (single
// flight per variant: nothing is compiled beforehand) and launch them, on random kernels of the
// variant, on their own streams; every result is checked against the reference.
#include <catch2/catch.hpp>
#include <cstdint>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void sixteen_threads(const FamilyCase& family) {
  make_context_current();
  const std::vector<Sample> pool = usable_samples(family, Suite::threads, false);
  REQUIRE(!pool.empty());
  constexpr int kThreads = 16;
  constexpr int kLaunchesPerThread = 3;
  const JitCounters before = test_jit().counters();

  std::latch start(kThreads);
  std::vector<std::vector<std::string>> problems(kThreads);
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
          Sample sample = pool[rng() % pool.size()];
          sample.batch = 1 + static_cast<int>(rng() % 3);
          const int mode =
              static_cast<int>(rng() % static_cast<std::uint64_t>(mode_count(family, sample.spec)));
          const std::uint64_t seed = 10000 + static_cast<std::uint64_t>(t * kLaunchesPerThread + i);
          const std::string error = failure_of([&] {
            const Kernel kernel = test_jit().kernel(sample.spec);
            LaunchRig rig(family, sample, {.padded = (t + i) % 2 == 1, .mode = mode});
            rig.prepare(seed, stream.get(), Padding{.middle = true});
            rig.launch(kernel, stream.get());
            stream.synchronize();
            const std::string wrong = test::failures(rig.result().checks);
            if (!wrong.empty())
              problems[static_cast<std::size_t>(t)].push_back(rig.describe() + ": " + wrong);
            ++launched[static_cast<std::size_t>(t)];
          });
          if (!error.empty()) {
            problems[static_cast<std::size_t>(t)].push_back(format_spec(sample.spec) + ": " +
                                                            error);
          }
        }
      });
      if (!setup.empty()) {
        problems[static_cast<std::size_t>(t)].push_back("thread " + std::to_string(t) + ": " +
                                                        setup);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::size_t failed = 0;
  std::string report;
  int total = 0;
  for (int t = 0; t < kThreads; ++t) {
    total += launched[static_cast<std::size_t>(t)];
    for (const std::string& f : problems[static_cast<std::size_t>(t)]) {
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

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "threads: 16 threads request random variants from one Jit at once and launch them on "
    "their own streams",
    "[threads]", sixteen_threads);

}  // namespace wyjit::test::conformance
