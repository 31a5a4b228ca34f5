// SPDX-License-Identifier: Apache-2.0
// gdn_verify's launch in the conformance kit: its arguments, buffers, random problem and reference.
#pragma once

#include <memory>

#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

/// One rig's launch of `sample` (a gdn_verify spec) under `options`.
std::unique_ptr<FamilyLaunch> make_gdn_verify_launch(const Sample& sample,
                                                     const RigOptions& options);

}  // namespace wyjit::test::conformance
