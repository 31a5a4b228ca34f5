// SPDX-License-Identifier: Apache-2.0
// Hostile numbers: every family's launches that read numbers (the GDN verify forms, the conv1d
// kernels) with one hostile number in their inputs at a time (the family's
// FamilyLaunch::number_hazards: NaN, +-inf, huge and zero decays, beta outside [0, 1], zero and
// huge q/k rows with l2norm), amid random data, against the float64 reference computed from the
// same inputs: every output and state non-finite exactly where the reference is, the finite
// ones within the usual tolerance where the case is well-conditioned, nothing written outside
// what the launch may write and the 4 KiB guard regions around every buffer intact. A
// [sanitize]-tagged twin runs the first sample of each family in buffers of exactly their size
// under compute-sanitizer (tools/run-gpu-suite.sh). docs/hostile-input.md says what each kernel
// computes with these numbers.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void hostile_numbers(const FamilyCase& family, std::size_t guard_bytes, bool first_sample) {
  std::vector<Sample> samples = usable_samples(family, Suite::numbers);
  if (first_sample && samples.size() > 1) samples.resize(1);
  make_context_current();
  const Stream stream;
  std::uint64_t seed = 9100;
  std::size_t launches = 0;
  for (const Sample& sample : samples) {
    const Kernel kernel = test_jit().kernel(sample.spec);
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      const RigOptions plain{.padded = sample.padded, .mode = mode, .guard_bytes = guard_bytes};
      const std::vector<NumberHazard> hazards = family.make_launch(sample, plain)->number_hazards();
      for (const NumberHazard& hazard : hazards) {
        RigOptions options = plain;
        options.hazard = hazard;
        LaunchRig rig(family, sample, options);
        const RigResult result = run_launch(rig, kernel, ++seed, {}, stream.get());
        check_result(rig, result, hazard.describe());
        ++launches;
      }
    }
  }
  // NOTE: every family has a launch that reads numbers.
  CHECK(launches > 0);
}

void hostile_numbers_guarded(const FamilyCase& family) { hostile_numbers(family, 4096, false); }
void hostile_numbers_exact(const FamilyCase& family) { hostile_numbers(family, 0, true); }

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "hostile numbers (NaN, +-inf, huge and zero decays, beta outside [0, 1], zero and huge q/k "
    "rows): non-finite exactly where the float64 reference is, finite results within tolerance "
    "where well-conditioned, 4 KiB guard regions intact",
    "[hostile_numbers]", hostile_numbers_guarded);
WYJIT_CONFORMANCE_SUITE(
    "hostile numbers of the first sample in buffers of exactly their size, for compute-sanitizer",
    "[hostile_numbers][sanitize]", hostile_numbers_exact);

}  // namespace wyjit::test::conformance
