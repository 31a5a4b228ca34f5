// SPDX-License-Identifier: Apache-2.0
// gdn_verify against the double-precision sequential reference: every K, io dtype, layout,
// batch 1/3/8, HK = HV and HK=16/HV=32, dense and padded strides.
#include <catch2/catch.hpp>

#include "gpu/gdn_verify_case.hpp"

namespace wyjit::test {

namespace {

void check_case(const VerifyCase& c) {
  INFO(describe(c));
  for (const CheckedTensor& t : run_verify_case(c)) {
    INFO(t.comparison.describe(t.name) << " tolerance " << t.tolerance);
    CHECK(t.passed());
  }
}

// batch x heads x padding: the six combinations, padding alternating.
struct Shape {
  int batch, hk, hv;
  bool padded;
};
constexpr Shape kShapes[] = {
    {1, 4, 4, true},  {3, 16, 32, true}, {8, 2, 2, false},
    {3, 4, 4, false}, {8, 16, 32, true}, {1, 16, 32, false},
};

void check_all_k(DType io, Layout layout) {
  std::vector<int> ks;
  for (int k = 1; k <= 17; ++k) ks.push_back(k);
  ks.push_back(32);
  std::uint64_t seed =
      1000 * static_cast<std::uint64_t>(io) + 100 * static_cast<std::uint64_t>(layout);
  for (const int k : ks) {
    for (const Shape& shape : kShapes) {
      KernelSpec spec{.k = k, .io = io, .layout = layout};
      check_case({spec, shape.batch, shape.hk, shape.hv, shape.padded, ++seed});
    }
  }
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
  for (const Layout layout : {Layout::vk, Layout::kv}) {
    for (const auto& [dk, dv] :
         {std::pair{64, 64}, std::pair{256, 256}, std::pair{128, 64}, std::pair{64, 256}}) {
      for (const int k : {1, 4, 9}) {
        for (const bool l2norm : {false, true}) {
          KernelSpec spec{
              .k = k, .io = DType::bf16, .layout = layout, .dk = dk, .dv = dv, .l2norm_qk = l2norm};
          check_case({spec, 3, 2, 4, true, ++seed});
        }
      }
    }
  }
}

}  // namespace wyjit::test
