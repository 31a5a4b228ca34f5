// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/conv1d_update/rollback_case.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/conv1d_reference.hpp"
#include "gpu/families/conv1d_update/rollback_rig.hpp"

namespace wyjit::test {

namespace {

double y_tolerance(DType io) {
  switch (io) {
    case DType::f32:
      return 1e-5;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
  }
  return 0;
}

// One launch, then y, the states written, and everything that must be untouched.
void check_step(Conv1dRig& rig, const Conv1dCase& c, const Conv1dGeometry& g,
                const Conv1dProblem& p, const Conv1dPlan& plan, const std::string& step,
                std::vector<CheckedTensor>& checks) {
  const Conv1dReference ref = conv1d_reference(p);
  const std::vector<std::uint8_t> before = rig.image().bytes;
  const HostTensor y = rig.launch(p, plan);
  const std::size_t C = static_cast<std::size_t>(g.channels), H = static_cast<std::size_t>(g.H),
                    K = static_cast<std::size_t>(g.K);

  ComparisonAccumulator y_cmp;
  std::size_t stray = 0;
  for (int b = 0; b < g.batch; ++b) {
    const bool padded = padded_sequence(g, plan, b);
    for (std::size_t t = 0; t < K; ++t) {
      const std::size_t row = b * K + t;
      for (std::int64_t ch = 0; ch < g.y_stride; ++ch) {
        const float v = y.get(row * static_cast<std::size_t>(g.y_stride) + ch);
        if (padded || ch >= g.channels) {
          stray += std::isnan(v) ? 0 : 1;  // padding and padded sequences keep their poison
        } else {
          y_cmp.add(ref.y[row * C + ch], v);
        }
      }
    }
  }
  checks.push_back({step + "y", y_cmp.finish(), y_tolerance(c.spec.io)});

  ComparisonAccumulator state_cmp;
  std::vector<bool> written(g.image_elems, false);
  for (int b = 0; b < g.batch; ++b) {
    if (padded_sequence(g, plan, b)) continue;
    for (int t = 0; t < g.writes; ++t) {
      const int tile = plan.write[b * g.writes + t];
      if (tile < 0) continue;
      for (int ch = 0; ch < g.channels; ++ch) {
        for (int j = 0; j < g.written_cols; ++j) {
          const float want = g.window ? ref.window[(b * C + ch) * (H + K) + j]
                                      : ref.states[((b * K + t) * C + ch) * H + j];
          state_cmp.add(want, rig.state_at(tile, ch, j));
          written[g.element(tile, ch, j)] = true;
        }
      }
    }
  }
  // A state holds inputs, so it must be bit for bit what was read.
  checks.push_back({step + "states written", state_cmp.finish(), 0.0});

  const std::size_t elem = io_size(rig.image().type);
  for (std::size_t e = 0; e < g.image_elems; ++e) {
    if (written[e]) continue;
    stray += std::equal(before.begin() + e * elem, before.begin() + (e + 1) * elem,
                        rig.image().bytes.begin() + e * elem)
                 ? 0
                 : 1;
  }
  checks.push_back(
      {step + "elements written outside y and the states", count_comparison(stray), 0.0});
}

// The engine accepts a tokens of sequence b (1..K, or 0..K for a window) and rolls back; returns
// the history after replaying the accepted tokens one at a time through the reference.
std::vector<float> accept(Conv1dRig& rig, const Conv1dCase& c, const Conv1dGeometry& g,
                          const Conv1dProblem& p, const Conv1dPlan& plan, Conv1dCursor& cur, int b,
                          int a) {
  const std::size_t C = static_cast<std::size_t>(g.channels), H = static_cast<std::size_t>(g.H);
  Conv1dProblem one;
  one.batch = 1;
  one.channels = g.channels;
  one.k = 1;
  one.width = g.H + 1;
  one.bias = p.bias;
  one.silu = p.silu;
  one.weight = p.weight;
  one.bias_values = p.bias_values;
  one.state0.assign(p.state0.begin() + b * C * H, p.state0.begin() + (b + 1) * C * H);
  for (int t = 0; t < a; ++t) {
    const std::size_t row = static_cast<std::size_t>(b * g.K + t);
    one.x.assign(p.x.begin() + row * C, p.x.begin() + (row + 1) * C);
    one.state0 = conv1d_reference(one).states;
  }
  if (g.window) {
    if (c.spec.addressing == Addressing::slot) cur.current[b] = plan.write[b];
    cur.offset[b] = a;
  } else {
    const int chosen = plan.write[b * g.writes + a - 1];
    if (c.spec.addressing == Addressing::strided) {
      // The copy the intermediate form costs on rejection: Hi_{a-1} over S_b.
      for (int ch = 0; ch < g.channels; ++ch) {
        for (int j = 0; j < g.H; ++j) {
          rig.image().set(g.element(cur.current[b], ch, j), rig.state_at(chosen, ch, j));
        }
      }
    } else {
      cur.current[b] = chosen;
    }
  }
  return one.state0;
}

std::vector<CheckedTensor> run(const Conv1dCase& c, int steps) {
  const Conv1dUpdateSpec& s = c.spec;
  const Conv1dGeometry g = make_conv1d_geometry(c);
  const IoType io = io_type(s.io);
  const IoType wt = io_type(s.weight);
  const Conv1dShape shape{c.batch, c.channels, s.k, s.width, s.bias, s.silu};
  std::mt19937_64 rng(c.seed * 7919 + 17);
  Conv1dProblem p = make_random_conv1d_problem(shape, io, wt, c.seed);
  Conv1dRig rig(c, g, p);
  Conv1dCursor cur = make_conv1d_cursor(c, g, rng);
  const bool pad_sequences = steps == 1 && c.padded && c.batch >= 3;
  const std::size_t C = static_cast<std::size_t>(g.channels), H = static_cast<std::size_t>(g.H);

  // The initial history of every sequence, at the window offset of its first tile.
  for (int b = 0; b < c.batch; ++b) {
    for (int ch = 0; ch < g.channels; ++ch) {
      for (int j = 0; j < g.H; ++j) {
        rig.image().set(g.element(cur.current[b], ch, cur.offset[b] + j),
                        p.state0[(b * C + ch) * H + j]);
      }
    }
  }
  std::vector<CheckedTensor> checks;
  for (int step = 0; step < steps; ++step) {
    const std::string name = steps == 1 ? "" : "step " + std::to_string(step) + ": ";
    if (step > 0) {
      // Fresh inputs; the history is the accepted one, kept in p.state0.
      p.x = make_random_conv1d_problem(shape, io, wt, c.seed + 1000 * step).x;
    }
    const Conv1dPlan plan = make_conv1d_plan(c, g, cur, pad_sequences);
    check_step(rig, c, g, p, plan, name, checks);
    if (step + 1 == steps) break;

    std::vector<float> replayed(p.state0.size());
    std::size_t mismatches = 0;
    for (int b = 0; b < c.batch; ++b) {
      const int lo = g.window ? 0 : 1;
      const int a = lo + static_cast<int>(rng() % static_cast<unsigned>(g.K - lo + 1));
      const std::vector<float> history = accept(rig, c, g, p, plan, cur, b, a);
      std::copy(history.begin(), history.end(), replayed.begin() + b * C * H);
      // The state the next launch reads must be the replayed one.
      for (int ch = 0; ch < g.channels; ++ch) {
        for (int j = 0; j < g.H; ++j) {
          const float got = rig.state_at(cur.current[b], ch, cur.offset[b] + j);
          mismatches += got == history[ch * H + j] ? 0 : 1;
        }
      }
    }
    p.state0 = replayed;
    checks.push_back({name + "the state read next == the accepted tokens replayed one by one",
                      count_comparison(mismatches), 0.0});
  }
  return checks;
}

}  // namespace

std::vector<CheckedTensor> run_conv1d_case(const Conv1dCase& c) { return run(c, 1); }

std::vector<CheckedTensor> run_conv1d_steps(const Conv1dCase& c, int steps) {
  return run(c, steps);
}

std::string describe(const Conv1dCase& c) {
  return format_spec(KernelSpec(c.spec)) + " batch=" + std::to_string(c.batch) +
         " channels=" + std::to_string(c.channels) + (c.padded ? " padded" : " dense") +
         (c.channels_contiguous ? " tiles=[cols][channels]" : " tiles=[channels][cols]") +
         " seed=" + std::to_string(c.seed) +
         (c.path == WYJIT_CONV1D_PATH_WIDE     ? " path=wide"
          : c.path == WYJIT_CONV1D_PATH_NARROW ? " path=narrow"
                                               : "");
}

}  // namespace wyjit::test
