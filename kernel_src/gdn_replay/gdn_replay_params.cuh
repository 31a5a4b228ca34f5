// SPDX-License-Identifier: Apache-2.0
// The gdn_replay kernels' parameter block (one for its three kernels) and their geometry. Plain
// C++ with no CUDA keywords: the host launch layer includes this same file.
#pragma once

#include "common/fast_div.cuh"
#include "common/gdn_tokens.cuh"
#include "common/state_refs.cuh"

namespace wyjit_kernels {

/// Passed by value to the verify, commit and materialize kernels; each reads its part.
struct GdnReplayParams {
  GdnTokenInputs tokens;  // verify: the K tokens; materialize: num_k_heads, num_v_heads only
  StateRefs states;       // verify, materialize: the checkpoints (a verify's fold: write 0)
  StateRefs log;          // verify, materialize: the log tiles, read and written in place
  StateRefs out;          // materialize: where S_cur goes (write 0)
  const int* cursor;      // verify, materialize: [batch][cursor_stride] {base, len}
  int* commit_cursor;     // commit: the same, updated
  const int* accepted;    // commit: [batch]
  long long cursor_stride;
  int batch;
  FastDiv v_heads;  // verify, materialize: num_v_heads, to split a block index into (b, vh)
  FastDiv v_per_k;  // verify, materialize: num_v_heads / num_k_heads (vh's key head)
};

/// Floats of one log tile: L entries of k [HK][dk], then of u [HV][dv], then of G [HV].
WYJIT_HOST_DEVICE constexpr long long gdn_replay_log_floats(int L, int dk, int dv, int hk, int hv) {
  return static_cast<long long>(L) *
         (static_cast<long long>(hk) * dk + static_cast<long long>(hv) * dv + hv);
}

/// How a verify solves its tokens (one kernel each): in turn on S_cur formed in registers (vk
/// only), or in the WY form on S0 and the log's dots without forming S_cur (both layouts).
enum GdnReplayPath : int { kReplayInTurn = 0, kReplayWy = 1 };

/// Threads of a verify block. The WY form of vk at K >= 8 takes 256 where a head holds 256 x 64
/// state elements, so that one block owns the whole head at d = 128 and what a head's blocks
/// would each repeat (loading and normalising the tokens and the live log, the 2K x (2K + len)
/// dots, the solve) is done once, by twice the warps; 128 otherwise (and for commit and
/// materialize): at K <= 4 those phases are short, and four blocks of 4 warps a SM overlap them
/// better than two of 8 (docs/replay-performance.md).
WYJIT_HOST_DEVICE constexpr int gdn_replay_threads(int K, int dk, int dv, int layout, int path) {
  return layout == kLayoutVK && path == kReplayWy && K >= 8 && dk * dv >= 256 * 64 ? 256
                                                                                   : gdn_threads();
}

/// Value columns one block owns. In turn (vk): 32 state elements a thread (twice the classic
/// verify's), so that what every block of a head repeats (loading the tokens and the live log,
/// normalising q and k) is shared by more columns. WY, vk: 64 elements a thread, so that its
/// K x K and log dots and its solve are repeated by fewer blocks; kv: a lane a column, as the
/// classic WY form. Commit and materialize take the in-turn value (kv: the WY one).
WYJIT_HOST_DEVICE constexpr int gdn_replay_block_cols(int K, int dk, int dv, int layout, int path) {
  const int per_block =
      layout == kLayoutVK
          ? (path == kReplayWy ? 64 * gdn_replay_threads(K, dk, dv, layout, path) : 4096) / dk
          : 32;
  return layout == kLayoutVK && per_block > dv ? dv : per_block;
}

/// Warps whose partial dots a WY verify sums through shared memory: kv, every warp (a warp a dk
/// slice); vk, the dk slices of its tensor-core tiles (a warp owns whole tiles of 16 columns,
/// so a strip of fewer tiles than warps splits dk), 1 when there is nothing to sum.
WYJIT_HOST_DEVICE constexpr int gdn_replay_wy_parts(int cols, int layout, int warps) {
  return layout == kLayoutKV ? warps : warps > cols / 16 ? warps / (cols / 16) : 1;
}

/// The WY verify's dots on tensor cores (gdn_replay_dots.cuh): rows k_t, q_t and the live log's
/// k_j (at most 2K + L - K) in tiles of 16, columns k_s, q_s in tiles of 8. With fewer tiles
/// than warps the warps split dk as well, up to gdn_replay_dot_slices, their partial tiles summed
/// through shared memory (gdn_replay_dot_partial_floats).
WYJIT_HOST_DEVICE constexpr int gdn_replay_dot_row_tiles(int K, int L) { return (K + L + 15) / 16; }
WYJIT_HOST_DEVICE constexpr int gdn_replay_dot_col_tiles(int K) { return (2 * K + 7) / 8; }
WYJIT_HOST_DEVICE constexpr int gdn_replay_dot_slices(int K, int warps) {
  return gdn_replay_dot_col_tiles(K) >= warps ? 1 : warps / gdn_replay_dot_col_tiles(K);
}
WYJIT_HOST_DEVICE constexpr int gdn_replay_dot_partial_floats(int K, int L, int warps) {
  return gdn_replay_dot_slices(K, warps) > 1
             ? gdn_replay_dot_slices(K, warps) * gdn_replay_dot_row_tiles(K, L) * 16 *
                   gdn_replay_dot_col_tiles(K) * 8
             : 0;
}

/// The verify kernel a layout has for `path`: kv has only the WY form.
WYJIT_HOST_DEVICE constexpr int gdn_replay_path(int layout, int path) {
  return layout == kLayoutVK ? path : kReplayWy;
}

/// Dynamic shared memory of a verify block, in bytes (the carve-up is GdnReplayShared; in turn
/// uses only the tokens and the live log, the WY form also its scalars and strips).
WYJIT_HOST_DEVICE constexpr int gdn_replay_verify_smem_bytes(int K, int L, int dk, int dv,
                                                             int layout, int path) {
  const int cols = gdn_replay_block_cols(K, dk, dv, layout, path);
  const int warps = gdn_replay_threads(K, dk, dv, layout, path) / 32;
  const int pdk = gdn_padded_dk(dk);
  const int floats =
      2 * (K + 1) * pdk + 4 * K + K * cols                   // the tokens: k, q, gates, v strip
      + L * pdk + L * cols + L                               // the live log: k, u strip, weights
      + (path == kReplayWy ? 2 * L * K                       // log dots k_j.k_t, k_j.q_t
                                 + 4 * K * K + 3 * K * cols  // solve, p, r, u
                                 + (gdn_replay_wy_parts(cols, layout, warps) > 1
                                        ? gdn_replay_wy_parts(cols, layout, warps) * 2 * K * cols
                                        : 0)  // partial dots
                                 + gdn_replay_dot_partial_floats(K, L, warps)
                           : 0);
  return floats * 4;
}

/// Dynamic shared memory of a materialize block, in bytes: the live log.
WYJIT_HOST_DEVICE constexpr int gdn_replay_materialize_smem_bytes(int K, int L, int dk, int dv,
                                                                  int layout) {
  return (L * gdn_padded_dk(dk) +
          L * gdn_replay_block_cols(K, dk, dv, layout, gdn_replay_path(layout, kReplayInTurn)) +
          L) *
         4;
}

WYJIT_HOST_DEVICE constexpr int gdn_replay_commit_threads() { return 128; }

}  // namespace wyjit_kernels
