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

/// Whether T is Bf16 (no <type_traits> here).
template <typename T>
struct IsBf16 {
  static constexpr bool value = false;
};
template <>
struct IsBf16<Bf16> {
  static constexpr bool value = true;
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

/// Two floats as one word of two 16-bit values (`lo` in bits 0..15), each rounded to nearest
/// even like from_float: one cvt for both on sm_80 and later.
template <typename T>
__device__ __forceinline__ unsigned pack2_bits(float lo, float hi);

template <>
__device__ __forceinline__ unsigned pack2_bits<Bf16>(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return from_float<Bf16>(lo).bits | static_cast<unsigned>(from_float<Bf16>(hi).bits) << 16;
#endif
}
template <>
__device__ __forceinline__ unsigned pack2_bits<Half>(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
#else
  return from_float<Half>(lo).bits | static_cast<unsigned>(from_float<Half>(hi).bits) << 16;
#endif
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

/// store4 to global memory as one vector store instruction, whatever the caller's unrolling.
// NOTE: written out in PTX because, stored as a Pack4 struct inside an unrolled loop, the
// compiler split the store into 4 scalar ones (gdn_verify K <= 3: 3x the L2 sectors per state
// write, measured with ncu on the H200).
template <typename T>
__device__ __forceinline__ void store4_global(T* p, const float (&in)[4]) {
  if constexpr (sizeof(T) == 4) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(in[0]), "f"(in[1]),
                 "f"(in[2]), "f"(in[3])
                 : "memory");
  } else {
    const unsigned lo = static_cast<unsigned>(from_float<T>(in[0]).bits) |
                        (static_cast<unsigned>(from_float<T>(in[1]).bits) << 16);
    const unsigned hi = static_cast<unsigned>(from_float<T>(in[2]).bits) |
                        (static_cast<unsigned>(from_float<T>(in[3]).bits) << 16);
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(lo), "r"(hi) : "memory");
  }
}

/// 16 bytes from global to shared memory without passing through registers (cp.async on sm_80
/// and later: every copy of a thread is in flight at once; a plain load and store before).
/// copy16_wait() waits for this thread's copies.
__device__ __forceinline__ void copy16_async(void* smem, const void* gmem) {
#if __CUDA_ARCH__ >= 800
  unsigned s;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#else
  struct alignas(16) Bytes16 {
    unsigned w[4];
  };
  *static_cast<Bytes16*>(smem) = *static_cast<const Bytes16*>(gmem);
#endif
}
__device__ __forceinline__ void copy16_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace wyjit_kernels
