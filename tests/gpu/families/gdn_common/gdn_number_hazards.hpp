// SPDX-License-Identifier: Apache-2.0
// The hostile numbers of a GDN launch (gdn_verify and gdn_replay's verify), for the
// [hostile_numbers] suite: which ones, and where they go in a random problem.
#pragma once

#include <vector>

#include "common/gdn_reference.hpp"
#include "gpu/conformance/number_hazard.hpp"

namespace wyjit::test::conformance {

/// NaN, +inf and -inf in one element of q, k_in, v and the gates (g and beta, or a and b with
/// fused gating); g = -1e30 and 0, g = -inf and -1e30 at every token, beta = -3 and 7, or a =
/// 1e30 and a = +inf at every token; with l2norm a zero q and k row, and one multiplied by 1e20
/// (its sum of squares overflows fp32; not with f16 io, which cannot hold it).
std::vector<NumberHazard> gdn_number_hazards(const GdnShape& shape, IoType io);

/// Puts `hazard` into `p` (inputs as the launch reads them: q, k_in, v, a, b rounded to `io`):
/// in sequence batch/2 (random data on both sides at an odd batch), token K/2 (or every token),
/// the last key or value head, element dk/3 of q and k, dv/3 of v. Throws std::logic_error for
/// an input `p` does not read.
void apply_number_hazard(const NumberHazard& hazard, GdnProblem& p, IoType io);

}  // namespace wyjit::test::conformance
