// SPDX-License-Identifier: Apache-2.0
// What a launch may write and nothing else: in dense and padded layouts (gaps after rows,
// columns and tiles), with no padded sequence, one in the middle (and a skipped write), and one
// at the end, on every kernel of the variant. Before each launch every element it must write is
// NaN (outputs and states poisoned); after it, every byte of every buffer outside those elements
// is as uploaded (inputs, padding, other tiles, padded sequences) and the guard regions around
// every buffer are intact.
#include <catch2/catch.hpp>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void nothing_written_outside(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::padding);
  make_context_current();
  const Stream stream;
  std::uint64_t seed = 20000;
  for (const Sample& sample : samples) {
    const Kernel kernel = test_jit().kernel(sample.spec);
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      for (const bool padded : {false, true}) {
        // Dense layouts put the intermediate tiles token-major, padded ones sequence-major.
        LaunchRig rig(family, sample, {.padded = padded, .mode = mode, .token_major = !padded});
        for (const Padding& padding : {Padding{}, Padding{.middle = true}, Padding{.tail = 1}}) {
          const RigResult result = run_launch(rig, kernel, ++seed, padding, stream.get());
          check_result(rig, result, "one launch");
        }
      }
    }
  }
}

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "padding, guard regions and poison: a launch writes what it must and not one byte more",
    "[padding][guards]", nothing_written_outside);

}  // namespace wyjit::test::conformance
