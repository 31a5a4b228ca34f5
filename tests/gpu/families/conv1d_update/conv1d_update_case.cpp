// SPDX-License-Identifier: Apache-2.0
// conv1d_update's conformance case: the samples each shared suite runs; the launch is
// conv1d_update_launch.cpp.
#include <memory>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/families/conv1d_update/conv1d_update_launch.hpp"
#include "wyjit/conv1d_update.hpp"

namespace wyjit::test::conformance {

namespace {

// The options follow K, as in the family's own tests, so that suites reuse their variants.
Conv1dUpdateSpec conv_spec(int k, DType io, Rollback rollback, Addressing addressing) {
  return {.k = k,
          .io = io,
          .weight = k % 2 == 0 ? DType::f32 : io,
          .rollback = rollback,
          .addressing = addressing,
          .bias = k % 2 == 1,
          .silu = k % 3 != 2};
}

constexpr Rollback kInter = Rollback::intermediate;
constexpr Rollback kWindow = Rollback::window;
constexpr Addressing kStrided = Addressing::strided;
constexpr Addressing kTable = Addressing::table;
constexpr Addressing kSlot = Addressing::slot;

class Conv1dUpdateCase final : public FamilyCase {
 public:
  std::string_view name() const override { return "conv1d_update"; }

  std::vector<Sample> samples(Suite suite) const override {
    switch (suite) {
      case Suite::addressing:
        return addressing_samples();
      case Suite::padding:
        return {{conv_spec(3, DType::f32, kInter, kStrided), 3, {37, 0}},
                {conv_spec(4, DType::bf16, kWindow, kStrided), 5, {1000, 1}},
                {conv_spec(1, DType::bf16, kInter, kStrided), 3, {37, 0}},
                {conv_spec(4, DType::f16, kInter, kTable), 3, {37, 1}},
                {conv_spec(2, DType::bf16, kWindow, kTable), 4, {40, 0}},
                {conv_spec(2, DType::bf16, kInter, kSlot), 3, {8191, 0}},
                {conv_spec(1, DType::f32, kWindow, kSlot), 3, {37, 1}}};
      case Suite::graphs:
        return {{conv_spec(4, DType::bf16, kWindow, kStrided), 3, {37, 0}},
                {conv_spec(3, DType::f32, kInter, kStrided), 2, {1000, 1}},
                {conv_spec(5, DType::f16, kInter, kTable), 3, {37, 1}},
                {conv_spec(2, DType::bf16, kWindow, kSlot), 4, {1000, 0}},
                {conv_spec(3, DType::f32, kWindow, kTable), 3, {37, 0}},
                {conv_spec(4, DType::bf16, kInter, kSlot), 3, {40, 1}}};
      case Suite::threads:
        return thread_samples();
      case Suite::multi_gpu:
        return {{conv_spec(4, DType::bf16, kWindow, kStrided), 3, {8192, 0}},
                {conv_spec(17, DType::f32, kInter, kTable), 3, {1000, 1}},
                {conv_spec(32, DType::f16, kWindow, kSlot), 2, {37, 0}}};
      case Suite::c_api:
        return {{conv_spec(4, DType::bf16, kInter, kStrided), 3, {37, 0}},
                {conv_spec(3, DType::f16, kWindow, kTable), 3, {1000, 1}},
                {conv_spec(2, DType::f32, kInter, kSlot), 3, {37, 0}},
                {conv_spec(5, DType::bf16, kWindow, kSlot), 3, {40, 0}}};
      case Suite::numbers:
        // Both forms, every io dtype, bias and SiLU (K odd: bias; K % 3 != 2: SiLU), both tile
        // shapes; the launch modes are the wide and narrow kernels.
        return {{conv_spec(3, DType::f32, kInter, kStrided), 3, {37, 0}, true},
                {conv_spec(4, DType::bf16, kWindow, kSlot), 5, {1000, 1}},
                {conv_spec(5, DType::f16, kInter, kTable), 3, {37, 1}},
                {conv_spec(1, DType::bf16, kWindow, kStrided), 3, {40, 0}}};
      case Suite::sanitizer:
        return {{conv_spec(3, DType::bf16, kInter, kStrided), 3, {37, 0}},
                {conv_spec(2, DType::f32, kWindow, kStrided), 5, {40, 1}},
                {conv_spec(4, DType::f16, kInter, kTable), 3, {37, 0}},
                {conv_spec(3, DType::bf16, kWindow, kSlot), 3, {37, 1}}};
    }
    return {};
  }

  std::unique_ptr<FamilyLaunch> make_launch(const Sample& sample,
                                            const RigOptions& options) const override {
    return make_conv1d_update_launch(sample, options);
  }

 private:
  // Both forms at K 1..32, strided (the suite runs each with table and slot addressing too), on
  // shapes that leave a partial block of channels (8191, 1000, 37) or none (8192), in both
  // shapes of the state tiles.
  static std::vector<Sample> addressing_samples() {
    struct Shape {
      int batch, channels;
      bool padded;
    };
    constexpr Shape kShapes[] = {
        {3, 8191, true},  {5, 1000, true},  {1, 37, false},
        {4, 8192, false}, {2, 1000, false}, {3, 37, true},
    };
    constexpr DType kIo[] = {DType::bf16, DType::f16, DType::f32};
    std::vector<Sample> list;
    int n = 0;
    for (const Rollback rollback : {kInter, kWindow}) {
      for (const int k : {1, 2, 3, 4, 5, 8, 16, 17, 32}) {
        const Shape& s = kShapes[n % 6];
        list.push_back(
            {conv_spec(k, kIo[n % 3], rollback, kStrided), s.batch, {s.channels, n % 2}, s.padded});
        ++n;
      }
    }
    return list;
  }

  // Twelve distinct variants: K x rollback form, with io dtype and addressing varying along.
  static std::vector<Sample> thread_samples() {
    constexpr Addressing kModes[] = {kStrided, kTable, kSlot};
    constexpr DType kIos[] = {DType::f32, DType::f16, DType::bf16};
    std::vector<Sample> list;
    int n = 0;
    for (const int k : {1, 2, 3, 4, 5, 8}) {
      for (const Rollback rollback : {kInter, kWindow}) {
        const int channels = n % 2 == 0 ? 37 : 1000;
        const int contiguous = n % 3 == 0 ? 1 : 0;
        list.push_back(
            {conv_spec(k, kIos[n % 3], rollback, kModes[(n / 2) % 3]), 3, {channels, contiguous}});
        ++n;
      }
    }
    return list;
  }
};

}  // namespace

template <>
const FamilyCase& family_case<Conv1dUpdateSpec>() {
  static const Conv1dUpdateCase instance;
  return instance;
}

}  // namespace wyjit::test::conformance
