// SPDX-License-Identifier: Apache-2.0
// gdn_replay on the GPU against the float64 sequential recurrence over the accepted tokens:
// long runs with random acceptance (outputs at every step, materialized states, the cursors and
// the folds the rule asks for), every addressing mode bit-identical to strided, and a captured
// step replayed with new inputs equal to eager launches. Each verify form runs: vk in turn and
// in the WY form, kv (WY only).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/families/gdn_replay/replay_rig.hpp"
#include "gpu/support/device.hpp"
#include "wyjit/gdn_replay.hpp"
#include "wyjit/spec.hpp"

using namespace wyjit;
using namespace wyjit::test;

namespace {

GdnReplaySpec replay(int k, int log, DType io, DType state, Layout layout,
                     Addressing addressing = Addressing::strided, bool gating = false) {
  return GdnReplaySpec{.k = k,
                       .log = log,
                       .io = io,
                       .state = state,
                       .addressing = addressing,
                       .layout = layout,
                       .l2norm_qk = true,
                       .fused_gating = gating};
}

// `steps` steps of a rig, every output within `tolerance` of the reference at every step, the
// states at every `every`-th; returns the worst errors of the first and the last quarter.
std::pair<double, double> long_run(ReplayRig& rig, int steps, int every, double tolerance) {
  double first = 0.0, last = 0.0;
  for (int s = 0; s < steps; ++s) {
    const bool materialize = (s + 1) % every == 0;
    const ReplayErrors e = rig.step(rig.random_accepted(0.7), materialize);
    INFO("step " << s << ": output error " << e.out << ", state error " << e.state);
    REQUIRE(e.out <= tolerance);
    if (materialize) REQUIRE(e.state <= tolerance);
    if (s < steps / 4) first = std::max(first, e.out);
    if (s >= steps - steps / 4) last = std::max(last, e.out);
  }
  return {first, last};
}

// The layouts with each of their verify forms.
struct Form {
  Layout layout;
  std::int32_t path;
};
constexpr Form kForms[] = {{Layout::vk, WYJIT_GDN_REPLAY_PATH_IN_TURN},
                           {Layout::vk, WYJIT_GDN_REPLAY_PATH_WY},
                           {Layout::kv, WYJIT_GDN_REPLAY_PATH_AUTOMATIC}};

}  // namespace

TEST_CASE("gdn_replay: 2000 steps with random acceptance track the float64 recurrence",
          "[gpu][replay]") {
  make_context_current();
  for (const auto [layout, path] : kForms) {
    for (const auto& [k, log] : {std::pair{4, 16}, std::pair{2, 8}, std::pair{8, 32}}) {
      const GdnReplaySpec spec = replay(k, log, DType::f32, DType::f32, layout);
      INFO(format_spec(spec) << " path " << path);
      ReplayRig rig(
          spec, ReplayShape{.batch = 3, .hk = 2, .hv = 4, .seed = 7u + unsigned(k), .path = path});
      const auto [first, last] = long_run(rig, 2000, 250, 1e-4);
      // Not growing with the step count: the last quarter no worse than a few times the first.
      CHECK(last <= 4 * first + 1e-6);
      CHECK(rig.folds() > 2000 / (log / k + 1) / 2);
    }
  }
}

// The WY form's tile shapes beyond dk = dv = 128: vk strips of 128 columns (two tensor-core
// tiles a warp, dk 64), of 32 (dk 256: two dk slices summed through shared memory) and capped by
// dv 64; K from 1 to 16, so one to four n tiles of the 2K projection rows, the last one part
// padding; kv beside them.
TEST_CASE("gdn_replay: WY tile shapes (dk, dv 64 and 256, K 1..16) track the float64 recurrence",
          "[gpu][replay]") {
  make_context_current();
  struct Shape {
    int dk, dv, k, log;
  };
  constexpr Shape kShapes[] = {{64, 128, 3, 8},   {64, 64, 16, 32}, {256, 128, 5, 16},
                               {256, 64, 16, 32}, {128, 64, 1, 8},  {128, 256, 7, 16}};
  for (const Layout layout : {Layout::vk, Layout::kv}) {
    for (const Shape& sh : kShapes) {
      GdnReplaySpec spec = replay(sh.k, sh.log, DType::f32, DType::f32, layout);
      spec.dk = sh.dk;
      spec.dv = sh.dv;
      INFO(format_spec(spec));
      ReplayRig rig(spec, ReplayShape{.batch = 3,
                                      .hk = 1,
                                      .hv = 3,
                                      .seed = 3u + unsigned(sh.k),
                                      .path = WYJIT_GDN_REPLAY_PATH_WY});
      long_run(rig, 200, 40, 1e-4);
      CHECK(rig.folds() > 0);
    }
  }
}

TEST_CASE("gdn_replay: 16-bit io and checkpoints, fused gating, odd heads", "[gpu][replay]") {
  make_context_current();
  for (const auto [layout, path] : kForms) {
    for (const DType state : {DType::bf16, DType::f16}) {
      const GdnReplaySpec spec = replay(3, 8, DType::bf16, state, layout, Addressing::strided,
                                        /*gating=*/true);
      INFO(format_spec(spec) << " path " << path);
      ReplayRig rig(spec, ReplayShape{.batch = 5, .hk = 1, .hv = 3, .seed = 11, .path = path});
      // NOTE: a 16-bit checkpoint rounds once per fold; the outputs stay within a few 16-bit
      // ulps of the exact recurrence.
      long_run(rig, 300, 50, 3e-2);
    }
  }
}

TEST_CASE("gdn_replay: table and slot addressing are bit-identical to strided", "[gpu][replay]") {
  make_context_current();
  for (const auto [layout, path] : kForms) {
    INFO("path " << path);
    const ReplayShape shape{.batch = 3, .hk = 2, .hv = 8, .seed = 5, .path = path};
    ReplayRig strided(replay(4, 16, DType::bf16, DType::f32, layout), shape, 13);
    ReplayRig table(replay(4, 16, DType::bf16, DType::f32, layout, Addressing::table), shape, 13);
    ReplayRig slot(replay(4, 16, DType::bf16, DType::f32, layout, Addressing::slot), shape, 13);
    for (int s = 0; s < 40; ++s) {
      const std::vector<int> accepted = strided.random_accepted(0.7);
      table.random_accepted(0.7);
      slot.random_accepted(0.7);
      const bool materialize = s % 10 == 9;
      const ReplayErrors a = strided.step(accepted, materialize);
      const ReplayErrors b = table.step(accepted, materialize);
      const ReplayErrors c = slot.step(accepted, materialize);
      INFO("step " << s);
      CHECK(a.out <= 1e-2);
      CHECK(strided.outputs() == table.outputs());
      CHECK(strided.outputs() == slot.outputs());
      CHECK(strided.checkpoints() == table.checkpoints());
      CHECK(strided.logs() == table.logs());
      if (materialize) {
        CHECK(a.state == b.state);
        CHECK(a.state == c.state);
      }
    }
    CHECK(strided.folds() > 0);
  }
}
