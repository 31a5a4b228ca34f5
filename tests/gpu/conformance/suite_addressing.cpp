// SPDX-License-Identifier: Apache-2.0
// Table and slot addressing give the same bytes as strided addressing on the same data, on every
// kernel of the variant: the outputs of each row and every state written (wherever the pool put
// it), with sequences padded and a write skipped in the table and slot runs.
#include <catch2/catch.hpp>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void table_and_slot_match_strided(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::addressing, false);
  prewarm(specs_of(samples, true));
  make_context_current();
  const Stream stream;
  std::uint64_t seed = 5000;
  for (const Sample& sample : samples) {
    ++seed;
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      const RigOptions options{.padded = sample.padded, .mode = mode};
      const Sample strided_sample{with_addressing(sample.spec, Addressing::strided), sample.batch,
                                  sample.shape, sample.padded};
      LaunchRig strided(family, strided_sample, options);
      const RigResult want =
          run_launch(strided, test_jit().kernel(strided.spec()), seed, {}, stream.get());
      check_result(strided, want, "strided");
      for (const Addressing addressing : {Addressing::table, Addressing::slot}) {
        Sample other = strided_sample;
        other.spec = with_addressing(sample.spec, addressing);
        LaunchRig rig(family, other, options);
        const RigResult got = run_launch(rig, test_jit().kernel(rig.spec()), seed,
                                         Padding{.middle = sample.padded}, stream.get());
        check_result(rig, got, "against strided");
        INFO(rig.describe() << " vs strided");
        CHECK(check_same_items(got.canonical, want.canonical) > 0);
      }
    }
  }
}

}  // namespace

WYJIT_CONFORMANCE_SUITE("table and slot addressing match strided bit for bit", "[addressing]",
                        table_and_slot_match_strided);

}  // namespace wyjit::test::conformance
