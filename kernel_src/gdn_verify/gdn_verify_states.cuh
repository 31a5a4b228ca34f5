// SPDX-License-Identifier: Apache-2.0
// Where one (sequence, value head) of gdn_verify reads its initial state and writes the state
// after each token: the shared state addressing (common/state_refs.cuh), with the write tiles
// of table and slot addressing staged in shared memory.
#pragma once

#include "common/state_refs.cuh"

namespace wyjit_kernels {

/// skip() (a padded sequence: nothing read or written), read() (S_b), stage() (called by every
/// thread before the block barrier that precedes the token loop) and write(t) (the tile the
/// state after token t goes to; null: not written; t = K-1 is the final state).
///
/// table and slot: thread t < K looks up the tile of token t with the block's other global reads
/// and stage() puts it into shared memory; the token loop reads it from there.
/// NOTE: looking the entry up inside the token loop kept the table, its stride, the head offset
/// and the sequence live: table K=16 took 91 registers against strided's 80 (5 blocks an SM
/// instead of 6) and was 19% slower at N=8 on an H200; staged, 4%.
template <typename TState, int kK, int kAddressing>
struct GdnStatePointers {
  TState* s0;       // S_b (null: padded sequence)
  TState* mine;     // thread t < K: the tile of token t (null: not written)
  TState** staged;  // shared, kK entries

  __device__ __forceinline__ GdnStatePointers(const StateRefs& r, int b, long long head,
                                              TState** staged_) {
    const StateTiles<TState, kK, kAddressing> tiles(r, b, head);
    const int t = static_cast<int>(threadIdx.x);
    s0 = tiles.read();
    mine = t < kK ? tiles.write(t) : nullptr;
    staged = staged_;
  }
  __device__ __forceinline__ bool skip() const { return s0 == nullptr; }
  __device__ __forceinline__ const TState* read() const { return s0; }
  __device__ __forceinline__ void stage() const {
    if (threadIdx.x < kK) staged[threadIdx.x] = mine;
  }
  __device__ __forceinline__ TState* write(int t) const { return staged[t]; }
};

/// strided: write(t) is computed where it is used (two registers).
template <typename TState, int kK>
struct GdnStatePointers<TState, kK, kAddrStrided> {
  StateTiles<TState, kK, kAddrStrided> tiles;

  __device__ __forceinline__ GdnStatePointers(const StateRefs& r, int b, long long head,
                                              TState** /*staged*/)
      : tiles(r, b, head) {}
  __device__ __forceinline__ bool skip() const { return false; }
  __device__ __forceinline__ const TState* read() const { return tiles.read(); }
  __device__ __forceinline__ void stage() const {}
  __device__ __forceinline__ TState* write(int t) const { return tiles.write(t); }
};

}  // namespace wyjit_kernels
