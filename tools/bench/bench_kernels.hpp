// SPDX-License-Identifier: Apache-2.0
// Baseline kernels for the benchmarks, compiled with NVRTC like everything else: a vectorised
// copy (the bandwidth yardstick), verify's state traffic with no arithmetic (the floor of that
// access pattern) and a naive sequential-per-token verify (what peers do).
#pragma once

namespace wyjit::bench {

inline constexpr const char* kBaselineSource = R"cuda(
struct alignas(16) F4 { float x, y, z, w; };

// dst[i] = src[i] over n float4s, grid-stride.
extern "C" __global__ void __launch_bounds__(256) copy_f4(const F4* __restrict__ src,
                                                          F4* __restrict__ dst, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) dst[i] = src[i];
}

// Verify's state traffic alone, shaped like gdn_verify's vk blocks: one 128-thread block per
// (sequence, value head, 16-column strip) of a [dv=128][dk=128] fp32 state reads its 8 KiB once
// and writes it K times (K-1 intermediate states [b][K-1][HV], then the state itself).
extern "C" __global__ void __launch_bounds__(128) state_fanout(float* state, float* inter, int K,
                                                               int HV) {
  const long long tile = blockIdx.x / 8;  // b * HV + vh
  const int strip = blockIdx.x % 8;
  const long long b = tile / HV;
  const long long vh = tile % HV;
  F4* s0 = reinterpret_cast<F4*>(state + tile * 16384 + strip * 2048);
  F4 r[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) r[c] = s0[c * 128 + threadIdx.x];
  for (int t = 0; t < K; ++t) {
    F4* dst = t == K - 1 ? s0
                         : reinterpret_cast<F4*>(inter + ((b * (K - 1) + t) * HV + vh) * 16384 +
                                                 strip * 2048);
#pragma unroll
    for (int c = 0; c < 4; ++c) dst[c * 128 + threadIdx.x] = r[c];
  }
}

__device__ __forceinline__ float bf16_to_float(unsigned short b) {
  return __uint_as_float(static_cast<unsigned>(b) << 16);
}
__device__ __forceinline__ unsigned short float_to_bf16(float x) {
  unsigned u = __float_as_uint(x);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

// Naive verify: one 128-thread block per (sequence, value head); thread j owns column j of a
// [dv=128][dk=128] ("vk") fp32 state in registers and walks the K tokens one after another,
// writing the state after each token. bf16 q/k/v/out (contiguous rows), fp32 g/beta,
// q/k already normalised, no GVA tricks beyond vh / (HV/HK).
extern "C" __global__ void __launch_bounds__(128) naive_verify(
    const unsigned short* q, const unsigned short* k, const unsigned short* v, const float* g,
    const float* beta, unsigned short* out, float* state, float* inter, int K, int HK, int HV,
    float scale) {
  const int vh = blockIdx.x % HV;
  const int b = blockIdx.x / HV;
  const int hk = vh / (HV / HK);
  const int j = threadIdx.x;
  __shared__ float sk[128], sq[128];
  float* s0 = state + (static_cast<long long>(b) * HV + vh) * 128 * 128 + j * 128;
  float col[128];
#pragma unroll
  for (int i = 0; i < 128; i += 4) {
    const F4 x = *reinterpret_cast<const F4*>(s0 + i);
    col[i] = x.x; col[i + 1] = x.y; col[i + 2] = x.z; col[i + 3] = x.w;
  }
  for (int t = 0; t < K; ++t) {
    const long long row = static_cast<long long>(b) * K + t;
    __syncthreads();
    sk[j] = bf16_to_float(k[(row * HK + hk) * 128 + j]);
    sq[j] = bf16_to_float(q[(row * HK + hk) * 128 + j]) * scale;
    __syncthreads();
    const float decay = expf(g[row * HV + vh]);
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; ++i) { col[i] *= decay; kv += col[i] * sk[i]; }
    const float u = beta[row * HV + vh] * (bf16_to_float(v[(row * HV + vh) * 128 + j]) - kv);
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < 128; ++i) { col[i] += sk[i] * u; o += col[i] * sq[i]; }
    out[(row * HV + vh) * 128 + j] = float_to_bf16(o);
    float* dst = t == K - 1 ? s0
                            : inter + ((static_cast<long long>(b) * (K - 1) + t) * HV + vh) * 128 * 128 + j * 128;
#pragma unroll
    for (int i = 0; i < 128; i += 4) {
      *reinterpret_cast<F4*>(dst + i) = F4{col[i], col[i + 1], col[i + 2], col[i + 3]};
    }
  }
}
)cuda";

}  // namespace wyjit::bench
