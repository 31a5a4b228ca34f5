// SPDX-License-Identifier: Apache-2.0
// Division of a non-negative int by a run-time divisor fixed for a launch, as one widening
// multiply and a shift: the host computes the multiplier once per launch, the kernel divides
// block indices by head counts with it instead of the ~20-instruction integer division. Plain
// C++ with no CUDA keywords outside the device function: the host includes this file.
#pragma once

#include "common/host_device.cuh"

namespace wyjit_kernels {

/// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 (Granlund and Montgomery): with 2^l >= d and
/// m = ceil(2^(31+l) / d), m d - 2^(31+l) < d, so floor(n m / 2^(31+l)) = floor(n / d) for every
/// n below 2^31; m < 2^32 and n m < 2^63.
struct FastDiv {
  unsigned long long mul;
  int shift;
  int divisor;

  WYJIT_HOST_DEVICE int div(int n) const {
    return static_cast<int>((static_cast<unsigned long long>(static_cast<unsigned>(n)) * mul) >>
                            shift);
  }
  WYJIT_HOST_DEVICE int mod(int n) const { return n - div(n) * divisor; }
};

/// The FastDiv of d (1 <= d < 2^31).
WYJIT_HOST_DEVICE constexpr FastDiv make_fast_div(int d) {
  int l = 0;
  while ((1LL << l) < d) ++l;
  const unsigned long long two_k = 1ULL << (31 + l);
  const unsigned long long ud = static_cast<unsigned long long>(d);
  return FastDiv{(two_k + ud - 1) / ud, 31 + l, d};
}

}  // namespace wyjit_kernels
