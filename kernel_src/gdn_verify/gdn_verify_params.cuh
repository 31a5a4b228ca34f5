// SPDX-License-Identifier: Apache-2.0
// The gdn_verify kernel's parameter block and launch geometry. Plain C++ with no CUDA
// keywords: the host launch layer includes this same file, so both sides agree by construction.
#pragma once

#include "common/gdn_tokens.cuh"
#include "common/state_refs.cuh"

namespace wyjit_kernels {

/// Passed by value to every gdn_verify kernel. Strides are in elements.
struct GdnVerifyParams {
  GdnTokenInputs tokens;
  StateRefs states;  // S_b read, the state after token t is write t (t = K-1: the final state)
  int batch;
};

/// Dynamic shared memory of one block, in bytes (the carve-up is GdnShared, gdn_verify_shared.cuh).
/// vk walks the tokens in turn on the state strip (k, q, the gates and the v strip); kv takes
/// the WY form, which adds the K x K matrices, the p/r/u strips and the cross-warp reduction.
WYJIT_HOST_DEVICE constexpr int gdn_smem_bytes(int K, int dk, int layout) {
  const int cols = gdn_block_cols(dk, layout);
  const int tokens = 2 * (K + 1) * gdn_padded_dk(dk)     // sK, sQ and a zero row each
                     + 4 * K                             // G, exp(G), exp(g), beta
                     + K * cols;                         // V
  const int wy = 4 * K * K                               // dots k.k, q.k, then W and C
                 + 3 * K * cols                          // P, R, U
                 + (gdn_threads() / 32) * 2 * K * cols;  // partial dots across warps
  return (layout == kLayoutKV ? tokens + wy : tokens) * 4;
}

}  // namespace wyjit_kernels
