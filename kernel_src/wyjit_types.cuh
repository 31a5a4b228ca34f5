// SPDX-License-Identifier: Apache-2.0
// Element types and conversions for kernels. Hermetic: no toolkit headers, so an NVRTC compile
// needs nothing but this folder. Arithmetic is always fp32; these convert at load and store.
#pragma once

namespace wyjit_kernels {

struct Bf16 {
  unsigned short bits;
};
struct Half {
  unsigned short bits;
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(Bf16 x) {
  return __uint_as_float(static_cast<unsigned>(x.bits) << 16);
}
__device__ __forceinline__ float to_float(Half x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}

template <typename T>
__device__ __forceinline__ T from_float(float x);

template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ Bf16 from_float<Bf16>(float x) {
  // Round to nearest even; NaN stays a quiet NaN.
  unsigned u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return Bf16{static_cast<unsigned short>((u >> 16) | 0x40u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return Bf16{static_cast<unsigned short>(u >> 16)};
}
template <>
__device__ __forceinline__ Half from_float<Half>(float x) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return Half{h};
}

// Four consecutive elements, aligned so that one load or store moves them all
// (16 bytes for fp32, 8 for the 16-bit types).
template <typename T>
struct alignas(4 * sizeof(T)) Pack4 {
  T e[4];
};

/// Loads 4 consecutive elements at `p` (aligned to 4 elements) as floats.
template <typename T>
__device__ __forceinline__ void load4(const T* p, float (&out)[4]) {
  const Pack4<T> v = *reinterpret_cast<const Pack4<T>*>(p);
#pragma unroll
  for (int i = 0; i < 4; ++i) out[i] = to_float(v.e[i]);
}

/// Stores 4 floats as consecutive elements at `p` (aligned to 4 elements), rounding once.
template <typename T>
__device__ __forceinline__ void store4(T* p, const float (&in)[4]) {
  Pack4<T> v;
#pragma unroll
  for (int i = 0; i < 4; ++i) v.e[i] = from_float<T>(in[i]);
  *reinterpret_cast<Pack4<T>*>(p) = v;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace wyjit_kernels
