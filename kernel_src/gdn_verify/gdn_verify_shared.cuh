// SPDX-License-Identifier: Apache-2.0
// The gdn_verify block's shared memory, carved once (sizes: gdn_smem_bytes). The pointers
// past `v` are the WY form's and lie outside the allocation in the vk layout.
#pragma once

#include "gdn_verify/gdn_verify_params.cuh"

namespace wyjit_kernels {

template <class C>
struct GdnShared {
  float* k;      // [K+1][kPadDk] k rows (normalised); row K is zeros
  float* q;      // [K+1][kPadDk] q rows (normalised) * scale; row K is zeros
  float* l;      // [K][K] beta_t e^{G_t-G_s} k_s.k_t, s < t
  float* b;      // [K][K] e^{G_t-G_s} k_s.q_t, s <= t
  float* w;      // [K][K] (I + L)^-1 diag(beta)
  float* c;      // [K][K] B W
  float* g;      // [K] G_t = sum_{s<=t} g_s
  float* eg;     // [K] e^{G_t}
  float* decay;  // [K] e^{g_t}
  float* beta;   // [K]
  float* v;      // [K][kCols] v strip
  float* p;      // [K][kCols] S0^T k_t
  float* r;      // [K][kCols] S0^T q_t
  float* u;      // [K][kCols] u_t
  float* red;    // kv: [warps][2K][kCols] partial dots

  __device__ __forceinline__ explicit GdnShared(float* smem) {
    constexpr int K = C::kK;
    constexpr int rows = (K + 1) * C::kPadDk;
    constexpr int strip = K * C::kCols;
    // The tokens-in-turn part (both layouts), then the WY part (kv only: gdn_smem_bytes).
    k = smem;
    q = k + rows;
    g = q + rows;
    eg = g + K;
    decay = eg + K;
    beta = decay + K;
    v = beta + K;
    l = v + strip;
    b = l + K * K;
    w = b + K * K;
    c = w + K * K;
    p = c + K * K;
    r = p + strip;
    u = r + strip;
    red = u + strip;
  }
};

}  // namespace wyjit_kernels
