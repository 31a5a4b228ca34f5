/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file gdn_replay.h
 * @brief gdn_replay's launch arguments (the same structs in C and C++: wyjit::GdnReplay*Args)
 *        and its C entry points, one set per kernel: verify, commit, materialize. Included by
 *        wyjit.h.
 *
 * Replay mode (DESIGN.md, "Replay mode"): per sequence and layer a checkpoint S0 and a log of L
 * entries; per sequence, shared by every layer, a cursor {base, len}: the live log is entries
 * base..base+len-1 (mod L), and the current state is
 *
 *     S_cur = e^{G_cur} S0 + sum_{j live} e^{G_cur - G_j} k_j u_j^T     (G_cur: G of the last
 *                                                                       live entry, 0 if none)
 *
 * A log tile (one sequence and layer) holds, as fp32: the normalised k of entry j at
 * [j][HK][dk], then the u of entry j at L*HK*dk + [j][HV][dv], then G_j at
 * L*(HK*dk + HV*dv) + [j][HV] (cumulative log-decay from the checkpoint): L*(HK*dk + HV*dv + HV)
 * floats. The cursor array is int32 [batch][cursor_stride], base then len, in device memory.
 *
 * Per step: verify every layer (reads the cursor, never writes it), then one commit for all
 * layers (from the accepted counts, on the device). A verify writes its K entries at positions
 * base+len .. base+len+K-1 (mod L), and when len + 2K > L it also folds: it writes S_cur as the
 * new checkpoint and stores its entries' G relative to it. The commit then sets base += len,
 * len = accepted after a fold, else len += accepted. Both are graph-capturable.
 */
#ifndef WYJIT_GDN_REPLAY_H_
#define WYJIT_GDN_REPLAY_H_

#include <stddef.h>
#include <stdint.h>

#include "wyjit/state_refs.h"
#include "wyjit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which of a gdn_replay variant's two verify kernels a launch runs. Both compute the contract
 *  in fp32 (outputs and log entries agree to rounding, not bit for bit); they differ in how the
 *  work is spread. The kv layout has only the WY form, which every value then selects. */
typedef enum wyjit_gdn_replay_path {
  WYJIT_GDN_REPLAY_PATH_AUTOMATIC = 0, /**< WY for batch*HV >= 256, else in turn */
  WYJIT_GDN_REPLAY_PATH_IN_TURN = 1,   /**< S_cur in registers, the tokens one after another */
  WYJIT_GDN_REPLAY_PATH_WY = 2         /**< the WY form on S0 and the log, K x K solve */
} wyjit_gdn_replay_path;

/** Arguments of one gdn_replay verify (one layer, one step). Row (b, t) of q/k/v/g/beta/out is
 *  b*K + t; strides are in elements. Fields a variant does not use are ignored. */
typedef struct wyjit_gdn_replay_verify_args {
  size_t struct_size WYJIT_DEFAULT(sizeof(wyjit_gdn_replay_verify_args));
  int32_t batch WYJIT_DEFAULT(0);       /**< sequences */
  int32_t num_k_heads WYJIT_DEFAULT(0); /**< HK */
  int32_t num_v_heads WYJIT_DEFAULT(0); /**< HV, a multiple of HK */
  int32_t k WYJIT_DEFAULT(0);           /**< tokens per sequence: the variant's K */
  int32_t dk WYJIT_DEFAULT(0);          /**< the variant's dk */
  int32_t dv WYJIT_DEFAULT(0);          /**< the variant's dv */
  float scale WYJIT_DEFAULT(0.0f);      /**< multiplies q; 1/sqrt(dk) is the usual value */

  const void* q WYJIT_DEFAULT(nullptr);     /**< [batch*K, qk_stride] io dtype */
  const void* k_in WYJIT_DEFAULT(nullptr);  /**< [batch*K, qk_stride] io dtype */
  const void* v WYJIT_DEFAULT(nullptr);     /**< [batch*K, v_stride] io dtype */
  const float* g WYJIT_DEFAULT(nullptr);    /**< [batch*K, gb_stride] log-decay (<= 0), fp32 */
  const float* beta WYJIT_DEFAULT(nullptr); /**< [batch*K, gb_stride] fp32 */
  /* fused gating (variant option `gating`) replaces g and beta */
  const void* a WYJIT_DEFAULT(nullptr);        /**< [batch*K, gb_stride] io dtype */
  const void* b WYJIT_DEFAULT(nullptr);        /**< [batch*K, gb_stride] io dtype */
  const float* a_log WYJIT_DEFAULT(nullptr);   /**< [HV] fp32 */
  const float* dt_bias WYJIT_DEFAULT(nullptr); /**< [HV] fp32 */
  void* out WYJIT_DEFAULT(nullptr);            /**< [batch*K, o_stride] io dtype */
  int64_t qk_stride WYJIT_DEFAULT(0);          /**< >= HK*dk, a multiple of 4 */
  int64_t v_stride WYJIT_DEFAULT(0);           /**< >= HV*dv, a multiple of 4 */
  int64_t gb_stride WYJIT_DEFAULT(0);          /**< >= HV */
  int64_t o_stride WYJIT_DEFAULT(0);           /**< >= HV*dv */

  /** The checkpoints: S0 of sequence b is read; a fold writes S_cur to write 0 (over S0 with
   *  strided and table addressing; with slot addressing to write_slot[b], which may be the read
   *  slot). A tile is HV*dk*dv elements of the state dtype in the variant's layout. */
  wyjit_state_refs states;
  /** The log tiles (fp32, layout above), read and written in place: the tile S_b's addressing
   *  names (strided: log.state + b*log.state_seq_stride; table: log.tables[b]; slot: slot
   *  log.read_slot[b] of the pool log.state, log.slot_stride floats apart). */
  wyjit_state_refs log;
  const int32_t* cursor WYJIT_DEFAULT(nullptr); /**< [batch][cursor_stride] {base, len} */
  int64_t cursor_stride WYJIT_DEFAULT(0);       /**< >= 2 */
  /** wyjit_gdn_replay_path: automatic unless measuring or testing one of the kernels */
  int32_t path WYJIT_DEFAULT(WYJIT_GDN_REPLAY_PATH_AUTOMATIC);
} wyjit_gdn_replay_verify_args;

/** Arguments of one commit: every layer's cursors at once (they share one cursor per
 *  sequence), after the step's verifies and the sampling. */
typedef struct wyjit_gdn_replay_commit_args {
  size_t struct_size WYJIT_DEFAULT(sizeof(wyjit_gdn_replay_commit_args));
  int32_t batch WYJIT_DEFAULT(0);         /**< sequences */
  int32_t k WYJIT_DEFAULT(0);             /**< the variant's K (of the step's verifies) */
  int32_t* cursor WYJIT_DEFAULT(nullptr); /**< [batch][cursor_stride] {base, len}, updated */
  int64_t cursor_stride WYJIT_DEFAULT(0); /**< >= 2 */
  /** [batch] int32, device: tokens accepted this step, 0..K (more is taken as K); negative: the
   *  sequence was padding this step, its cursor is left as it was */
  const int32_t* accepted WYJIT_DEFAULT(nullptr);
} wyjit_gdn_replay_commit_args;

/** Arguments of one materialize: S_cur of the chosen sequences of one layer, into a caller's
 *  state buffer (for prefix caching or to hand a sequence to classic mode). Changes nothing
 *  else. */
typedef struct wyjit_gdn_replay_materialize_args {
  size_t struct_size WYJIT_DEFAULT(sizeof(wyjit_gdn_replay_materialize_args));
  int32_t batch WYJIT_DEFAULT(0);               /**< sequences */
  int32_t num_k_heads WYJIT_DEFAULT(0);         /**< HK */
  int32_t num_v_heads WYJIT_DEFAULT(0);         /**< HV */
  int32_t dk WYJIT_DEFAULT(0);                  /**< the variant's dk */
  int32_t dv WYJIT_DEFAULT(0);                  /**< the variant's dv */
  wyjit_state_refs states;                      /**< the checkpoints, read (as in the verify) */
  wyjit_state_refs log;                         /**< the log tiles, read (as in the verify) */
  const int32_t* cursor WYJIT_DEFAULT(nullptr); /**< [batch][cursor_stride] {base, len} */
  int64_t cursor_stride WYJIT_DEFAULT(0);       /**< >= 2 */
  /** Where S_cur of sequence b goes: write 0 of these references (strided: out.state +
   *  b*out.state_seq_stride; table: out.tables[b], null skips b; slot: out.write_slot[b]). */
  wyjit_state_refs out;
} wyjit_gdn_replay_materialize_args;

/** Reset `args` to their defaults and set struct_size. */
WYJIT_API void wyjit_gdn_replay_verify_args_init(wyjit_gdn_replay_verify_args* args);
WYJIT_API void wyjit_gdn_replay_commit_args_init(wyjit_gdn_replay_commit_args* args);
WYJIT_API void wyjit_gdn_replay_materialize_args_init(wyjit_gdn_replay_materialize_args* args);

/** Check `args` against the variant named `spec` without launching (no GPU needed). */
WYJIT_API wyjit_status wyjit_check_gdn_replay_verify(const char* spec,
                                                     const wyjit_gdn_replay_verify_args* args);
WYJIT_API wyjit_status wyjit_check_gdn_replay_commit(const char* spec,
                                                     const wyjit_gdn_replay_commit_args* args);
WYJIT_API wyjit_status
wyjit_check_gdn_replay_materialize(const char* spec, const wyjit_gdn_replay_materialize_args* args);

/** Check, then launch the variant's verify / commit / materialize kernel on `stream`. Allocate
 *  nothing and never synchronise, so a whole step may be captured in a CUDA graph. */
WYJIT_API wyjit_status wyjit_launch_gdn_replay_verify(const wyjit_kernel* kernel,
                                                      const wyjit_gdn_replay_verify_args* args,
                                                      void* stream);
WYJIT_API wyjit_status wyjit_launch_gdn_replay_commit(const wyjit_kernel* kernel,
                                                      const wyjit_gdn_replay_commit_args* args,
                                                      void* stream);
WYJIT_API wyjit_status wyjit_launch_gdn_replay_materialize(
    const wyjit_kernel* kernel, const wyjit_gdn_replay_materialize_args* args, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* WYJIT_GDN_REPLAY_H_ */
