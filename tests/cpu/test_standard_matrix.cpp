// SPDX-License-Identifier: Apache-2.0
// The standard matrix (what precompile and CI compile by default): every family's part, each
// spec valid, no duplicates, the families in turn.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <variant>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

using namespace wyjit;

TEST_CASE("standard matrix: gdn_verify, conv1d_update, gdn_replay, each family in turn",
          "[cache][units]") {
  const std::vector<KernelSpec> specs = standard_matrix();
  REQUIRE_FALSE(specs.empty());
  std::vector<KernelSpec> gdn;
  std::vector<KernelSpec> conv;
  std::vector<GdnVerifySpec> gdn_specs;
  std::vector<Conv1dUpdateSpec> conv_specs;
  std::vector<GdnReplaySpec> replay_specs;
  for (const KernelSpec& s : specs) {
    CHECK_NOTHROW(validate_spec(s));
    if (const auto* g = std::get_if<GdnVerifySpec>(&s)) {
      CHECK(conv.empty());  // every gdn_verify variant comes before the conv1d_update ones
      CHECK(replay_specs.empty());
      gdn.push_back(s);
      gdn_specs.push_back(*g);
    } else if (const auto* c = std::get_if<Conv1dUpdateSpec>(&s)) {
      CHECK(replay_specs.empty());  // ... and conv1d_update before gdn_replay
      conv.push_back(s);
      conv_specs.push_back(*c);
    } else {
      replay_specs.push_back(std::get<GdnReplaySpec>(s));
    }
  }
  // Every addressing mode validate_spec accepts (for both families), and nothing else.
  std::vector<Addressing> modes;
  for (const Addressing a : {Addressing::strided, Addressing::table, Addressing::slot}) {
    bool accepted = true;
    try {
      validate_spec(GdnVerifySpec{.addressing = a});
      validate_spec(Conv1dUpdateSpec{.addressing = a});
    } catch (const Error&) {
      accepted = false;
    }
    if (accepted) modes.push_back(a);
  }
  const auto modes_of = [](const auto& part) {
    std::vector<Addressing> out;
    for (const auto& s : part) {
      if (std::find(out.begin(), out.end(), s.addressing) == out.end()) out.push_back(s.addressing);
    }
    return out;
  };

  // gdn_verify: io f32, f16, bf16, state f32, layout vk, d128, q and k normalised in the kernel
  // (as every shipped model does), with and without fused gating.
  for (const GdnVerifySpec& s : gdn_specs) {
    CHECK(s.state == DType::f32);
    CHECK(s.layout == Layout::vk);
    CHECK(s.dk == 128);
    CHECK(s.dv == 128);
    CHECK(s.l2norm_qk);
  }
  CHECK(modes_of(gdn_specs) == modes);
  CHECK(gdn.size() == 17 * 3 * modes.size() * 2);
  CHECK(std::count_if(gdn_specs.begin(), gdn_specs.end(), [](const GdnVerifySpec& s) {
          return s.fused_gating;
        }) == static_cast<std::ptrdiff_t>(gdn.size() / 2));
  REQUIRE_FALSE(gdn.empty());
  CHECK(gdn_specs.front().k == 1);
  CHECK(gdn_specs.front().io == DType::f32);
  CHECK(gdn_specs.back().k == 17);
  CHECK(gdn_specs.back().io == DType::bf16);

  // conv1d_update as Qwen3-Next / Qwen3.5 run it: bf16, W 4, bf16 weights, SiLU, no bias.
  std::vector<Rollback> rollbacks;
  for (const Conv1dUpdateSpec& s : conv_specs) {
    CHECK(s.io == DType::bf16);
    CHECK(s.width == 4);
    CHECK(s.weight == s.io);
    CHECK(s.silu);
    CHECK_FALSE(s.bias);
    if (std::find(rollbacks.begin(), rollbacks.end(), s.rollback) == rollbacks.end()) {
      rollbacks.push_back(s.rollback);
    }
  }
  CHECK(rollbacks == std::vector<Rollback>{Rollback::intermediate, Rollback::window});
  CHECK(modes_of(conv_specs) == modes);
  CHECK(conv.size() == 17 * 2 * modes.size());
  for (int k = 1; k <= 17; ++k) {
    CHECK(std::count_if(conv_specs.begin(), conv_specs.end(), [&](const Conv1dUpdateSpec& s) {
            return s.k == k;
          }) == static_cast<std::ptrdiff_t>(2 * modes.size()));
  }

  // gdn_replay as the shipped models run it (bf16 io, f32 checkpoint, vk, d128, l2norm), with and
  // without fused gating, logs of 16 and 32 entries, every K that L >= 2K allows.
  for (const GdnReplaySpec& s : replay_specs) {
    CHECK(s.io == DType::bf16);
    CHECK(s.state == DType::f32);
    CHECK(s.layout == Layout::vk);
    CHECK(s.dk == 128);
    CHECK(s.dv == 128);
    CHECK(s.l2norm_qk);
    CHECK((s.log == 16 || s.log == 32));
    CHECK(s.log >= 2 * s.k);
  }
  CHECK(modes_of(replay_specs) == modes);
  CHECK(replay_specs.size() == (8 + 16) * 2 * modes.size());

  CHECK(specs.size() == gdn.size() + conv.size() + replay_specs.size());
  std::vector<KernelSpec> sorted = specs;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
}
