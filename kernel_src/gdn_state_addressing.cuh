// SPDX-License-Identifier: Apache-2.0
// Where one (sequence, value head) reads its initial state and writes the state after each token.
#pragma once

#include "gdn_verify_params.cuh"

namespace wyjit_kernels {

/// Pointers to one head's state tiles (each `dk*dv` elements) for sequence `b`, head `vh`.
template <typename TState, int kK, int kAddressing>
struct GdnStatePointers;

/// strided: S_b = state + b*state_seq_stride; Hi_t(b) = inter + b*inter_seq_stride +
/// t*inter_tok_stride. The final state is written over S_b.
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrStrided> {
  TState* s0;
  TState* inter;
  long long inter_tok_stride;

  __device__ __forceinline__ GdnStatePointers(const GdnVerifyParams& p, int b, int vh,
                                              long long head_elems) {
    s0 = static_cast<TState*>(p.state) + b * p.state_seq_stride + vh * head_elems;
    inter = static_cast<TState*>(p.inter) + b * p.inter_seq_stride + vh * head_elems;
    inter_tok_stride = p.inter_tok_stride;
  }
  __device__ __forceinline__ bool skip() const { return false; }
  __device__ __forceinline__ const TState* read() const { return s0; }
  /// State after token t: Hi_t for t < K-1, the final state (over S_b) for t = K-1.
  __device__ __forceinline__ TState* write(int t) const {
    return t == kK - 1 ? s0 : inter + t * inter_tok_stride;
  }
};

}  // namespace wyjit_kernels
