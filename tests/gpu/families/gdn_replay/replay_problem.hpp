// SPDX-License-Identifier: Apache-2.0
// gdn_replay's launches in the conformance kit share one random problem: each sequence's
// checkpoint S0, its log tile (random live entries, NaN everywhere else), its cursor (folding
// and not, wrapping past the end of the ring) and the step's K tokens, with S_cur in float64
// (common/gdn_replay_reference.hpp); and the pieces that put them in pool images and read them
// back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/compare.hpp"
#include "common/gdn_reference.hpp"
#include "common/gdn_replay_reference.hpp"
#include "gpu/conformance/family_case.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test::conformance {

/// Shapes of a gdn_replay sample: shape = {HK, HV}.
struct ReplaySizes {
  int batch = 1, hk = 1, hv = 1;
};

struct ReplayProblem {
  GdnProblem tokens;  ///< the K tokens; state0: the checkpoints as stored (rounded)
  ReplayLogLayout log;
  std::vector<ReplayCursor> cursors;     ///< [batch]
  std::vector<std::vector<float>> logs;  ///< [batch] log tiles: the live entries, NaN elsewhere
  std::vector<double> current;           ///< [batch][HV][dk][dv]: S_cur
};

/// Cursors within the contract (0 <= len <= L-K): sequences 0, 2, 4... fold when `seed` is even,
/// the others when it is odd, and every third starts at the end of the ring.
std::vector<ReplayCursor> random_cursors(int batch, int K, int L, std::uint64_t seed);

ReplayProblem make_replay_problem(const GdnReplaySpec& spec, const ReplaySizes& sizes,
                                  std::uint64_t seed);

/// The sequential recurrence of the tokens from each sequence's S_cur.
GdnReference replay_verify_reference(const ReplayProblem& p);

/// G a verify logs for token t of sequence b, value head vh: measured from the checkpoint the
/// entry will be read against (the new one when it folds).
double replay_logged_g(const ReplayProblem& p, const GdnReference& ref, int b, int t, int vh,
                       bool fold);

/// Offset of state element (i over dk, j over dv) in one head's tile of `layout`.
std::size_t state_offset(Layout layout, int dk, int dv, int i, int j);

/// A pool of `plan.pool_elems` elements of `type`, NaN but where `place(b)` (a tile of the plan,
/// or -1) puts each sequence's `tile(b)` (floats): tiles are whole images, their padding NaN.
template <class Place, class Tile>
std::vector<std::uint8_t> pool_image(const TilePlan& plan, IoType type, Place place, Tile tile);

/// Sequence b's checkpoint [HV][dk][dv] as a tile of `layout` (HV*dk*dv floats).
std::vector<float> state_tile(const std::vector<float>& states, int b, int hv, int dk, int dv,
                              Layout layout);
std::vector<float> state_tile(const std::vector<double>& states, int b, int hv, int dk, int dv,
                              Layout layout);

/// Adds the tile at `at` of `pool` (a device image, `type`, `layout`) against `want`
/// ([HV][dk][dv], sequence b's block of it) to `cmp`.
void compare_state_tile(ComparisonAccumulator& cmp, const std::vector<double>& want, int b,
                        const std::uint8_t* pool, std::size_t at, IoType type, int hv, int dk,
                        int dv, Layout layout);

/// The image of the cursor array [batch][stride]: base, len, then a marker in the gap.
std::vector<std::uint8_t> cursor_image(const std::vector<ReplayCursor>& cursors,
                                       std::int64_t stride);

/// Tolerances (relative to the largest reference value) of the launches' results, as the
/// replay tests use them: f32 to 1e-4, 16-bit outputs and states to their rounding.
double replay_out_tolerance(const GdnReplaySpec& spec);
double replay_state_tolerance(const GdnReplaySpec& spec);
constexpr double kReplayLogTolerance = 1e-4;  ///< the fp32 log entries

template <class Place, class Tile>
std::vector<std::uint8_t> pool_image(const TilePlan& plan, IoType type, Place place, Tile tile) {
  std::vector<float> pool(plan.pool_elems, std::numeric_limits<float>::quiet_NaN());
  for (int b = 0; b < plan.batch; ++b) {
    const int at = place(b);
    if (at < 0) continue;
    const std::vector<float> t = tile(b);
    std::copy(t.begin(), t.end(), pool.begin() + static_cast<std::ptrdiff_t>(plan.at(at)));
  }
  return pack_io(pool, type);
}

}  // namespace wyjit::test::conformance
