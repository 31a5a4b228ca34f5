// SPDX-License-Identifier: Apache-2.0
// The gdn_verify kernel's parameter block and launch geometry. Plain C++ with no CUDA
// keywords: the host launch layer includes this same file, so both sides agree by construction.
#pragma once

// Geometry helpers are used on both sides of the launch.
#if defined(__CUDACC__)
#define WYJIT_HOST_DEVICE __host__ __device__
#else
#define WYJIT_HOST_DEVICE
#endif

namespace wyjit_kernels {

enum GdnLayout : int { kLayoutVK = 0, kLayoutKV = 1 };
enum GdnAddressing : int { kAddrStrided = 0, kAddrTable = 1, kAddrSlot = 2 };

/// Passed by value to every gdn_verify kernel. Strides are in elements.
struct GdnVerifyParams {
  const void* q;         // [batch*K, qk_stride] io, key head h at h*dk
  const void* k;         // [batch*K, qk_stride] io
  const void* v;         // [batch*K, v_stride] io, value head vh at vh*dv
  const float* g;        // [batch*K, gb_stride]
  const float* beta;     // [batch*K, gb_stride]
  const void* a;         // [batch*K, gb_stride] io (fused gating)
  const void* b;         // [batch*K, gb_stride] io (fused gating)
  const float* a_log;    // [HV] (fused gating)
  const float* dt_bias;  // [HV] (fused gating)
  void* out;             // [batch*K, o_stride] io
  void* state;           // strided: S_b = state + b*state_seq_stride
  void* inter;           // strided: Hi_t(b) = inter + b*inter_seq_stride + t*inter_tok_stride
  long long qk_stride;
  long long v_stride;
  long long gb_stride;
  long long o_stride;
  long long state_seq_stride;
  long long inter_seq_stride;
  long long inter_tok_stride;
  void* const* tables;  // table: K slabs of slab_stride pointers
  long long slab_stride;
  long long slot_stride;  // slot: pool of num_slots states
  const int* read_slot;   // [batch]
  const int* write_slot;  // [batch][write_slot_stride]
  long long write_slot_stride;
  int num_slots;
  int batch;
  int num_k_heads;
  int num_v_heads;
  float scale;
};

/// Value-head columns (dv indices) one block owns: vk keeps 16 state elements per thread,
/// kv gives each lane one column of a 32-column strip.
WYJIT_HOST_DEVICE constexpr int gdn_block_cols(int dk, int layout) {
  return layout == kLayoutVK ? 2048 / dk : 32;
}

WYJIT_HOST_DEVICE constexpr int gdn_threads() { return 128; }

/// Which variants walk the tokens one after another on the state strip instead of the WY
/// K x K solve (same traffic: S0 read once, each S_t written once). See docs/PERFORMANCE.md.
WYJIT_HOST_DEVICE constexpr int gdn_sequential_max_k() { return 32; }
WYJIT_HOST_DEVICE constexpr bool gdn_sequential(int K, int layout) {
  return layout == kLayoutVK && K <= gdn_sequential_max_k();
}

WYJIT_HOST_DEVICE constexpr int gdn_padded_dk(int dk) { return dk + 4; }

/// Dynamic shared memory of one block, in bytes (see the carve-up in gdn_verify.cuh).
WYJIT_HOST_DEVICE constexpr int gdn_smem_bytes(int K, int dk, int layout) {
  const int cols = gdn_block_cols(dk, layout);
  const int floats = 2 * (K + 1) * gdn_padded_dk(dk)  // sK, sQ and a zero row each
                     + 4 * K * K                      // dots k.k, q.k, then W and C
                     + 4 * K                          // G, exp(G), exp(g), beta
                     + 4 * K * cols                   // V, P, R, U
                     + (layout == kLayoutKV ? (gdn_threads() / 32) * 2 * K * cols : 0);
  return floats * 4;
}

}  // namespace wyjit_kernels
