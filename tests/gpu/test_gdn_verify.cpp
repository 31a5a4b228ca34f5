// SPDX-License-Identifier: Apache-2.0
// gdn_verify against the double-precision sequential reference: every K, io dtype, layout,
// batch 1/3/8, HK = HV and HK=16/HV=32, dense and padded strides; then every addressing mode,
// state dtype and option.
#include <catch2/catch.hpp>
#include <span>

#include "gpu/gdn_verify_case.hpp"
#include "gpu/gpu_support.hpp"

namespace wyjit::test {

namespace {

VerifyResult check_case(const VerifyCase& c) {
  INFO(describe(c));
  VerifyResult result = run_verify_case(c);
  for (const CheckedTensor& t : result.checks) {
    INFO(t.comparison.describe(t.name) << " tolerance " << t.tolerance);
    CHECK(t.passed());
  }
  return result;
}

// Table and slot addressing must give the same bytes as strided addressing on the same data.
void check_same_bytes_as_strided(const VerifyCase& c) {
  const VerifyResult got = check_case(c);
  VerifyCase strided = c;
  strided.spec.addressing = Addressing::strided;
  const VerifyResult want = run_verify_case(strided);
  INFO(describe(c) << " vs strided");
  std::size_t compared = 0;
  for (std::size_t r = 0; r < got.out_rows.size(); ++r) {
    if (got.out_rows[r].empty()) continue;
    CHECK(got.out_rows[r] == want.out_rows[r]);
    ++compared;
  }
  for (std::size_t x = 0; x < got.state_bytes.size(); ++x) {
    if (got.state_bytes[x].empty()) continue;
    CHECK(got.state_bytes[x] == want.state_bytes[x]);
    ++compared;
  }
  CHECK(compared > 0);
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
void check_cases(const std::vector<VerifyCase>& cases, bool against_strided = false) {
  std::vector<KernelSpec> specs;
  for (const VerifyCase& c : cases) {
    specs.push_back(c.spec);
    if (against_strided) {
      specs.push_back(c.spec);
      specs.back().addressing = Addressing::strided;
    }
  }
  prewarm(specs);
  for (const VerifyCase& c : cases) {
    if (against_strided) {
      check_same_bytes_as_strided(c);
    } else {
      check_case(c);
    }
  }
}

void check_all_k(DType io, Layout layout) {
  std::uint64_t seed =
      1000 * static_cast<std::uint64_t>(io) + 100 * static_cast<std::uint64_t>(layout);
  std::vector<VerifyCase> cases;
  for (const int k : every_k()) {
    for (const Shape& shape : k <= 4 ? std::span<const Shape>(kShapes) : kShapesLargeK) {
      KernelSpec spec{.k = k, .io = io, .layout = layout};
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
          KernelSpec spec{
              .k = k, .io = DType::bf16, .layout = layout, .dk = dk, .dv = dv, .l2norm_qk = l2norm};
          cases.push_back({spec, 3, 2, 4, true, ++seed});
        }
      }
    }
  }
  check_cases(cases);
}

TEST_CASE("gdn_verify table and slot addressing match strided bit for bit", "[gpu][gdn_verify]") {
  std::uint64_t seed = 5000;
  std::vector<VerifyCase> cases;
  for (const Addressing addressing : {Addressing::table, Addressing::slot}) {
    for (const Layout layout : {Layout::vk, Layout::kv}) {
      for (const DType state : {DType::f32, DType::bf16}) {
        for (const int k : {1, 2, 3, 4, 8, 16, 17, 32}) {
          // NOTE: HV=32 only up to K=8 (its state volume grows with K); padded batch 3 keeps
          // the padded-sequence and skipped-state cases at every K.
          const Shape wide = k <= 8 ? Shape{3, 16, 32, true} : Shape{3, 4, 8, true};
          for (const Shape& shape : {wide, Shape{8, 2, 4, false}, Shape{1, 4, 4, true}}) {
            KernelSpec spec{.k = k,
                            .io = DType::bf16,
                            .state = state,
                            .addressing = addressing,
                            .layout = layout};
            cases.push_back({spec, shape.batch, shape.hk, shape.hv, shape.padded, ++seed});
          }
        }
      }
    }
  }
  check_cases(cases, true);
}

TEST_CASE("gdn_verify state dtypes f16 and bf16 in every addressing mode", "[gpu][gdn_verify]") {
  std::uint64_t seed = 7000;
  std::vector<VerifyCase> cases;
  for (const DType state : {DType::f16, DType::bf16}) {
    for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
      for (const Layout layout : {Layout::vk, Layout::kv}) {
        for (const DType io : {DType::f32, DType::bf16, DType::f16}) {
          for (const int k : {1, 5, 16}) {
            KernelSpec spec{
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
          KernelSpec spec{.k = k,
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
