// SPDX-License-Identifier: Apache-2.0
// conv1d_update's launch in the conformance kit: its arguments, buffers, random problem and
// reference.
#pragma once

#include <memory>

#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

/// One rig's launch of `sample` (a conv1d_update spec) under `options`.
std::unique_ptr<FamilyLaunch> make_conv1d_update_launch(const Sample& sample,
                                                        const RigOptions& options);

}  // namespace wyjit::test::conformance
