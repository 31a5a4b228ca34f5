// SPDX-License-Identifier: Apache-2.0
// conv1d_update against the double-precision reference: every K (1..17 and 32), io dtype,
// rollback form and addressing mode on odd channel counts with and without padding, in both
// shapes of the state tiles; every width with every weight dtype and option; then runs of 20
// steps with random accepted counts, where the window form must equal replaying the accepted
// tokens one by one. Every case runs on both kernel paths (wide and narrow).
#include <catch2/catch.hpp>
#include <vector>

#include "gpu/families/conv1d_update/rollback_case.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test {

namespace {

constexpr Addressing kAddressings[] = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr Rollback kRollbacks[] = {Rollback::intermediate, Rollback::window};

// The options follow K, so that the step runs reuse the variants of the K sweep.
Conv1dUpdateSpec conv_spec(int k, DType io, Rollback rollback, Addressing addressing) {
  Conv1dUpdateSpec s{.k = k, .io = io, .addressing = addressing};
  s.rollback = rollback;
  s.weight = k % 2 == 0 ? DType::f32 : io;
  s.bias = k % 2 == 1;
  s.silu = k % 3 != 2;
  return s;
}

struct Shape {
  int batch, channels;
  bool padded;
};
// NOTE: 8191, 1000 and 37 channels leave a partial block of channels; 8192 takes the kernel's
// all-vector path for every block.
constexpr Shape kShapes[] = {
    {3, 8191, true},  {5, 1000, true},  {1, 37, false},
    {4, 8192, false}, {2, 1000, false}, {3, 37, true},
};

std::vector<int> every_k() {
  std::vector<int> ks;
  for (int k = 1; k <= 17; ++k) ks.push_back(k);
  ks.push_back(32);
  return ks;
}

void check(const std::string& what, const std::vector<CheckedTensor>& checks) {
  INFO(what);
  CHECK(!checks.empty());
  for (const CheckedTensor& t : checks) {
    INFO(t.comparison.describe(t.name) << " tolerance " << t.tolerance);
    CHECK(t.passed());
  }
}

// Compiles every case's variant on all cores first, then runs the cases one by one, each on
// both kernel paths (the automatic choice is one of them).
void check_cases(const std::vector<Conv1dCase>& cases, int steps) {
  std::vector<KernelSpec> specs;
  for (const Conv1dCase& c : cases) specs.push_back(c.spec);
  prewarm(specs);
  for (Conv1dCase c : cases) {
    for (const std::int32_t path : {WYJIT_CONV1D_PATH_WIDE, WYJIT_CONV1D_PATH_NARROW}) {
      c.path = path;
      check(describe(c) + (steps > 1 ? " steps=" + std::to_string(steps) : ""),
            steps == 1 ? run_conv1d_case(c) : run_conv1d_steps(c, steps));
    }
  }
}

void check_every_k(DType io) {
  std::uint64_t seed = 100000 * (1 + static_cast<std::uint64_t>(io));
  std::vector<Conv1dCase> cases;
  std::size_t shape = 0;
  for (const int k : every_k()) {
    for (const Rollback rollback : kRollbacks) {
      for (const Addressing addressing : kAddressings) {
        // Two shapes per variant, three apart (one padded, one dense), one with each shape of
        // the state tiles.
        for (const std::size_t pick : {shape, shape + 3}) {
          const Shape& s = kShapes[pick % std::size(kShapes)];
          cases.push_back({conv_spec(k, io, rollback, addressing), s.batch, s.channels, s.padded,
                           ++seed, pick % 2 == 0});
        }
        ++shape;
      }
    }
  }
  check_cases(cases, 1);
}

}  // namespace

TEST_CASE("conv1d_update io f32: every K, rollback form and addressing",
          "[gpu][conv1d][conv1d_update]") {
  check_every_k(DType::f32);
}
TEST_CASE("conv1d_update io f16: every K, rollback form and addressing",
          "[gpu][conv1d][conv1d_update]") {
  check_every_k(DType::f16);
}
TEST_CASE("conv1d_update io bf16: every K, rollback form and addressing",
          "[gpu][conv1d][conv1d_update]") {
  check_every_k(DType::bf16);
}

TEST_CASE("conv1d_update widths 2..8 with every weight dtype, bias and silu",
          "[gpu][conv1d][conv1d_update]") {
  constexpr DType kIo[] = {DType::bf16, DType::f16, DType::f32};
  constexpr int kK[] = {1, 3, 8};
  std::uint64_t seed = 500000;
  std::vector<Conv1dCase> cases;
  int n = 0;
  for (int width = 2; width <= 8; ++width) {
    for (int options = 0; options < 8; ++options, ++n) {
      const DType io = kIo[n % 3];
      Conv1dUpdateSpec s{.k = kK[(n / 3) % 3], .io = io};
      s.addressing = kAddressings[n % 3];
      s.width = width;
      s.weight = (options & 1) != 0 ? DType::f32 : io;
      s.bias = (options & 2) != 0;
      s.silu = (options & 4) != 0;
      s.rollback = kRollbacks[(n / 2) % 2];
      cases.push_back({s, 3, n % 2 == 0 ? 1000 : 37, n % 4 < 2, ++seed, n % 3 == 0});
    }
  }
  check_cases(cases, 1);
}

// NOTE: the launch gives a thread several sub-chunks of tokens (its token loop carries the window
// from one to the next) only when the batch has enough (sequence, channel group) pairs; the
// shapes above never do. 36 x 8192 bf16 channels (17 x 8192 fp32) is one thread per group,
// 9 x 8192 at K = 17 three sub-chunks a thread.
TEST_CASE("conv1d_update at large batch: one thread walks several sub-chunks",
          "[gpu][conv1d][conv1d_update]") {
  std::uint64_t seed = 900000;
  std::vector<Conv1dCase> cases;
  int n = 0;
  for (const Rollback rollback : kRollbacks) {
    for (const int k : {3, 4, 16, 17}) {
      for (const DType io : {DType::bf16, DType::f32}) {
        const int batch = io == DType::f32 ? 17 : (k == 17 ? 9 : 36);
        const Addressing addressing = kAddressings[n % 3];
        cases.push_back(
            {conv_spec(k, io, rollback, addressing), batch, 8192, n % 4 == 3, ++seed, n % 2 == 0});
        ++n;
      }
    }
  }
  check_cases(cases, 1);
}

TEST_CASE("conv1d_update over 20 steps with random accepted counts, every form and addressing",
          "[gpu][conv1d][conv1d_update]") {
  std::uint64_t seed = 700000;
  std::vector<Conv1dCase> cases;
  int n = 0;
  for (const Rollback rollback : kRollbacks) {
    for (const Addressing addressing : kAddressings) {
      for (const DType io : {DType::f32, DType::f16, DType::bf16}) {
        for (const int k : {1, 2, 3, 4, 8, 17}) {
          const int channels = n % 7 == 0 ? 8191 : (n % 2 == 0 ? 1000 : 37);
          cases.push_back({conv_spec(k, io, rollback, addressing), 3, channels, n % 3 == 0, ++seed,
                           n % 2 == 1});
          ++n;
        }
      }
    }
  }
  check_cases(cases, 20);
}

}  // namespace wyjit::test
