// SPDX-License-Identifier: Apache-2.0
// What CI compiles: the whole standard matrix for sm_90, and a sample of variants for every
// target NVRTC supports (cubin, arch-specific cubin where NVRTC has one, PTX). Any NVRTC
// warning fails, like an error.
#include <atomic>
#include <mutex>
#include <thread>

#include "compile/nvrtc_compiler.hpp"
#include "test_cache_support.hpp"

using namespace wyjit;
using namespace wyjit::test;

namespace {

struct Job {
  KernelSpec spec;
  Target target;
};

struct Failure {
  std::string what;
};

/// Compiles every job on a pool of 2 threads (CI machines have 2 cores); collects failures:
/// compile errors, warnings, empty binaries, unmangled names.
std::vector<Failure> compile_all(const std::vector<Job>& jobs) {
  std::vector<Failure> failures;
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      const Job& job = jobs[i];
      const std::string name = format_spec(job.spec) + " for " + job.target.name();
      std::string problem;
      try {
        const detail::StampedSource s = detail::stamp(job.spec);
        const detail::NvrtcResult r =
            detail::nvrtc_compile(s.text, s.program_name, s.name_expressions, job.target, name);
        if (!r.log.empty()) problem = "NVRTC log (warnings fail CI):\n" + r.log;
        if (r.binary.size() < 1000) problem += "binary of only " + std::to_string(r.binary.size());
        if (r.lowered_names.size() != s.name_expressions.size()) problem += "kernels missing";
        for (const std::string& lowered : r.lowered_names) {
          if (lowered.rfind("_Z", 0) != 0) problem += "lowered name " + lowered;
        }
      } catch (const std::exception& e) {
        problem = e.what();
      }
      if (problem.empty()) continue;
      const std::lock_guard lock(mutex);
      failures.push_back({name + ": " + problem});
    }
  };
  {
    std::jthread a(worker);
    std::jthread b(worker);
  }
  return failures;
}

}  // namespace

TEST_CASE("CI: the whole standard matrix compiles for sm_90 without warnings", "[nvrtc][matrix]") {
  std::vector<Job> jobs;
  for (const KernelSpec& spec : standard_matrix()) jobs.push_back({spec, Target{.arch = 90}});
  REQUIRE(jobs.size() >= 51);
  const std::vector<Failure> failures = compile_all(jobs);
  for (const Failure& f : failures) UNSCOPED_INFO(f.what);
  CHECK(failures.empty());
}

TEST_CASE("CI: a sample of variants compiles for every NVRTC target without warnings",
          "[nvrtc][matrix]") {
  const std::vector<int> archs = detail::nvrtc_supported_archs();
  REQUIRE_FALSE(archs.empty());
  // The ends of the matrix (K 1 and 17, f32 and bf16, its first and last addressing modes),
  // a middle one, and a variant with what the standard matrix leaves out.
  const std::vector<KernelSpec> standard = standard_matrix();
  std::vector<KernelSpec> sample = {
      standard.front(),
      standard.back(),
      standard[standard.size() / 2],
      GdnVerifySpec{.k = 4, .io = DType::bf16, .layout = Layout::kv, .l2norm_qk = true},
  };
  std::vector<Job> jobs;
  for (const int arch : archs) {
    for (std::size_t i = 0; i < sample.size(); ++i) {
      // Cubins for every variant of the sample; PTX for one.
      jobs.push_back({sample[i], Target{.arch = arch}});
      if (i == 0) jobs.push_back({sample[i], Target{.arch = arch, .ptx = true}});
    }
  }
  // Arch-specific targets exist for sm_90 and newer: one variant each.
  for (const int arch : archs) {
    if (arch >= 90) jobs.push_back({sample[1], Target{.arch = arch, .arch_specific = true}});
  }
  const std::vector<Failure> failures = compile_all(jobs);
  for (const Failure& f : failures) UNSCOPED_INFO(f.what);
  CHECK(failures.empty());
}
