// SPDX-License-Identifier: Apache-2.0
// gdn_verify's conformance case: the samples each shared suite runs; the launch is
// gdn_verify_launch.cpp.
#include <array>
#include <memory>
#include <set>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/families/gdn_verify/gdn_verify_launch.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test::conformance {

namespace {

GdnVerifySpec spec(int k, DType io, Addressing addressing = Addressing::strided,
                   Layout layout = Layout::vk, DType state = DType::f32) {
  return {.k = k, .io = io, .state = state, .addressing = addressing, .layout = layout};
}

class GdnVerifyCase final : public FamilyCase {
 public:
  std::string_view name() const override { return "gdn_verify"; }

  std::vector<Sample> samples(Suite suite) const override {
    switch (suite) {
      case Suite::addressing:
        return addressing_samples();
      case Suite::padding: {
        GdnVerifySpec l2 = spec(5, DType::f16, Addressing::slot);
        l2.l2norm_qk = true;
        GdnVerifySpec gated = spec(2, DType::f32, Addressing::table);
        gated.fused_gating = true;
        return {{spec(4, DType::bf16), 3, {2, 4}},
                {spec(3, DType::f32, Addressing::table, Layout::kv), 4, {2, 2}},
                {l2, 3, {1, 2}},
                {spec(1, DType::bf16, Addressing::slot, Layout::kv, DType::bf16), 3, {2, 2}},
                {gated, 5, {1, 4}},
                {spec(3, DType::bf16, Addressing::strided, Layout::kv, DType::f16), 3, {2, 2}}};
      }
      case Suite::graphs: {
        GdnVerifySpec l2 = spec(5, DType::f16, Addressing::slot);
        l2.l2norm_qk = true;
        return {{spec(6, DType::f32, Addressing::strided, Layout::kv), 2, {2, 2}},
                {spec(2, DType::bf16), 3, {1, 2}},
                {spec(4, DType::bf16), 3, {2, 4}},
                {spec(3, DType::f32, Addressing::table, Layout::kv), 4, {2, 2}},
                {l2, 3, {1, 2}}};
      }
      case Suite::threads:
        return thread_samples();
      case Suite::multi_gpu:
        // NOTE: K = 32 with the kv layout needs more than 48 KiB of shared memory: the opt-in
        // attribute is per device, so this also checks that Jit::kernel prepares each device.
        return {{spec(32, DType::f32, Addressing::strided, Layout::kv), 3, {2, 4}},
                {spec(4, DType::bf16), 3, {2, 4}},
                {spec(5, DType::f16, Addressing::table), 3, {2, 4}}};
      case Suite::c_api: {
        GdnVerifySpec l2 = spec(3, DType::f16, Addressing::table, Layout::kv);
        l2.l2norm_qk = true;
        GdnVerifySpec gated = spec(2, DType::f32, Addressing::slot, Layout::vk, DType::bf16);
        gated.fused_gating = true;
        return {{spec(4, DType::bf16), 3, {2, 4}}, {l2, 3, {1, 2}}, {gated, 3, {2, 2}}};
      }
      case Suite::numbers:
        return number_samples();
      case Suite::sanitizer: {
        GdnVerifySpec all = spec(4, DType::f16, Addressing::slot);
        all.l2norm_qk = true;
        all.fused_gating = true;
        return {{spec(3, DType::bf16), 3, {1, 2}},
                {spec(2, DType::f32, Addressing::table, Layout::kv), 3, {1, 2}},
                {all, 3, {1, 2}}};
      }
    }
    return {};
  }

  std::unique_ptr<FamilyLaunch> make_launch(const Sample& sample,
                                            const RigOptions& options) const override {
    return make_gdn_verify_launch(sample, options);
  }

 private:
  // Both forms (vk in turn, kv in the WY form), each with l2norm and raw gates, and with fused
  // gating without l2norm; f32 and bf16 io (f16 cannot hold the 1e20 rows), a 16-bit state, dk
  // 64 (two q/k rows per warp), K = 1, odd batches.
  static std::vector<Sample> number_samples() {
    const auto with = [](GdnVerifySpec s, bool l2norm, bool gating, int dk = 128) {
      s.l2norm_qk = l2norm;
      s.fused_gating = gating;
      s.dk = dk;
      return s;
    };
    constexpr Layout vk = Layout::vk;
    constexpr Layout kv = Layout::kv;
    return {
        {with(spec(4, DType::f32, Addressing::strided, vk), true, false), 3, {2, 4}, true},
        {with(spec(3, DType::bf16, Addressing::table, vk, DType::bf16), false, true), 5, {1, 2}},
        {with(spec(1, DType::bf16, Addressing::slot, vk), true, true), 3, {1, 2}},
        {with(spec(3, DType::f32, Addressing::strided, vk), true, false, 64), 3, {2, 4}},
        {with(spec(4, DType::f32, Addressing::slot, kv), true, false), 3, {2, 4}},
        {with(spec(5, DType::bf16, Addressing::strided, kv), false, true), 5, {2, 2}, true},
        {with(spec(2, DType::bf16, Addressing::table, kv, DType::bf16), true, false), 3, {1, 2}},
    };
  }

  // Every layout and state dtype at K 1..32 on three shapes, strided (the suite runs each with
  // table and slot addressing too). NOTE: HV=32 only up to K=8 (its state volume grows with
  // K); padded batch 3 keeps the padded-sequence and skipped-state cases at every K.
  static std::vector<Sample> addressing_samples() {
    std::vector<Sample> list;
    for (const Layout layout : {Layout::vk, Layout::kv}) {
      for (const DType state : {DType::f32, DType::bf16}) {
        for (const int k : {1, 2, 3, 4, 8, 16, 17, 32}) {
          const Sample shapes[] = {
              {{}, 3, k <= 8 ? std::array{16, 32} : std::array{4, 8}, true},
              {{}, 8, {2, 4}, false},
              {{}, 1, {4, 4}, true},
          };
          for (Sample s : shapes) {
            s.spec = spec(k, DType::bf16, Addressing::strided, layout, state);
            list.push_back(s);
          }
        }
      }
    }
    return list;
  }

  // Twelve distinct variants across K, io dtype, layout, addressing and the l2norm option.
  static std::vector<Sample> thread_samples() {
    constexpr Addressing kModes[] = {Addressing::strided, Addressing::table, Addressing::slot};
    constexpr int kKs[] = {1, 2, 3, 4, 5, 8};
    constexpr DType kIos[] = {DType::f32, DType::f16, DType::bf16};
    std::set<GdnVerifySpec> pool;
    for (int i = 0; pool.size() < 12; ++i) {
      GdnVerifySpec s = spec(kKs[i % 6], kIos[i % 3], kModes[(i / 2) % 3],
                             (i / 3) % 2 == 0 ? Layout::vk : Layout::kv);
      s.l2norm_qk = i % 5 == 0;
      pool.insert(s);
    }
    std::vector<Sample> list;
    for (const GdnVerifySpec& s : pool) list.push_back({s, 3, {2, 4}});
    return list;
  }
};

}  // namespace

template <>
const FamilyCase& family_case<GdnVerifySpec>() {
  static const GdnVerifyCase instance;
  return instance;
}

}  // namespace wyjit::test::conformance
