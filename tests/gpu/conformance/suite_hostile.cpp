// SPDX-License-Identifier: Apache-2.0
// Hostile device indices: every family's small launches (one per addressing mode and kernel)
// with every device index array it reads (slot arrays, replay cursors and accepted counts,
// window offsets) overwritten with values no engine should pass (negative, INT_MIN, INT_MAX,
// far past the pool, random) and 0 (an accepted count of 0, one slot for every sequence). The host
// cannot see them; the kernels must stay inside the buffers they were given (docs/hostile-input.md
// says what they compute then). Checked twice: with 4 KiB guard regions around every buffer, whose
// bytes must be unchanged, and in buffers of exactly their size under compute-sanitizer (the
// [sanitize] tag; tools/run-gpu-suite.sh). The outputs are not compared: with hostile indices the
// contract names none.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

void hostile_launches(const FamilyCase& family, std::size_t guard_bytes) {
  const std::vector<Sample> samples = usable_samples(family, Suite::sanitizer);
  make_context_current();
  const Stream stream;
  std::uint64_t seed = 4200;
  std::size_t corrupted = 0;
  for (const Sample& sample : samples) {
    const Kernel kernel = test_jit().kernel(sample.spec);
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      LaunchRig rig(family, sample, {.mode = mode, .guard_bytes = guard_bytes});
      rig.prepare(++seed, stream.get());
      const std::vector<std::string> names = rig.corrupt_indices(seed, stream.get());
      corrupted += names.size();
      rig.launch(kernel, stream.get());
      stream.synchronize();
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      INFO(rig.describe() << "; hostile: " << (list.empty() ? "(no index array)" : list));
      CHECK(rig.guard_bytes_changed() == 0);
    }
  }
  // NOTE: every family reads some device index array in one of its samples (slot addressing).
  CHECK(corrupted > 0);
}

void hostile_guarded(const FamilyCase& family) { hostile_launches(family, 4096); }
void hostile_exact(const FamilyCase& family) { hostile_launches(family, 0); }

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "hostile device indices (slots, cursors, accepted counts, offsets): nothing changes outside "
    "the buffers, 4 KiB guard regions intact",
    "[hostile]", hostile_guarded);
WYJIT_CONFORMANCE_SUITE(
    "hostile device indices in buffers of exactly their size, for compute-sanitizer",
    "[hostile][sanitize]", hostile_exact);

}  // namespace wyjit::test::conformance
