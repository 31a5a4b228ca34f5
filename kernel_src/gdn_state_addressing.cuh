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

/// table: tables[b] is S_b (read, final state written there), tables[(1+t)*slab_stride + b] is
/// Hi_t(b). A null S_b marks a padded sequence (nothing read or written); a null Hi_t(b) skips
/// that one state.
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrTable> {
  void* const* tables;
  long long slab_stride;
  long long head_offset;
  int b;
  TState* s0;

  __device__ __forceinline__ GdnStatePointers(const GdnVerifyParams& p, int b_, int vh,
                                              long long head_elems)
      : tables(p.tables), slab_stride(p.slab_stride), head_offset(vh * head_elems), b(b_) {
    void* base = tables[b];
    s0 = base == nullptr ? nullptr : static_cast<TState*>(base) + head_offset;
  }
  __device__ __forceinline__ bool skip() const { return s0 == nullptr; }
  __device__ __forceinline__ const TState* read() const { return s0; }
  __device__ __forceinline__ TState* write(int t) const {
    if (t == kK - 1) return s0;
    void* base = tables[(1 + t) * slab_stride + b];
    return base == nullptr ? nullptr : static_cast<TState*>(base) + head_offset;
  }
};

/// slot: one pool of num_slots states slot_stride elements apart. Sequence b reads slot
/// read_slot[b] and writes the state after token t to slot write_slot[b][t]. A negative (or
/// out-of-range) read slot marks a padded sequence; a negative write slot skips that state.
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrSlot> {
  TState* pool;
  const int* write_slots;  // this sequence's K write slots
  long long slot_stride;
  long long head_offset;
  int num_slots;
  int read_slot;

  __device__ __forceinline__ GdnStatePointers(const GdnVerifyParams& p, int b, int vh,
                                              long long head_elems)
      : pool(static_cast<TState*>(p.state)),
        write_slots(p.write_slot + b * p.write_slot_stride),
        slot_stride(p.slot_stride),
        head_offset(vh * head_elems),
        num_slots(p.num_slots),
        read_slot(p.read_slot[b]) {}
  __device__ __forceinline__ bool skip() const { return read_slot < 0 || read_slot >= num_slots; }
  __device__ __forceinline__ const TState* read() const {
    return pool + read_slot * slot_stride + head_offset;
  }
  __device__ __forceinline__ TState* write(int t) const {
    const int slot = write_slots[t];
    if (slot < 0 || slot >= num_slots) return nullptr;
    return pool + slot * slot_stride + head_offset;
  }
};

}  // namespace wyjit_kernels
