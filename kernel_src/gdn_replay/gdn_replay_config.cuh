// SPDX-License-Identifier: Apache-2.0
// A gdn_replay variant's compile-time configuration, its log tile and cursor, and a verify
// block's shared memory.
#pragma once

#include "common/gdn_tokens.cuh"
#include "common/state_refs.cuh"
#include "gdn_replay/gdn_replay_params.cuh"
#if defined(__CUDACC__)
#include "common/gdn_tile.cuh"
#include "common/types.cuh"
#endif

namespace wyjit_kernels {

template <int K_, int L_, int Dk_, int Dv_, typename TIo_, typename TState_, int Layout_,
          int Addressing_, bool L2Norm_, bool Gating_, int Path_>
struct GdnReplayConfig {
  using TIo = TIo_;
  using TState = TState_;
  static constexpr int kK = K_;
  static constexpr int kL = L_;
  static constexpr int kDk = Dk_;
  static constexpr int kDv = Dv_;
  static constexpr int kLayout = Layout_;
  static constexpr int kAddressing = Addressing_;
  static constexpr bool kL2Norm = L2Norm_;
  static constexpr bool kGating = Gating_;
  static constexpr int kPath = Path_;  // kReplayInTurn or kReplayWy (the verify's form)

  static constexpr int kThreads = gdn_replay_threads(kK, kDk, kDv, kLayout, kPath);
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kCols =
      gdn_replay_block_cols(kK, kDk, kDv, kLayout, kPath);  // columns a block
  static constexpr int kStrips = kDv / kCols;               // blocks per head
  static constexpr int kPadDk = gdn_padded_dk(kDk);         // smem row pitch of k rows
  static constexpr int kLanesPerCol = kLayout == kLayoutVK ? kThreads / kCols : 1;
  static constexpr int kElems = kCols * kDk / kThreads;  // state elements per thread
  static constexpr int kVecs = kElems / 4;

  static_assert(kK >= 1 && kK <= 16, "K in 1..16");
  static_assert(kL >= 2 * kK, "the log holds at least two steps' entries");
  static_assert((kL & (kL - 1)) == 0, "L is a power of two (positions wrap with a mask)");
  static_assert(kDv % kCols == 0, "dv must be a multiple of the block's column strip");
  static_assert(kElems % 4 == 0, "state elements per thread come in fours");
  static_assert(kPath == gdn_replay_path(kLayout, kPath), "kv has only the WY form");
};

/// The live log of one sequence as a verify sees it: where it starts, how long it is, and
/// whether this verify folds. A cursor outside the contract is clamped so that nothing is read
/// or written outside the tile: base is taken mod L, len to [0, L - K].
struct GdnCursor {
  int base;
  int len;
  bool fold;  // len + 2K > L: S_cur becomes the checkpoint, the new entries' G start from it
};

#if defined(__CUDACC__)

/// What a verify or materialize block owns: column strip `strip` (columns j0..) of value head
/// vh of sequence b; hk is vh's key head. The grid is batch x num_v_heads x kStrips blocks.
struct GdnReplayBlock {
  int strip;
  int j0;
  int b;
  int vh;
  int hk;

  template <class C>
  static __device__ __forceinline__ GdnReplayBlock of(const GdnReplayParams& p) {
    const int strip = static_cast<int>(blockIdx.x) % C::kStrips;
    const int seq_head = static_cast<int>(blockIdx.x) / C::kStrips;
    const int b = p.v_heads.div(seq_head);
    const int vh = seq_head - b * p.v_heads.divisor;
    return GdnReplayBlock{strip, strip * C::kCols, b, vh, p.v_per_k.div(vh)};
  }
};

template <int kK, int kL>
__device__ __forceinline__ GdnCursor read_cursor(const int* c) {
  const int base = static_cast<int>(static_cast<unsigned>(c[0]) & static_cast<unsigned>(kL - 1));
  const int len = min(max(c[1], 0), kL - kK);
  return GdnCursor{base, len, len + 2 * kK > kL};
}

/// One log tile: entry positions wrap mod L.
template <class C>
struct GdnLogTile {
  float* base;
  int hk_count;
  int hv_count;

  __device__ __forceinline__ float* k(int pos, int hk) const {
    return base + (static_cast<long long>(pos) * hk_count + hk) * C::kDk;
  }
  __device__ __forceinline__ float* u(int pos, int vh) const {
    return base + static_cast<long long>(C::kL) * hk_count * C::kDk +
           (static_cast<long long>(pos) * hv_count + vh) * C::kDv;
  }
  __device__ __forceinline__ float* g(int pos, int vh) const {
    return base + static_cast<long long>(C::kL) * (hk_count * C::kDk + hv_count * C::kDv) +
           static_cast<long long>(pos) * hv_count + vh;
  }
};

/// A verify block's shared memory, carved once (sizes: gdn_replay_verify_smem_bytes). In turn
/// uses tok and the live log (lk, lu, lw) only: the pointers past them lie outside its allocation.
template <class C>
struct GdnReplayShared {
  GdnTokenShared tok;  // the K tokens (k, q, gates, v strip)
  float* lk;           // [L][kPadDk] live log k rows, j = 0..len-1 (oldest first)
  float* lu;           // [L][kCols] their u strips
  float* lw;           // [L] e^{G_cur - G_j}
  float* ld;           // [L][K] e^{G_cur - G_j} k_j.k_t
  float* le;           // [L][K] e^{G_cur - G_j} k_j.q_t (q scaled)
  float* l;            // [K][K] beta_t e^{G_t-G_s} k_s.k_t, s < t
  float* b;            // [K][K] e^{G_t-G_s} k_s.q_t, s <= t
  float* w;            // [K][K] (I + L)^-1 diag(beta)
  float* c;            // [K][K] B W
  float* p;            // [K][kCols] S_cur^T k_t
  float* r;            // [K][kCols] S_cur^T q_t
  float* u;            // [K][kCols] u_t
  float* red;          // WY: [parts][2K][kCols] partial dots (gdn_replay_wy_parts)
  float* dot_parts;    // WY: [slices][row tiles * 16][col tiles * 8] (gdn_replay_dot_slices)

  __device__ __forceinline__ explicit GdnReplayShared(float* smem) {
    constexpr int K = C::kK;
    constexpr int L = C::kL;
    constexpr int rows = (K + 1) * C::kPadDk;
    constexpr int strip = K * C::kCols;
    tok.k = smem;
    tok.q = tok.k + rows;
    tok.g = tok.q + rows;
    tok.eg = tok.g + K;
    tok.decay = tok.eg + K;
    tok.beta = tok.decay + K;
    tok.v = tok.beta + K;
    lk = tok.v + strip;
    lu = lk + L * C::kPadDk;
    lw = lu + L * C::kCols;
    ld = lw + L;
    le = ld + L * K;
    l = le + L * K;
    b = l + K * K;
    w = b + K * K;
    c = w + K * K;
    p = c + K * K;
    r = p + strip;
    u = r + strip;
    red = u + strip;
    constexpr int parts = gdn_replay_wy_parts(C::kCols, C::kLayout, C::kWarps);
    dot_parts = red + (parts > 1 ? parts * 2 * K * C::kCols : 0);
  }
};

/// Where live entry j of a sequence sits in shared memory: in order (entry j at j, lw[j] its
/// weight e^{G_cur - G_j}), or as the whole ring (kRing: entry j at (base + j) mod L, lw the
/// raw G by position, the weight formed where it is used).
template <int L, bool kRing>
struct GdnLiveSlots {
  int base;
  float g_cur;

  __device__ __forceinline__ int slot(int j) const { return kRing ? (base + j) & (L - 1) : j; }
  __device__ __forceinline__ float weight(const float* lw, int j) const {
    // NOTE: the exponent of a difference, never a ratio of exponentials: G falls without bound.
    return kRing ? expf(g_cur - lw[slot(j)]) : lw[j];
  }
};

/// The live log of one (sequence, value head, strip) on its way to shared memory, in two halves
/// like the tokens' (GdnTokenLoads): issue() starts the copies of the k rows of key head hk and
/// the u strip of value head vh at columns j0.. and loads the G values into registers;
/// publish() writes lw. The caller then waits for its copies (copy16_wait), synchronises the
/// block, and takes G_cur from g_cur(). In order (kRing false) only the live entries are
/// copied, once the cursor is known. As the whole ring (kRing) all L entries are, without
/// waiting for the cursor: a latency less where the bytes do not matter (the in-turn verify,
/// small batches), up to L - len entries more read.
template <class C, bool kRing>
struct GdnLiveLogLoads {
  float g_last = 0.0f;  // in order: G of the newest live entry (0 for an empty log)
  float g_mine = 0.0f;  // in order: G_j of entry j = tid (when tid < len); ring: G at tid

  __device__ __forceinline__ void issue(const GdnLogTile<C>& log, const GdnCursor& cur, int hk,
                                        int vh, int j0, float* lk, float* lu) {
    constexpr int L = C::kL;
    static_assert(L <= C::kThreads, "a thread an entry's G");
    const int tid = static_cast<int>(threadIdx.x);
    const int entries = kRing ? L : cur.len;
    const int base = kRing ? 0 : cur.base;
    constexpr int kRowVecs = C::kDk / 4;
    for (int idx = tid; idx < entries * kRowVecs; idx += C::kThreads) {
      const int j = idx / kRowVecs;
      const int i = (idx % kRowVecs) * 4;
      copy16_async(lk + j * C::kPadDk + i, log.k((base + j) & (L - 1), hk) + i);
    }
    constexpr int kColVecs = C::kCols / 4;
    for (int idx = tid; idx < entries * kColVecs; idx += C::kThreads) {
      const int j = idx / kColVecs;
      const int c = (idx % kColVecs) * 4;
      copy16_async(lu + j * C::kCols + c, log.u((base + j) & (L - 1), vh) + j0 + c);
    }
    if (!kRing && cur.len > 0) g_last = *log.g((cur.base + cur.len - 1) & (L - 1), vh);
    if (tid < entries) g_mine = *log.g((base + tid) & (L - 1), vh);
  }

  __device__ __forceinline__ void publish(const GdnCursor& cur, float* lw) const {
    const int tid = static_cast<int>(threadIdx.x);
    if constexpr (kRing) {
      if (tid < C::kL) lw[tid] = g_mine;
    } else {
      // NOTE: the exponent of a difference, never a ratio of exponentials.
      if (tid < cur.len) lw[tid] = expf(g_last - g_mine);
    }
  }

  /// G_cur, after the block synchronised behind publish().
  __device__ __forceinline__ float g_cur(const GdnCursor& cur, const float* lw) const {
    if constexpr (kRing) return cur.len > 0 ? lw[(cur.base + cur.len - 1) & (C::kL - 1)] : 0.0f;
    return g_last;
  }

  __device__ __forceinline__ GdnLiveSlots<C::kL, kRing> slots(const GdnCursor& cur, float g) const {
    return GdnLiveSlots<C::kL, kRing>{cur.base, g};
  }
};

/// Both halves of GdnLiveLogLoads in order at once, for a block that synchronises right after;
/// returns G_cur.
template <class C>
__device__ __forceinline__ float load_live_log(const GdnLogTile<C>& log, const GdnCursor& cur,
                                               int hk, int vh, int j0, float* lk, float* lu,
                                               float* lw) {
  GdnLiveLogLoads<C, false> loads;
  loads.issue(log, cur, hk, vh, j0, lk, lu);
  loads.publish(cur, lw);
  return loads.g_last;
}

/// This thread's elements of S_cur = e^{G_cur} S0 + sum_j w_j k_j u_j^T, in place in `s` (its
/// S0 elements): the fold, and materialize. Tile: the element map (GdnTileMap or the WY
/// verify's tensor-core tile), a thread's vectors spread over Tile::kColSlots columns; Slots:
/// where the entries sit (GdnLiveSlots: in order unless given the ring's).
template <class C, class Tile, bool kRing = false>
__device__ __forceinline__ void apply_live_log(
    const Tile& tile, float (&s)[C::kVecs][4], float eg_cur, int len, const float* lk,
    const float* lu, const float* lw,
    const GdnLiveSlots<C::kL, kRing>& slots = GdnLiveSlots<C::kL, kRing>{0, 0.0f}) {
#pragma unroll
  for (int c = 0; c < C::kVecs; ++c) {
#pragma unroll
    for (int e = 0; e < 4; ++e) s[c][e] *= eg_cur;
  }
  for (int j = 0; j < len; ++j) {
    const int at = slots.slot(j);
    const float w = slots.weight(lw, j);
    float wu[Tile::kColSlots];
#pragma unroll
    for (int slot = 0; slot < Tile::kColSlots; ++slot) {
      wu[slot] = w * lu[at * C::kCols + tile.col_at(slot)];
    }
#pragma unroll
    for (int c = 0; c < C::kVecs; ++c) {
      float kk[4];
      load4(lk + at * C::kPadDk + tile.first_i(c), kk);
#pragma unroll
      for (int e = 0; e < 4; ++e) s[c][e] += kk[e] * wu[Tile::col_slot(c)];
    }
  }
}

#endif  // __CUDACC__

}  // namespace wyjit_kernels
