// SPDX-License-Identifier: Apache-2.0
// gdn_replay's conformance case: the samples each shared suite runs, on every kernel of the
// variant (verify in turn, commit, materialize, verify in the WY form: gdn_replay_launch.hpp).
#include <array>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/families/gdn_replay/gdn_replay_launch.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test::conformance {

namespace {

constexpr Addressing kStrided = Addressing::strided;
constexpr Addressing kTable = Addressing::table;
constexpr Addressing kSlot = Addressing::slot;

// bf16 io, q and k normalised in the kernel, dk = dv = 128: what the shipped models run.
GdnReplaySpec replay(int k, int log, DType state, Layout layout, Addressing addressing,
                     bool gating = false) {
  return {.k = k,
          .log = log,
          .io = DType::bf16,
          .state = state,
          .addressing = addressing,
          .layout = layout,
          .l2norm_qk = true,
          .fused_gating = gating};
}

class GdnReplayCase final : public FamilyCase {
 public:
  std::string_view name() const override { return "gdn_replay"; }

  std::vector<Sample> samples(Suite suite) const override {
    constexpr DType f32 = DType::f32;
    constexpr DType bf16 = DType::bf16;
    constexpr Layout vk = Layout::vk;
    constexpr Layout kv = Layout::kv;
    switch (suite) {
      case Suite::addressing:
        return addressing_samples();
      case Suite::padding:
        return {{replay(4, 16, f32, vk, kStrided), 3, {2, 4}},
                {replay(2, 8, bf16, kv, kTable), 5, {2, 8}},
                {replay(1, 8, f32, vk, kSlot, true), 3, {2, 4}},
                {replay(4, 8, bf16, vk, kSlot), 3, {2, 8}},
                {replay(2, 16, f32, kv, kStrided, true), 5, {2, 4}}};
      case Suite::graphs:
        return {{replay(4, 16, f32, vk, kStrided), 3, {2, 4}},
                {replay(2, 8, bf16, kv, kTable), 3, {2, 4}},
                {replay(1, 8, f32, kv, kSlot), 5, {2, 8}},
                {replay(4, 8, bf16, vk, kSlot, true), 3, {2, 4}}};
      case Suite::threads:
        return thread_samples();
      case Suite::multi_gpu:
        return {{replay(4, 16, f32, vk, kStrided), 3, {2, 4}},
                {replay(2, 8, bf16, kv, kTable, true), 3, {2, 8}},
                {replay(1, 16, f32, vk, kSlot), 5, {2, 4}}};
      case Suite::c_api:
        return {{replay(4, 16, f32, vk, kStrided), 3, {2, 4}},
                {replay(2, 8, bf16, kv, kTable), 3, {2, 8}},
                {replay(1, 8, f32, vk, kSlot, true), 5, {2, 4}}};
      case Suite::numbers:
        return number_samples();
      case Suite::sanitizer:
        // NOTE: K = 8 for the WY form's blocks of 256 threads (gdn_replay_threads).
        return {{replay(2, 8, bf16, vk, kStrided), 3, {2, 4}},
                {replay(1, 8, f32, kv, kTable), 3, {2, 4}},
                {replay(4, 8, f32, vk, kSlot, true), 3, {2, 4}},
                {replay(8, 16, f32, vk, kTable), 3, {2, 4}}};
    }
    return {};
  }

  std::unique_ptr<FamilyLaunch> make_launch(const Sample& sample,
                                            const RigOptions& options) const override {
    const std::vector<std::string> roles = role_names(sample.spec);
    const std::string& role = roles.at(static_cast<std::size_t>(options.mode));
    // NOTE: kv has only the WY form: its "verify" role runs the same kernel as "verify_wy".
    if (role == "verify") {
      return make_gdn_replay_verify_launch(sample, options, WYJIT_GDN_REPLAY_PATH_IN_TURN);
    }
    if (role == "verify_wy") {
      return make_gdn_replay_verify_launch(sample, options, WYJIT_GDN_REPLAY_PATH_WY);
    }
    if (role == "commit") return make_gdn_replay_commit_launch(sample, options);
    if (role == "materialize") return make_gdn_replay_materialize_launch(sample, options);
    throw std::logic_error("gdn_replay has no kernel '" + role + "'");
  }

 private:
  // Each verify form (vk in turn and WY, kv WY: the verify launch modes) with l2norm and raw
  // gates, and with fused gating without l2norm; f32 and bf16 io (f16 cannot hold the 1e20
  // rows), a 16-bit checkpoint, dk 64 (two q/k rows per warp), K = 1, folding and not (the
  // cursors of replay_problem.hpp), odd batches.
  static std::vector<Sample> number_samples() {
    const auto with = [](GdnReplaySpec s, bool l2norm, DType io = DType::bf16, int dk = 128) {
      s.l2norm_qk = l2norm;
      s.io = io;
      s.dk = dk;
      return s;
    };
    constexpr DType f32 = DType::f32;
    constexpr DType bf16 = DType::bf16;
    constexpr Layout vk = Layout::vk;
    constexpr Layout kv = Layout::kv;
    return {
        {with(replay(4, 16, f32, vk, kStrided), true, f32), 3, {2, 4}, true},
        {with(replay(2, 8, bf16, vk, kSlot, true), false), 5, {1, 2}},
        {with(replay(2, 8, f32, vk, kTable), true, bf16, 64), 3, {2, 4}},
        {with(replay(4, 16, f32, kv, kTable), true, f32), 3, {2, 4}},
        {with(replay(3, 8, f32, kv, kStrided, true), false), 5, {2, 2}, true},
        {with(replay(1, 8, bf16, kv, kSlot), true), 3, {1, 2}},
    };
  }

  // K 1, 2, 4 with logs of 8 and 16 entries in both layouts, strided (the suite runs each with
  // table and slot addressing too), the checkpoint in f32 and bf16 in turn, fused gating on
  // some; padded batch 3 keeps the padded-sequence and skipped-write cases at every K.
  static std::vector<Sample> addressing_samples() {
    std::vector<Sample> list;
    int n = 0;
    for (const Layout layout : {Layout::vk, Layout::kv}) {
      for (const int log : {8, 16}) {
        for (const int k : {1, 2, 4}) {
          const bool padded = n % 2 == 0;
          list.push_back(
              {replay(k, log, n % 2 == 0 ? DType::f32 : DType::bf16, layout, kStrided, n % 4 == 1),
               padded ? 3 : 5, padded ? std::array{2, 4} : std::array{2, 8}, padded});
          ++n;
        }
      }
    }
    return list;
  }

  // Twelve distinct variants across K, L, checkpoint dtype, layout, addressing and gating.
  static std::vector<Sample> thread_samples() {
    constexpr Addressing kModes[] = {kStrided, kTable, kSlot};
    constexpr std::array<std::array<int, 2>, 4> kKL = {{{1, 8}, {2, 8}, {4, 8}, {4, 16}}};
    std::set<GdnReplaySpec> pool;
    for (int i = 0; pool.size() < 12; ++i) {
      const auto [k, log] = kKL[static_cast<std::size_t>(i % 4)];
      pool.insert(replay(k, log, i % 3 == 0 ? DType::bf16 : DType::f32,
                         (i / 2) % 2 == 0 ? Layout::vk : Layout::kv,
                         kModes[static_cast<std::size_t>((i / 3) % 3)], i % 5 == 0));
    }
    std::vector<Sample> list;
    for (const GdnReplaySpec& s : pool) list.push_back({s, 3, {2, 4}});
    return list;
  }
};

}  // namespace

template <>
const FamilyCase& family_case<GdnReplaySpec>() {
  static const GdnReplayCase instance;
  return instance;
}

}  // namespace wyjit::test::conformance
