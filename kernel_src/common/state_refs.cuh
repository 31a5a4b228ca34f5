// SPDX-License-Identifier: Apache-2.0
// State addressing, shared by every family: where sequence b reads its state tile and where it
// writes the tiles it produces. Plain C++ outside the device template, so the host launch layer
// includes this file too and both sides agree on the parameter block by construction.
#pragma once

#include "common/host_device.cuh"

namespace wyjit_kernels {

enum StateAddressing : int { kAddrStrided = 0, kAddrTable = 1, kAddrSlot = 2 };

/// The state references of one launch, in every family's parameter block. Strides are in
/// elements. Same fields, order and meaning as the public `wyjit_state_refs` (wyjit/state_refs.h):
///
/// - strided: S_b = state + b*state_seq_stride; write t < writes-1 goes to inter +
///   b*inter_seq_stride + t*inter_tok_stride, the last write over S_b;
/// - table: tables[b] is S_b (null: padding); write t < writes-1 goes to
///   tables[(1+t)*slab_stride + b] (null: skipped), the last write over S_b;
/// - slot: `state` is a pool of num_slots tiles slot_stride elements apart; S_b is slot
///   read_slot[b], write t goes to slot write_slot[b*write_slot_stride + t]. A read slot outside
///   [0, num_slots) marks padding (nothing read or written); such a write slot skips that tile.
struct StateRefs {
  void* state;
  long long state_seq_stride;
  void* inter;
  long long inter_seq_stride;
  long long inter_tok_stride;
  void* const* tables;
  long long slab_stride;
  long long slot_stride;
  int num_slots;
  const int* read_slot;
  const int* write_slot;
  long long write_slot_stride;
};

#if defined(__CUDACC__)

/// The tiles of sequence b under one addressing mode, each offset by `offset` elements (e.g. a
/// head inside the tile). kWrites is how many tiles a sequence writes per launch.
/// read(): the tile read (null: a padded sequence, skip() is true); write(t): the tile write t
/// goes to (null: skipped). Null stays null whatever the offset.
template <typename T, int kWrites, int kAddressing>
struct StateTiles;

template <typename T, int kWrites>
struct StateTiles<T, kWrites, kAddrStrided> {
  T* s0;
  T* inter;
  long long inter_tok_stride;

  __device__ __forceinline__ StateTiles(const StateRefs& r, int b, long long offset)
      : s0(static_cast<T*>(r.state) + b * r.state_seq_stride + offset),
        inter(kWrites > 1 ? static_cast<T*>(r.inter) + b * r.inter_seq_stride + offset : nullptr),
        inter_tok_stride(r.inter_tok_stride) {}
  __device__ __forceinline__ bool skip() const { return false; }
  __device__ __forceinline__ T* read() const { return s0; }
  __device__ __forceinline__ T* write(int t) const {
    return t == kWrites - 1 ? s0 : inter + t * inter_tok_stride;
  }
};

template <typename T>
__device__ __forceinline__ T* tile_at(void* base, long long offset) {
  return base == nullptr ? nullptr : static_cast<T*>(base) + offset;
}

template <typename T, int kWrites>
struct StateTiles<T, kWrites, kAddrTable> {
  void* const* tables;
  long long slab_stride;
  long long offset;
  int b;
  T* s0;

  __device__ __forceinline__ StateTiles(const StateRefs& r, int b_, long long offset_)
      : tables(r.tables),
        slab_stride(r.slab_stride),
        offset(offset_),
        b(b_),
        s0(tile_at<T>(r.tables[b_], offset_)) {}
  __device__ __forceinline__ bool skip() const { return s0 == nullptr; }
  __device__ __forceinline__ T* read() const { return s0; }
  __device__ __forceinline__ T* write(int t) const {
    return t == kWrites - 1 ? s0 : tile_at<T>(tables[(1 + t) * slab_stride + b], offset);
  }
};

template <typename T, int kWrites>
struct StateTiles<T, kWrites, kAddrSlot> {
  T* pool;
  const int* write_slots;
  long long slot_stride;
  long long offset;
  int num_slots;
  int read_slot;

  __device__ __forceinline__ StateTiles(const StateRefs& r, int b, long long offset_)
      : pool(static_cast<T*>(r.state)),
        write_slots(r.write_slot + b * r.write_slot_stride),
        slot_stride(r.slot_stride),
        offset(offset_),
        num_slots(r.num_slots),
        read_slot(r.read_slot[b]) {}
  __device__ __forceinline__ bool skip() const { return read_slot < 0 || read_slot >= num_slots; }
  __device__ __forceinline__ T* read() const {
    return skip() ? nullptr : pool + read_slot * slot_stride + offset;
  }
  __device__ __forceinline__ T* write(int t) const {
    const int slot = write_slots[t];
    return slot < 0 || slot >= num_slots ? nullptr : pool + slot * slot_stride + offset;
  }
};

/// The tile a write-only reference names for sequence b (one write a sequence): strided and
/// table as StateTiles' write 0; slot: write_slot[b] alone, so that such a reference needs no
/// read slots (a slot outside [0, num_slots) and a null table entry skip the sequence: null).
template <typename T, int kAddressing>
__device__ __forceinline__ T* write_only_tile(const StateRefs& r, int b, long long offset) {
  if constexpr (kAddressing == kAddrSlot) {
    const int slot = r.write_slot[b * r.write_slot_stride];
    return slot < 0 || slot >= r.num_slots
               ? nullptr
               : static_cast<T*>(r.state) + slot * r.slot_stride + offset;
  } else {
    return StateTiles<T, 1, kAddressing>(r, b, offset).write(0);
  }
}

#endif  // __CUDACC__

}  // namespace wyjit_kernels
