// SPDX-License-Identifier: Apache-2.0
// The gdn_replay family: verify (gdn_replay_verify.cuh), commit and materialize
// (gdn_replay_step.cuh), one variant's three kernels.
#pragma once

#include "gdn_replay/gdn_replay_config.cuh"
#include "gdn_replay/gdn_replay_params.cuh"
#include "gdn_replay/gdn_replay_step.cuh"
#include "gdn_replay/gdn_replay_verify.cuh"
