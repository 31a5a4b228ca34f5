// SPDX-License-Identifier: Apache-2.0
// Nearly fp32-accurate products on tensor cores (sm_80 and later): a float as the sum of two
// TF32 values, big + small, and one m16n8k8 TF32 tile product with fp32 accumulation. Three
// products (small*big, big*small, big*big; small*small is below 2^-20) give each product within
// about 3 * 2^-20 of its fp32 value ("3xTF32"), where one TF32 product is off by up to 2^-10.
#pragma once

namespace wyjit_kernels {

#if __CUDA_ARCH__ >= 800

/// x = big + small with big = x truncated to TF32 (its low 13 mantissa bits cleared) and small
/// = x - big, exact in fp32. The tensor cores read a TF32 operand's top 19 bits and ignore the
/// rest, so small enters as its own truncation: |x - big - small_tf32| < 2^-20 |x|, for two
/// instructions (cvt.rna.tf32.f32 is four on sm_90, with its NaN and infinity guards).
struct Tf32Pair {
  unsigned big;
  unsigned small;
};

__device__ __forceinline__ Tf32Pair tf32_split(float x) {
  const unsigned big = __float_as_uint(x) & 0xffffe000u;
  return Tf32Pair{big, __float_as_uint(x - __uint_as_float(big))};
}

/// d += A B for one warp: A 16x8 (a0: row g col t, a1: row g+8 col t, a2: row g col t+4, a3: row
/// g+8 col t+4), B 8x8 (b0: row t col g, b1: row t+4 col g), d 16x8 (d0, d1: row g cols 2t,
/// 2t+1; d2, d3: row g+8), with g = lane / 4, t = lane % 4.
__device__ __forceinline__ void mma_tf32_m16n8k8(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                 unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// d += A B in 3xTF32: A and B given as their big and small parts.
__device__ __forceinline__ void mma_3xtf32_m16n8k8(float (&d)[4], const unsigned (&a_big)[4],
                                                   const unsigned (&a_small)[4], unsigned b0_big,
                                                   unsigned b1_big, unsigned b0_small,
                                                   unsigned b1_small) {
  // NOTE: the small terms first, so that they are not lost against the big one's sum.
  mma_tf32_m16n8k8(d, a_small, b0_big, b1_big);
  mma_tf32_m16n8k8(d, a_big, b0_small, b1_small);
  mma_tf32_m16n8k8(d, a_big, b0_big, b1_big);
}

/// d += A B with A exact in TF32 (a bf16 value: 8 mantissa bits of TF32's 10, so its small part
/// is 0) and B as big and small parts: two products instead of three, the same accuracy.
__device__ __forceinline__ void mma_2xtf32_m16n8k8(float (&d)[4], const unsigned (&a)[4],
                                                   unsigned b0_big, unsigned b1_big,
                                                   unsigned b0_small, unsigned b1_small) {
  mma_tf32_m16n8k8(d, a, b0_small, b1_small);
  mma_tf32_m16n8k8(d, a, b0_big, b1_big);
}

#endif  // __CUDA_ARCH__ >= 800

}  // namespace wyjit_kernels
