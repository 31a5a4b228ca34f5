/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file wyjit_launch.h
 * The C API's launch half: for each kernel family its plain-C argument struct, an argument
 * check and a launch, and the pointer-table stager. Included by wyjit.h (include that one);
 * the conventions (status codes, thread-local last error, struct_size) are documented there.
 */
#ifndef WYJIT_WYJIT_LAUNCH_H_
#define WYJIT_WYJIT_LAUNCH_H_

#include "wyjit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- gdn_verify -------------------------------------------------------------------------- */

/**
 * Arguments of one verify launch (mirrors wyjit::GdnVerifyArgs; see include/wyjit/gdn_verify.hpp
 * and docs/embedding.md). Strides are in elements of the pointed-to type. Row (b, t) of
 * q/k/v/g/beta/out is b*K + t. Fields a variant does not use are ignored.
 */
typedef struct wyjit_gdn_verify_args {
  size_t struct_size;  /**< sizeof(wyjit_gdn_verify_args), set by wyjit_gdn_verify_args_init */
  int32_t batch;       /**< sequences */
  int32_t num_k_heads; /**< HK */
  int32_t num_v_heads; /**< HV, a multiple of HK */
  int32_t k;           /**< tokens per sequence: the variant's K */
  int32_t dk;          /**< the variant's dk */
  int32_t dv;          /**< the variant's dv */
  float scale;         /**< multiplies q; 1/sqrt(dk) is the usual value */

  const void* q;     /**< [batch*K, qk_stride] io dtype, head h at h*dk */
  const void* k_in;  /**< [batch*K, qk_stride] io dtype */
  const void* v;     /**< [batch*K, v_stride] io dtype, head vh at vh*dv */
  const float* g;    /**< [batch*K, gb_stride] log-decay (<= 0), fp32 */
  const float* beta; /**< [batch*K, gb_stride] fp32 */
  /* fused gating (variant option `gating`) replaces g and beta */
  const void* a;        /**< [batch*K, gb_stride] io dtype */
  const void* b;        /**< [batch*K, gb_stride] io dtype */
  const float* a_log;   /**< [HV] fp32 */
  const float* dt_bias; /**< [HV] fp32 */
  void* out;            /**< [batch*K, o_stride] io dtype, head vh at vh*dv */
  int64_t qk_stride;    /**< >= HK*dk, a multiple of 4 */
  int64_t v_stride;     /**< >= HV*dv, a multiple of 4 */
  int64_t gb_stride;    /**< >= HV */
  int64_t o_stride;     /**< >= HV*dv */

  /* strided addressing: S_b = state + b*state_seq_stride; Hi_t(b) = inter + b*inter_seq_stride
   * + t*inter_tok_stride, t = 0..K-2 (inter unused when K == 1) */
  void* state;
  int64_t state_seq_stride;
  void* inter;
  int64_t inter_seq_stride;
  int64_t inter_tok_stride;

  /* table addressing: K slabs of slab_stride device pointers, from a wyjit_table_stager */
  void* const* tables;
  int64_t slab_stride;

  /* slot addressing: `state` is a pool of num_slots slots slot_stride elements apart; sequence
   * b reads read_slot[b] and writes the state after token t to write_slot[b*write_slot_stride +
   * t]. A negative read slot marks padding; a negative write slot skips that state. */
  int64_t slot_stride;
  int32_t num_slots;
  const int32_t* read_slot;  /**< [batch] int32, device memory */
  const int32_t* write_slot; /**< [batch][write_slot_stride] int32, device memory */
  int64_t write_slot_stride; /**< >= K */
} wyjit_gdn_verify_args;

/** Zeroes `args` and sets its struct_size. */
WYJIT_API void wyjit_gdn_verify_args_init(wyjit_gdn_verify_args* args);

/** Checks `args` against a variant without launching (no GPU needed). */
WYJIT_API wyjit_status wyjit_check_gdn_verify(const wyjit_spec* spec,
                                              const wyjit_gdn_verify_args* args);

/**
 * Checks, then launches `kernel` (a gdn_verify variant) on `stream`. Allocates nothing and
 * never synchronises, so it may be captured in a CUDA graph (any capture mode).
 */
WYJIT_API wyjit_status wyjit_launch_gdn_verify(const wyjit_kernel* kernel,
                                               const wyjit_gdn_verify_args* args, void* stream);

/* ---- conv1d_update ----------------------------------------------------------------------- */

/**
 * Arguments of one K-token causal conv1d update (mirrors wyjit::Conv1dUpdateArgs; the math, the
 * two rollback forms, the state tiles and their addressing are described in
 * include/wyjit/conv1d_update.hpp). Strides are in elements of the pointed-to type. Row (b, t)
 * of x and y is b*K + t. Fields a variant does not use are ignored.
 */
typedef struct wyjit_conv1d_update_args {
  size_t struct_size; /**< sizeof(wyjit_conv1d_update_args), set by wyjit_conv1d_update_args_init */
  int32_t batch;      /**< sequences */
  int32_t channels;   /**< channels per token (any count, e.g. 8192) */
  int32_t k;          /**< tokens per sequence: the variant's K */
  int32_t width;      /**< filter width: the variant's W */

  const void* x;      /**< [batch*K, x_stride] io dtype */
  void* y;            /**< [batch*K, y_stride] io dtype */
  int64_t x_stride;   /**< >= channels */
  int64_t y_stride;   /**< >= channels */
  const void* weight; /**< [channels][W] weight dtype (io or f32, as the variant says) */
  const void* bias;   /**< [channels] weight dtype (variant option `bias`) */

  /* a state tile is one sequence's conv state in the io dtype: column j of channel c at
   * c*state_channel_stride + j*state_col_stride; one of the two strides must be 1 */
  int64_t state_cols;           /**< >= W-1 (intermediate), >= W-1+K (window) */
  int64_t state_channel_stride; /**< >= state_cols when state_col_stride is 1 */
  int64_t state_col_stride;     /**< >= channels when state_channel_stride is 1 */

  /* strided addressing: S_b = state + b*state_seq_stride; intermediate form: Hi_t(b) = inter +
   * b*inter_seq_stride + t*inter_tok_stride, t = 0..K-2 (inter unused when K == 1) */
  void* state;
  int64_t state_seq_stride; /**< >= the elements a tile spans (when batch > 1) */
  void* inter;
  int64_t inter_seq_stride;
  int64_t inter_tok_stride;

  /* table addressing: tables[b] is S_b (NULL: padding); intermediate form: tables[(1+t) *
   * slab_stride + b] is Hi_t(b). A wyjit_table_stager made for K (intermediate) or 1 (window)
   * holds them at a fixed address. */
  void* const* tables;
  int64_t slab_stride; /**< >= batch (intermediate form with K > 1) */

  /* slot addressing: `state` is a pool of num_slots tiles slot_stride elements apart; sequence b
   * reads read_slot[b] and writes the state after token t (intermediate) or the window (window,
   * t = 0) to write_slot[b*write_slot_stride + t]. A negative read slot marks padding; a
   * negative write slot skips that state. */
  int64_t slot_stride; /**< >= the elements a tile spans */
  int32_t num_slots;
  const int32_t* read_slot;  /**< [batch] int32, device memory */
  const int32_t* write_slot; /**< [batch][write_slot_stride] int32, device memory */
  int64_t write_slot_stride; /**< >= K (intermediate), >= 1 (window) */

  /* window form: [batch] int32, device memory: the first history column of each sequence (the
   * accepted count of its previous launch; outside [0, state_cols - (W-1)]: padding) */
  const int32_t* window_offset;

  /** The kernel path (wyjit_conv1d_path, mirrors wyjit::Conv1dPath): 0 (automatic) unless
   *  measuring or testing one of them. */
  int32_t path;
} wyjit_conv1d_update_args;

/** Which of the conv1d_update kernel's two paths a launch takes (same values bit for bit). */
typedef enum wyjit_conv1d_path {
  WYJIT_CONV1D_PATH_AUTOMATIC = 0, /**< narrow for launches with little work, else wide */
  WYJIT_CONV1D_PATH_WIDE = 1,      /**< a thread owns 16 bytes of channels and a run of tokens */
  WYJIT_CONV1D_PATH_NARROW = 2     /**< a thread owns 4 bytes of channels and one token */
} wyjit_conv1d_path;

/** Zeroes `args` and sets its struct_size. */
WYJIT_API void wyjit_conv1d_update_args_init(wyjit_conv1d_update_args* args);

/** Checks `args` against a conv1d_update variant without launching (no GPU needed). */
WYJIT_API wyjit_status wyjit_check_conv1d_update(const wyjit_spec* spec,
                                                 const wyjit_conv1d_update_args* args);

/**
 * Checks, then launches `kernel` (a conv1d_update variant) on `stream`. Allocates nothing and
 * never synchronises, so it may be captured in a CUDA graph (any capture mode).
 */
WYJIT_API wyjit_status wyjit_launch_conv1d_update(const wyjit_kernel* kernel,
                                                  const wyjit_conv1d_update_args* args,
                                                  void* stream);

/* ---- pointer tables ----------------------------------------------------------------------- */

/**
 * A fixed device buffer for the pointer tables of table addressing (wyjit::GdnTableStager).
 * Its address never changes, so a graph that captured a launch reading it stays valid when
 * new tables are staged between replays.
 *
 * It serves both families: the tables are K slabs of per-sequence pointers, S_b in slab 0 and
 * Hi_t(b) in slab 1+t. gdn_verify and the intermediate form of conv1d_update use a stager made
 * for the variant's K; the window form of conv1d_update (one tile per sequence, no
 * intermediate states) uses one made for k = 1, staged with inter = NULL.
 */
typedef struct wyjit_table_stager wyjit_table_stager;

/** Allocates tables for `max_batch` sequences of a `k`-token variant in the current context. */
WYJIT_API wyjit_status wyjit_table_stager_create(int32_t k, int32_t max_batch,
                                                 wyjit_table_stager** out);

/** Frees the buffer (in the context it was allocated in). NULL is ignored. */
WYJIT_API void wyjit_table_stager_destroy(wyjit_table_stager* stager);

/**
 * Copies `states[b]` (S_b) and `inter[t][b]` (Hi_t(b), t = 0..K-2) for b < batch into the
 * buffer, asynchronously on `stream`; entries batch..max_batch-1 become NULL. A NULL entry is
 * padding, anywhere: a NULL states[b] makes the kernel skip sequence b whole (its inter[t][b] are
 * ignored); a NULL inter[t][b] skips writing Hi_t(b) only. The arrays `states`, and `inter` and
 * each `inter[t]` when K > 1, must be non-NULL (`inter` may be NULL when K == 1), and batch in
 * 1..max_batch; on any error nothing is copied. The host arrays must stay alive until the copy
 * completes. Not allowed while `stream` is being captured: stage between replays, on the replay
 * stream.
 */
WYJIT_API wyjit_status wyjit_table_stager_stage(wyjit_table_stager* stager, void* const* states,
                                                void* const* const* inter, int32_t batch,
                                                void* stream);

/** The device tables, for the `tables` field of wyjit_gdn_verify_args or
 *  wyjit_conv1d_update_args (NULL for a NULL stager). */
WYJIT_API void* const* wyjit_table_stager_tables(const wyjit_table_stager* stager);

/** Entries per slab, for the `slab_stride` field of wyjit_gdn_verify_args or
 *  wyjit_conv1d_update_args (0 for a NULL stager). */
WYJIT_API int64_t wyjit_table_stager_slab_stride(const wyjit_table_stager* stager);

#ifdef __cplusplus
}
#endif

#endif /* WYJIT_WYJIT_LAUNCH_H_ */
