// SPDX-License-Identifier: Apache-2.0
// gdn_verify against the double-precision sequential reference: every K, io dtype, layout,
// batch 1/3/8, HK = HV and HK=16/HV=32, dense and padded strides; then every head dim, state
// dtype and option in every addressing mode. Each case runs on the family's conformance case
// (gdn_verify_case.cpp) through the shared rig: outputs and every state checked, everything
// else unchanged, padded sequences and a skipped state with table and slot addressing. Table and
// slot addressing against strided, bit for bit, is the shared addressing suite.
#include <catch2/catch.hpp>
#include <span>

#include "gpu/conformance/launch_rig.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

namespace {

using conformance::LaunchRig;
using conformance::Sample;

/// One launch. `padded`: padding between rows, sequences and states (poisoned, checked
/// untouched); with table or slot addressing and batch >= 3 it also pads sequence 1 and skips
/// the first state of sequence 0.
struct VerifyCase {
  GdnVerifySpec spec;
  int batch = 1;
  int hk = 1;
  int hv = 1;
  bool padded = false;
  std::uint64_t seed = 1;
};

void check_case(const VerifyCase& c) {
  make_context_current();
  const conformance::FamilyCase& family = conformance::family_case<GdnVerifySpec>();
  LaunchRig rig(family, Sample{c.spec, c.batch, {c.hk, c.hv}, c.padded}, {.padded = c.padded});
  const conformance::RigResult result = conformance::run_launch(
      rig, test_jit().kernel(c.spec), c.seed, conformance::Padding{.middle = c.padded}, nullptr);
  conformance::check_result(rig, result, "one launch");
}

// batch x heads x padding: batch 1, 3 and 8, each with HK = HV and with HK=16/HV=32, padding
// alternating. NOTE: batch 8 x HV 32 moves 8x more state than the rest; above K = 4 it becomes
// batch 8 x HV 8 (HK 4) so that the suite fits a GPU session, every K still seeing GVA at batch 8.
struct Shape {
  int batch, hk, hv;
  bool padded;
};
constexpr Shape kShapes[] = {
    {1, 4, 4, true},  {3, 16, 32, true}, {8, 2, 2, false},
    {3, 4, 4, false}, {8, 16, 32, true}, {1, 16, 32, false},
};
constexpr Shape kShapesLargeK[] = {
    {1, 4, 4, true},  {3, 16, 32, true}, {8, 2, 2, false},
    {3, 4, 4, false}, {8, 4, 8, true},   {1, 16, 32, false},
};

std::vector<int> every_k() {
  std::vector<int> ks;
  for (int k = 1; k <= 17; ++k) ks.push_back(k);
  ks.push_back(32);
  return ks;
}

// Compiles every case's variant on all cores first, then checks the cases one by one.
void check_cases(const std::vector<VerifyCase>& cases) {
  std::vector<KernelSpec> specs;
  for (const VerifyCase& c : cases) specs.push_back(c.spec);
  prewarm(specs);
  for (const VerifyCase& c : cases) check_case(c);
}

void check_all_k(DType io, Layout layout) {
  std::uint64_t seed =
      1000 * static_cast<std::uint64_t>(io) + 100 * static_cast<std::uint64_t>(layout);
  std::vector<VerifyCase> cases;
  for (const int k : every_k()) {
    for (const Shape& shape : k <= 4 ? std::span<const Shape>(kShapes) : kShapesLargeK) {
      GdnVerifySpec spec{.k = k, .io = io, .layout = layout};
      cases.push_back({spec, shape.batch, shape.hk, shape.hv, shape.padded, ++seed});
    }
  }
  check_cases(cases);
}

}  // namespace

TEST_CASE("gdn_verify io f32 layout vk", "[gpu][gdn_verify]") {
  check_all_k(DType::f32, Layout::vk);
}
TEST_CASE("gdn_verify io f32 layout kv", "[gpu][gdn_verify]") {
  check_all_k(DType::f32, Layout::kv);
}
TEST_CASE("gdn_verify io f16 layout vk", "[gpu][gdn_verify]") {
  check_all_k(DType::f16, Layout::vk);
}
TEST_CASE("gdn_verify io f16 layout kv", "[gpu][gdn_verify]") {
  check_all_k(DType::f16, Layout::kv);
}
TEST_CASE("gdn_verify io bf16 layout vk", "[gpu][gdn_verify]") {
  check_all_k(DType::bf16, Layout::vk);
}
TEST_CASE("gdn_verify io bf16 layout kv", "[gpu][gdn_verify]") {
  check_all_k(DType::bf16, Layout::kv);
}

TEST_CASE("gdn_verify head dims 64 128 256 with and without l2norm", "[gpu][gdn_verify]") {
  std::uint64_t seed = 77;
  std::vector<VerifyCase> cases;
  for (const Layout layout : {Layout::vk, Layout::kv}) {
    for (const auto& [dk, dv] :
         {std::pair{64, 64}, std::pair{256, 256}, std::pair{128, 64}, std::pair{64, 256}}) {
      for (const int k : {1, 4, 9, 32}) {
        for (const bool l2norm : {false, true}) {
          GdnVerifySpec spec{
              .k = k, .io = DType::bf16, .layout = layout, .dk = dk, .dv = dv, .l2norm_qk = l2norm};
          cases.push_back({spec, 3, 2, 4, true, ++seed});
        }
      }
    }
  }
  check_cases(cases);
}

TEST_CASE("gdn_verify state dtypes f16 and bf16 in every addressing mode", "[gpu][gdn_verify]") {
  std::uint64_t seed = 7000;
  std::vector<VerifyCase> cases;
  for (const DType state : {DType::f16, DType::bf16}) {
    for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
      for (const Layout layout : {Layout::vk, Layout::kv}) {
        for (const DType io : {DType::f32, DType::bf16, DType::f16}) {
          for (const int k : {1, 5, 16}) {
            GdnVerifySpec spec{
                .k = k, .io = io, .state = state, .addressing = addressing, .layout = layout};
            cases.push_back({spec, 3, 4, 8, true, ++seed});
          }
        }
      }
    }
  }
  check_cases(cases);
}

TEST_CASE("gdn_verify fused gating and l2norm in every addressing mode", "[gpu][gdn_verify]") {
  std::uint64_t seed = 9000;
  std::vector<VerifyCase> cases;
  for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
    for (const Layout layout : {Layout::vk, Layout::kv}) {
      for (const DType io : {DType::f32, DType::bf16}) {
        for (const int k : {1, 3, 8, 17}) {
          GdnVerifySpec spec{.k = k,
                             .io = io,
                             .addressing = addressing,
                             .layout = layout,
                             .l2norm_qk = true,
                             .fused_gating = true};
          cases.push_back({spec, 3, 16, 32, true, ++seed});
        }
      }
    }
  }
  check_cases(cases);
}

}  // namespace wyjit::test
