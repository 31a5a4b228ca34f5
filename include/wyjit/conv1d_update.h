/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file conv1d_update.h
 * @brief conv1d_update's launch arguments (the same struct in C and C++:
 *        wyjit::Conv1dUpdateArgs) and its C entry points. Included by wyjit.h.
 *
 * The K-token causal depthwise conv1d update before each GDN layer. The math, the two rollback
 * forms and the state tiles are described in include/wyjit/conv1d_update.hpp. Row (b, t) of x
 * and y is b*K + t; strides are in elements of the pointed-to type.
 */
#ifndef WYJIT_CONV1D_UPDATE_H_
#define WYJIT_CONV1D_UPDATE_H_

#include <stddef.h>
#include <stdint.h>

#include "wyjit/state_refs.h"
#include "wyjit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which of the two conv1d_update kernels a launch runs (both compute the same values bit for
 *  bit; they differ in how the work is spread over threads). */
typedef enum wyjit_conv1d_path {
  WYJIT_CONV1D_PATH_AUTOMATIC = 0, /**< narrow for launches with little work, else wide */
  WYJIT_CONV1D_PATH_WIDE = 1,      /**< a thread owns 16 bytes of channels and a run of tokens */
  WYJIT_CONV1D_PATH_NARROW = 2     /**< a thread owns 4 bytes of channels and one token */
} wyjit_conv1d_path;

/** Arguments of one conv1d_update launch. Fields a variant does not use are ignored. */
typedef struct wyjit_conv1d_update_args {
  /** sizeof(wyjit_conv1d_update_args): set by wyjit_conv1d_update_args_init (C) or the default
   *  (C++) */
  size_t struct_size WYJIT_DEFAULT(sizeof(wyjit_conv1d_update_args));
  int32_t batch WYJIT_DEFAULT(0);    /**< sequences */
  int32_t channels WYJIT_DEFAULT(0); /**< channels per token (any count, e.g. 8192) */
  int32_t k WYJIT_DEFAULT(0);        /**< tokens per sequence: the variant's K */
  int32_t width WYJIT_DEFAULT(0);    /**< filter width: the variant's W */

  const void* x WYJIT_DEFAULT(nullptr);      /**< [batch*K, x_stride] io dtype */
  void* y WYJIT_DEFAULT(nullptr);            /**< [batch*K, y_stride] io dtype */
  int64_t x_stride WYJIT_DEFAULT(0);         /**< >= channels */
  int64_t y_stride WYJIT_DEFAULT(0);         /**< >= channels */
  const void* weight WYJIT_DEFAULT(nullptr); /**< [channels][W] weight dtype */
  const void* bias WYJIT_DEFAULT(nullptr);   /**< [channels] weight dtype (option `bias`) */

  /* a state tile is one sequence's conv state in the io dtype: column j of channel c at
   * c*state_channel_stride + j*state_col_stride; one of the two strides must be 1 */
  int64_t state_cols WYJIT_DEFAULT(0);           /**< >= W-1 (intermediate), >= W-1+K (window) */
  int64_t state_channel_stride WYJIT_DEFAULT(0); /**< >= state_cols when state_col_stride is 1 */
  int64_t state_col_stride WYJIT_DEFAULT(0);     /**< >= channels when state_channel_stride is 1 */

  /** S_b is read; intermediate form: the state after token t is write t (K writes; t = K-1 goes
   *  over S_b with strided and table addressing); window form: one write, the new window (over
   *  S_b with strided and table addressing). */
  wyjit_state_refs states;

  /** window form: [batch] int32, device memory: the first history column of each sequence (the
   *  accepted count of its previous launch; outside [0, state_cols - (W-1)]: padding) */
  const int32_t* window_offset WYJIT_DEFAULT(nullptr);

  /** wyjit_conv1d_path: automatic unless measuring or testing one of the kernels */
  int32_t path WYJIT_DEFAULT(WYJIT_CONV1D_PATH_AUTOMATIC);
} wyjit_conv1d_update_args;

/** Resets `args` to its defaults and sets struct_size. */
WYJIT_API void wyjit_conv1d_update_args_init(wyjit_conv1d_update_args* args);

/** Checks `args` against the variant named `spec` without launching (no GPU needed). */
WYJIT_API wyjit_status wyjit_check_conv1d_update(const char* spec,
                                                 const wyjit_conv1d_update_args* args);

/** Checks, then launches `kernel` (a conv1d_update variant) on `stream`. Allocates nothing and
 *  never synchronises, so it may be captured in a CUDA graph (any capture mode). */
WYJIT_API wyjit_status wyjit_launch_conv1d_update(const wyjit_kernel* kernel,
                                                  const wyjit_conv1d_update_args* args,
                                                  void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* WYJIT_CONV1D_UPDATE_H_ */
