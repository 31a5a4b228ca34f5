// SPDX-License-Identifier: Apache-2.0
// What the shared suites have in common: the samples this build accepts, compiling them first,
// one checked launch of a rig, and bit-for-bit comparison of two launches.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/conformance/launch_rig.hpp"

namespace wyjit::test::conformance {

/// The family's samples for `suite` that validate_spec accepts (a WARN names each other one),
/// their variants compiled (prewarm) unless `compile` is false.
std::vector<Sample> usable_samples(const FamilyCase& family, Suite suite, bool compile = true);

/// Every spec of `samples`, and each with every other addressing mode when `all_addressing`.
std::vector<KernelSpec> specs_of(const std::vector<Sample>& samples, bool all_addressing = false);

/// How many launch modes the family has for the variant (FamilyCase::launch_modes).
int mode_count(const FamilyCase& family, const KernelSpec& spec);

/// prepare(seed, padding) on `stream`, then that every element to be written is poison, then
/// the C++ launch; returns the result after synchronising. Reports the poison checks.
RigResult run_launch(LaunchRig& rig, const Kernel& kernel, std::uint64_t seed,
                     const Padding& padding, CUstream stream);

/// One Catch2 CHECK per comparison of `result`, described by `when` and the rig.
void check_result(const LaunchRig& rig, const RigResult& result, const std::string& when);

/// CHECKs that every item `got` holds equals `want`'s (items `got` left empty, padded or
/// skipped, are not compared); returns how many were compared.
std::size_t check_same_items(const std::vector<std::vector<std::uint8_t>>& got,
                             const std::vector<std::vector<std::uint8_t>>& want);

}  // namespace wyjit::test::conformance
