// SPDX-License-Identifier: Apache-2.0
// Sixteen-byte lanes for conv1d_update: a thread owns 16 bytes' worth of consecutive channels
// (8 for 16-bit types, 4 for fp32) and keeps every input as raw bits, so a conv state is a copy
// of registers and every global access is one 16-byte vector where the address allows it.
#pragma once

#include "common/types.cuh"

namespace wyjit_kernels {

/// 16 bytes of one tensor as raw words: element q is word q (fp32) or half q % 2 of word q / 2
/// (16-bit types, the lower half first).
struct alignas(16) Raw16 {
  unsigned w[4];
};

__device__ __forceinline__ unsigned raw_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned raw_bits(Bf16 x) { return x.bits; }
__device__ __forceinline__ unsigned raw_bits(Half x) { return x.bits; }

template <typename T>
__device__ __forceinline__ T from_raw(unsigned bits) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(bits);
  } else {
    return T{static_cast<unsigned short>(bits)};
  }
}

__device__ __forceinline__ float half_to_float(unsigned word, int hi, Bf16) {
  return __uint_as_float(hi ? word & 0xffff0000u : word << 16);
}
__device__ __forceinline__ float half_to_float(unsigned word, int hi, Half) {
  return to_float(Half{static_cast<unsigned short>(hi ? word >> 16 : word)});
}

/// Element q of the words `w` holding elements of type T, as a float.
template <typename T>
__device__ __forceinline__ float elem(const unsigned* w, int q) {
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w[q]);
  } else {
    return half_to_float(w[q / 2], q % 2, T{});
  }
}

/// Raw bits of element q of `w` (the other half of a 16-bit pair is not cleared).
template <typename T>
__device__ __forceinline__ unsigned elem_bits(const unsigned* w, int q) {
  if constexpr (sizeof(T) == 4) {
    return w[q];
  } else {
    return q % 2 ? w[q / 2] >> 16 : w[q / 2] & 0xffffu;
  }
}

/// Sets element q of `w` (zero before) to `bits`.
template <typename T>
__device__ __forceinline__ void set_elem_bits(unsigned* w, int q, unsigned bits) {
  if constexpr (sizeof(T) == 4) {
    w[q] = bits;
  } else {
    w[q / 2] |= q % 2 ? bits << 16 : bits;
  }
}

template <typename T>
__device__ __forceinline__ bool aligned16(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15) == 0;
}

/// One 16-byte store to global memory.
// NOTE: in PTX because the compiler split a Raw16 store inside unrolled loops into 4 scalar
// stores (seen in the SASS of the y rows).
__device__ __forceinline__ void store16_global(void* p, const Raw16& r) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(r.w[0]), "r"(r.w[1]),
               "r"(r.w[2]), "r"(r.w[3])
               : "memory");
}

/// Elements [0, n) of `p` (element e at p + e*stride) as one Raw16; one 16-byte load when
/// `vec` (stride 1, n full, p aligned), else one load per element.
template <typename T>
__device__ __forceinline__ Raw16 load_lanes(const T* p, long long stride, int n, bool vec) {
  if (vec) return *reinterpret_cast<const Raw16*>(p);
  Raw16 r = {};
#pragma unroll
  for (int e = 0; e < 16 / static_cast<int>(sizeof(T)); ++e) {
    if (e < n) set_elem_bits<T>(r.w, e, raw_bits(p[e * stride]));
  }
  return r;
}

/// Stores elements [0, n) of `r` the way load_lanes reads them (`vec`: to global memory).
template <typename T>
__device__ __forceinline__ void store_lanes(T* p, long long stride, int n, bool vec,
                                            const Raw16& r) {
  if (vec) {
    store16_global(p, r);
    return;
  }
#pragma unroll
  for (int e = 0; e < 16 / static_cast<int>(sizeof(T)); ++e) {
    if (e < n) p[e * stride] = from_raw<T>(elem_bits<T>(r.w, e));
  }
}

/// Word m of a Raw16 of T from its 16 / sizeof(T) / 4 floats (1 or 2), rounded once.
template <typename T>
__device__ __forceinline__ unsigned pack_word(const float* f) {
  if constexpr (sizeof(T) == 4) {
    return __float_as_uint(f[0]);
  } else {
    return pack2_bits<T>(f[0], f[1]);
  }
}

/// Bits 0..15 from half `ha` of a, bits 16..31 from half `hb` of b: one prmt.
__device__ __forceinline__ unsigned join_halves(unsigned a, int ha, unsigned b, int hb) {
  unsigned d;
  const unsigned select = (ha ? 0x32u : 0x10u) | (hb ? 0x7600u : 0x5400u);
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(select));
  return d;
}

/// A region of N lanes x kCols contiguous elements ([lane][col], as in [channels][cols] tiles;
/// kCols Raw16s) to kCols columns of N lanes each, and back.
template <typename T, int kCols>
__device__ __forceinline__ void region_to_cols(const Raw16 (&region)[kCols], Raw16* cols) {
  constexpr int N = 16 / static_cast<int>(sizeof(T));
#pragma unroll
  for (int i = 0; i < kCols; ++i) {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      if constexpr (N == 4) {
        const int q = m * kCols + i;
        cols[i].w[m] = region[q / 4].w[q % 4];
      } else {
        const int q0 = 2 * m * kCols + i;
        const int q1 = q0 + kCols;
        cols[i].w[m] =
            join_halves(region[q0 / 8].w[q0 % 8 / 2], q0 % 2, region[q1 / 8].w[q1 % 8 / 2], q1 % 2);
      }
    }
  }
}

template <typename T, int kCols>
__device__ __forceinline__ void cols_to_region(const Raw16* cols, Raw16 (&region)[kCols]) {
  constexpr int N = 16 / static_cast<int>(sizeof(T));
#pragma unroll
  for (int v = 0; v < kCols; ++v) {
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      if constexpr (N == 4) {
        const int q = v * 4 + m;
        region[v].w[m] = cols[q % kCols].w[q / kCols];
      } else {
        const int q0 = v * 8 + 2 * m;
        const int q1 = q0 + 1;
        region[v].w[m] = join_halves(cols[q0 % kCols].w[q0 / kCols / 2], q0 / kCols % 2,
                                     cols[q1 % kCols].w[q1 / kCols / 2], q1 / kCols % 2);
      }
    }
  }
}

/// silu(v) = v / (1 + e^-v) with the hardware exp2 and reciprocal (2 MUFU ops). Large negative
/// v gives -0 (e^-v = inf), large positive v gives v.
__device__ __forceinline__ float silu_fast(float v) {
  float e;
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(v * -1.4426950408889634f));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(1.0f + e));
  return v * r;
}

/// silu(v) = h + h tanh(h), h = v/2, with the hardware tanh (1 MUFU op, max relative error of
/// tanh 2^-11: used for 16-bit outputs only, where rounding the output costs as much). Large
/// negative v gives +0, large positive v gives v.
__device__ __forceinline__ float silu_tanh(float v) {
#if __CUDA_ARCH__ >= 750
  const float h = 0.5f * v;
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(h));
  return fmaf(h, t, h);
#else
  return silu_fast(v);
#endif
}

}  // namespace wyjit_kernels
