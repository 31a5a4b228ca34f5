// SPDX-License-Identifier: Apache-2.0
// gdn_replay's launches in the conformance kit, one per kernel (FamilyCase::launch_modes: verify,
// commit, materialize, verify_wy; the verify launch forces its kernel through args.path). The
// checkpoints are the rig's pool (the commit has none); the log tiles and materialize's output are
// laid out by the launch itself (FamilyRefs), in the variant's addressing mode.
#pragma once

#include <cstdint>
#include <memory>

#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

std::unique_ptr<FamilyLaunch> make_gdn_replay_verify_launch(const Sample& sample,
                                                            const RigOptions& options,
                                                            std::int32_t path);
std::unique_ptr<FamilyLaunch> make_gdn_replay_commit_launch(const Sample& sample,
                                                            const RigOptions& options);
std::unique_ptr<FamilyLaunch> make_gdn_replay_materialize_launch(const Sample& sample,
                                                                 const RigOptions& options);

}  // namespace wyjit::test::conformance
