// SPDX-License-Identifier: Apache-2.0
// CPU tests of the kernels' division by a launch-fixed divisor (common/fast_div.cuh), which
// splits block indices into (sequence, value head) and value heads into key heads: equal to
// integer division for every divisor up to 4096 over numerators at the edges and at random, and
// for large divisors up to 2^31 - 1.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "common/fast_div.cuh"

using wyjit_kernels::FastDiv;
using wyjit_kernels::make_fast_div;

namespace {

void check_divisor(int d, std::mt19937& rng) {
  const FastDiv f = make_fast_div(d);
  REQUIRE(f.divisor == d);
  const std::int64_t dd = d;
  std::vector<std::int64_t> wide = {0,      1,          dd - 1,     dd,
                                    dd + 1, 2147483647, 2147483646, 2147483647 - dd};
  for (std::int64_t q : {1, 2, 3, 1000, 65535, 65536, 1 << 20}) {
    for (std::int64_t e : {-1, 0, 1}) wide.push_back(q * dd + e);
  }
  std::uniform_int_distribution<int> any(0, 2147483647);
  for (int i = 0; i < 64; ++i) wide.push_back(any(rng));
  std::vector<int> ns;
  for (std::int64_t n : wide) {
    if (n >= 0 && n <= 2147483647) ns.push_back(static_cast<int>(n));
  }
  for (int n : ns) {
    INFO("n = " << n << ", d = " << d);
    REQUIRE(f.div(n) == n / d);
    REQUIRE(f.mod(n) == n % d);
  }
}

}  // namespace

TEST_CASE("fast division equals integer division for divisors 1..4096", "[fast_div]") {
  std::mt19937 rng(12345);
  for (int d = 1; d <= 4096; ++d) check_divisor(d, rng);
}

TEST_CASE("fast division equals integer division for large divisors", "[fast_div]") {
  std::mt19937 rng(777);
  for (int d : {4097, 65535, 65536, 65537, 1 << 24, (1 << 30) - 1, 1 << 30, (1 << 30) + 1,
                2147483646, 2147483647}) {
    check_divisor(d, rng);
  }
  std::uniform_int_distribution<int> any(1, 2147483647);
  for (int i = 0; i < 2000; ++i) check_divisor(any(rng), rng);
}

TEST_CASE("fast division of every block index of a small grid", "[fast_div]") {
  for (int d : {1, 2, 3, 7, 8, 12, 32, 48, 64}) {
    const FastDiv f = make_fast_div(d);
    for (int n = 0; n < 1 << 16; ++n) REQUIRE(f.div(n) == n / d);
  }
}
