// SPDX-License-Identifier: Apache-2.0
// Where one (sequence, value head) reads its initial state and writes the state after each token.
#pragma once

#include "gdn_verify_params.cuh"

namespace wyjit_kernels {

/// Pointers to one head's state tiles (each `dk*dv` elements) for sequence `b`, head `vh`.
/// Every form has: skip() (a padded sequence: nothing read or written), read() (S_b), stage()
/// (called by every thread before the block barrier that precedes the token loop) and write(t)
/// (the tile the state after token t goes to; null: not written).
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
                                              long long head_elems, TState** /*staged*/) {
    s0 = static_cast<TState*>(p.state) + b * p.state_seq_stride + vh * head_elems;
    inter = static_cast<TState*>(p.inter) + b * p.inter_seq_stride + vh * head_elems;
    inter_tok_stride = p.inter_tok_stride;
  }
  __device__ __forceinline__ bool skip() const { return false; }
  __device__ __forceinline__ const TState* read() const { return s0; }
  __device__ __forceinline__ void stage() const {}
  /// State after token t: Hi_t for t < K-1, the final state (over S_b) for t = K-1.
  __device__ __forceinline__ TState* write(int t) const {
    return t == kK - 1 ? s0 : inter + t * inter_tok_stride;
  }
};

/// table and slot: thread t < K loads the entry of token t with the block's other global reads
/// and stage() puts the tile it names into shared memory; the token loop reads it from there.
/// NOTE: before (H200, session 4) write(t) loaded the entry inside the token loop and kept the
/// table, its stride, the head offset and the sequence live: table K=16 took 91 registers
/// against strided's 80 (5 blocks an SM instead of 6) and was 19% slower at N=8; staged, 4%.
/// Slot K=2 gained 8-10% at N >= 32; K=4 lost 6-9% at N=8 for reasons not found (same blocks
/// an SM; docs/PERFORMANCE.md, "staged in shared memory").
template <typename TState, int kK>
struct GdnStagedWrites {
  TState* s0;       // S_b (null: padded sequence)
  TState* mine;     // thread t < K: the tile of token t (null: not written)
  TState** staged;  // shared, kK entries
  __device__ __forceinline__ bool skip() const { return s0 == nullptr; }
  __device__ __forceinline__ const TState* read() const { return s0; }
  __device__ __forceinline__ void stage() const {
    if (threadIdx.x < kK) staged[threadIdx.x] = mine;
  }
  __device__ __forceinline__ TState* write(int t) const { return staged[t]; }
};

/// table: tables[b] is S_b (read, final state written there), tables[(1+t)*slab_stride + b] is
/// Hi_t(b). A null S_b marks a padded sequence (nothing read or written); a null Hi_t(b) skips
/// that one state.
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrTable> : GdnStagedWrites<TState, kK> {
  __device__ __forceinline__ GdnStatePointers(const GdnVerifyParams& p, int b, int vh,
                                              long long head_elems, TState** staged) {
    const long long head = static_cast<long long>(vh) * head_elems;
    const int t = static_cast<int>(threadIdx.x);
    this->s0 = tile_at(p.tables[b], head);
    this->mine = t < kK - 1 ? tile_at(p.tables[(1 + t) * p.slab_stride + b], head) : this->s0;
    this->staged = staged;
  }

 private:
  __device__ __forceinline__ static TState* tile_at(void* base, long long head) {
    return base == nullptr ? nullptr : static_cast<TState*>(base) + head;
  }
};

/// slot: one pool of num_slots states slot_stride elements apart. Sequence b reads slot
/// read_slot[b] and writes the state after token t to slot write_slot[b][t]. A negative (or
/// out-of-range) read slot marks a padded sequence; such a write slot skips that state.
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrSlot> : GdnStagedWrites<TState, kK> {
  __device__ __forceinline__ GdnStatePointers(const GdnVerifyParams& p, int b, int vh,
                                              long long head_elems, TState** staged) {
    const long long head = static_cast<long long>(vh) * head_elems;
    const int t = static_cast<int>(threadIdx.x);
    TState* const pool = static_cast<TState*>(p.state);
    this->s0 = tile_at(pool, p.read_slot[b], p.num_slots, p.slot_stride, head);
    this->mine = t < kK ? tile_at(pool, p.write_slot[b * p.write_slot_stride + t], p.num_slots,
                                  p.slot_stride, head)
                        : nullptr;
    this->staged = staged;
  }

 private:
  __device__ __forceinline__ static TState* tile_at(TState* pool, int slot, int num_slots,
                                                    long long slot_stride, long long head) {
    return slot < 0 || slot >= num_slots ? nullptr : pool + slot * slot_stride + head;
  }
};

}  // namespace wyjit_kernels
