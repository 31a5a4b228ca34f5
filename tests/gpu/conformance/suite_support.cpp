// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/suite_support.hpp"

#include <catch2/catch.hpp>

#include "gpu/support/device.hpp"
#include "wyjit/error.hpp"

namespace wyjit::test::conformance {

std::vector<Sample> usable_samples(const FamilyCase& family, Suite suite, bool compile) {
  std::vector<Sample> usable;
  for (const Sample& s : family.samples(suite)) {
    const std::string refused = failure_of([&] { validate_spec(s.spec); });
    if (refused.empty()) {
      usable.push_back(s);
    } else {
      WARN(format_spec(s.spec) << " is not accepted by this build, not run: " << refused);
    }
  }
  if (compile) prewarm(specs_of(usable));
  return usable;
}

std::vector<KernelSpec> specs_of(const std::vector<Sample>& samples, bool all_addressing) {
  std::vector<KernelSpec> specs;
  for (const Sample& s : samples) {
    if (!all_addressing) {
      specs.push_back(s.spec);
      continue;
    }
    for (const Addressing a : {Addressing::strided, Addressing::table, Addressing::slot}) {
      specs.push_back(with_addressing(s.spec, a));
    }
  }
  return specs;
}

int mode_count(const FamilyCase& family, const KernelSpec& spec) {
  return static_cast<int>(family.launch_modes(spec).size());
}

RigResult run_launch(LaunchRig& rig, const Kernel& kernel, std::uint64_t seed,
                     const Padding& padding, CUstream stream) {
  rig.prepare(seed, stream, padding);
  WYJIT_CU_CHECK(cuStreamSynchronize(stream));
  check_all("poisoned before the launch: " + rig.describe(), rig.check_poisoned());
  rig.launch(kernel, stream);
  WYJIT_CU_CHECK(cuStreamSynchronize(stream));
  return rig.result();
}

void check_result(const LaunchRig& rig, const RigResult& result, const std::string& when) {
  check_all(when + ": " + rig.describe(), result.checks);
}

std::size_t check_same_items(const std::vector<std::vector<std::uint8_t>>& got,
                             const std::vector<std::vector<std::uint8_t>>& want) {
  REQUIRE(got.size() == want.size());
  std::size_t compared = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].empty()) continue;
    // NOTE: a bool, not the vectors: Catch2 would print every byte of both.
    const bool same = got[i] == want[i];
    std::size_t first = 0;
    while (!same && first < got[i].size() && first < want[i].size() &&
           got[i][first] == want[i][first]) {
      ++first;
    }
    INFO("item " << i << " of " << got.size() << ": " << got[i].size() << " bytes vs "
                 << want[i].size()
                 << (same ? "" : ", first difference at byte " + std::to_string(first)));
    CHECK(same);
    ++compared;
  }
  return compared;
}

}  // namespace wyjit::test::conformance
