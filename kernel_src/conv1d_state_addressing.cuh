// SPDX-License-Identifier: Apache-2.0
// Where one sequence of a conv1d_update launch reads its conv state and writes the new ones.
#pragma once

#include "conv1d_update_params.cuh"

namespace wyjit_kernels {

/// Base pointers of sequence b's state tiles ([channels][state_cols] each). `write(t)` is the
/// tile that receives the state after token t (intermediate; t = K-1 is the final state) or,
/// with t = 0, the new window (window). A null write tile skips that one state.
template <typename T, int kK, int kAddressing, int kRollback>
struct Conv1dStatePointers;

/// strided: S_b = state + b*state_seq_stride (read, then the final state or the window written
/// over it); Hi_t(b) = inter + b*inter_seq_stride + t*inter_tok_stride.
template <typename T, int kK, int kRollback>
struct Conv1dStatePointers<T, kK, kConvAddrStrided, kRollback> {
  T* s0;
  T* inter;  // Hi_0(b); only formed when the variant writes intermediate states
  long long inter_tok_stride;

  __device__ __forceinline__ Conv1dStatePointers(const Conv1dUpdateParams& p, int b)
      : s0(static_cast<T*>(p.state) + b * p.state_seq_stride),
        inter(kRollback == kRollbackIntermediate && kK > 1
                  ? static_cast<T*>(p.inter) + b * p.inter_seq_stride
                  : nullptr),
        inter_tok_stride(p.inter_tok_stride) {}
  __device__ __forceinline__ bool skip() const { return false; }
  __device__ __forceinline__ const T* read() const { return s0; }
  __device__ __forceinline__ T* write(int t) const {
    if (kRollback == kRollbackWindow || t == kK - 1) return s0;
    return inter + t * inter_tok_stride;
  }
};

/// table: tables[b] is S_b (read, then the final state or the window written there);
/// tables[(1+t)*slab_stride + b] is Hi_t(b). A null S_b marks a padded sequence.
template <typename T, int kK, int kRollback>
struct Conv1dStatePointers<T, kK, kConvAddrTable, kRollback> {
  void* const* tables;
  long long slab_stride;
  int b;
  T* s0;

  __device__ __forceinline__ Conv1dStatePointers(const Conv1dUpdateParams& p, int b_)
      : tables(p.tables), slab_stride(p.slab_stride), b(b_), s0(static_cast<T*>(p.tables[b_])) {}
  __device__ __forceinline__ bool skip() const { return s0 == nullptr; }
  __device__ __forceinline__ const T* read() const { return s0; }
  __device__ __forceinline__ T* write(int t) const {
    if (kRollback == kRollbackWindow || t == kK - 1) return s0;
    return static_cast<T*>(tables[(1 + t) * slab_stride + b]);
  }
};

/// slot: one pool of num_slots tiles slot_stride elements apart. Sequence b reads slot
/// read_slot[b] and writes the state after token t (or, with t = 0, the window) to slot
/// write_slot[b*write_slot_stride + t]. A negative or out-of-range read slot marks a padded
/// sequence; such a write slot skips that one state.
template <typename T, int kK, int kRollback>
struct Conv1dStatePointers<T, kK, kConvAddrSlot, kRollback> {
  T* pool;
  const int* write_slots;
  long long slot_stride;
  int num_slots;
  int read_slot;

  __device__ __forceinline__ Conv1dStatePointers(const Conv1dUpdateParams& p, int b)
      : pool(static_cast<T*>(p.state)),
        write_slots(p.write_slot + b * p.write_slot_stride),
        slot_stride(p.slot_stride),
        num_slots(p.num_slots),
        read_slot(p.read_slot[b]) {}
  __device__ __forceinline__ bool skip() const { return read_slot < 0 || read_slot >= num_slots; }
  __device__ __forceinline__ const T* read() const { return pool + read_slot * slot_stride; }
  __device__ __forceinline__ T* write(int t) const {
    const int slot = write_slots[t];
    if (slot < 0 || slot >= num_slots) return nullptr;
    return pool + slot * slot_stride;
  }
};

}  // namespace wyjit_kernels
