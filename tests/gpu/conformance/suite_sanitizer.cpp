// SPDX-License-Identifier: Apache-2.0
// The family's smallest useful launches, one per addressing mode and kernel, padded and dense,
// in buffers of exactly their size: what tools/run-gpu-suite.sh runs under compute-sanitizer
// (memcheck, racecheck, initcheck, synccheck), selected by the tag [sanitize]. Checked against
// the reference like any other launch, so a run under a tool also proves the launches happened.
#include <catch2/catch.hpp>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void sanitizer_sample(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::sanitizer);
  make_context_current();
  const Stream stream;
  std::uint64_t seed = 900;
  for (const Sample& sample : samples) {
    const Kernel kernel = test_jit().kernel(sample.spec);
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      for (const bool padded : {true, false}) {
        LaunchRig rig(family, sample, {.padded = padded, .mode = mode, .guard_bytes = 0});
        const RigResult result =
            run_launch(rig, kernel, ++seed, Padding{.middle = padded}, stream.get());
        check_result(rig, result, "sanitizer sample");
      }
    }
  }
}

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "compute-sanitizer sample: one small launch per addressing mode and kernel, in buffers of "
    "exactly their size",
    "[sanitize]", sanitizer_sample);

}  // namespace wyjit::test::conformance
