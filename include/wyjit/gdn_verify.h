/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file gdn_verify.h
 * @brief gdn_verify's launch arguments (the same struct in C and C++: wyjit::GdnVerifyArgs) and
 *        its C entry points. Included by wyjit.h.
 *
 * Gated delta rule verify of K tokens per sequence (the math: include/wyjit/gdn_verify.hpp and
 * DESIGN.md): reads each sequence's state S_b once, writes the state after every token (the
 * state after token t to write t of the state references, t = K-1 being the final state) and
 * the output of every token. Row (b, t) of q/k/v/g/beta/out is b*K + t; strides are in
 * elements of the pointed-to type.
 */
#ifndef WYJIT_GDN_VERIFY_H_
#define WYJIT_GDN_VERIFY_H_

#include <stddef.h>
#include <stdint.h>

#include "wyjit/state_refs.h"
#include "wyjit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Arguments of one gdn_verify launch. Fields a variant does not use are ignored. */
typedef struct wyjit_gdn_verify_args {
  /** sizeof(wyjit_gdn_verify_args): set by wyjit_gdn_verify_args_init (C) or the default (C++) */
  size_t struct_size WYJIT_DEFAULT(sizeof(wyjit_gdn_verify_args));
  int32_t batch WYJIT_DEFAULT(0);       /**< sequences */
  int32_t num_k_heads WYJIT_DEFAULT(0); /**< HK */
  int32_t num_v_heads WYJIT_DEFAULT(0); /**< HV, a multiple of HK */
  int32_t k WYJIT_DEFAULT(0);           /**< tokens per sequence: the variant's K */
  int32_t dk WYJIT_DEFAULT(0);          /**< the variant's dk */
  int32_t dv WYJIT_DEFAULT(0);          /**< the variant's dv */
  float scale WYJIT_DEFAULT(0.0f);      /**< multiplies q; 1/sqrt(dk) is the usual value */

  const void* q WYJIT_DEFAULT(nullptr);     /**< [batch*K, qk_stride] io dtype, head h at h*dk */
  const void* k_in WYJIT_DEFAULT(nullptr);  /**< [batch*K, qk_stride] io dtype */
  const void* v WYJIT_DEFAULT(nullptr);     /**< [batch*K, v_stride] io dtype, head vh at vh*dv */
  const float* g WYJIT_DEFAULT(nullptr);    /**< [batch*K, gb_stride] log-decay (<= 0), fp32 */
  const float* beta WYJIT_DEFAULT(nullptr); /**< [batch*K, gb_stride] fp32 */
  /* fused gating (variant option `gating`) replaces g and beta:
   * g = -exp(a_log[vh]) * softplus(a + dt_bias[vh]), beta = sigmoid(b) */
  const void* a WYJIT_DEFAULT(nullptr);        /**< [batch*K, gb_stride] io dtype */
  const void* b WYJIT_DEFAULT(nullptr);        /**< [batch*K, gb_stride] io dtype */
  const float* a_log WYJIT_DEFAULT(nullptr);   /**< [HV] fp32 */
  const float* dt_bias WYJIT_DEFAULT(nullptr); /**< [HV] fp32 */
  void* out WYJIT_DEFAULT(nullptr);            /**< [batch*K, o_stride] io dtype */
  int64_t qk_stride WYJIT_DEFAULT(0);          /**< >= HK*dk, a multiple of 4 */
  int64_t v_stride WYJIT_DEFAULT(0);           /**< >= HV*dv, a multiple of 4 */
  int64_t gb_stride WYJIT_DEFAULT(0);          /**< >= HV */
  int64_t o_stride WYJIT_DEFAULT(0);           /**< >= HV*dv */

  /** S_b is read; the state after token t is write t (K writes a sequence; t = K-1, the final
   *  state, goes over S_b with strided and table addressing). A tile is HV*dk*dv elements of
   *  the state dtype in the variant's layout. */
  wyjit_state_refs states;
} wyjit_gdn_verify_args;

/** Resets `args` to its defaults (all zero) and sets struct_size. */
WYJIT_API void wyjit_gdn_verify_args_init(wyjit_gdn_verify_args* args);

/** Checks `args` against the variant named `spec` without launching (no GPU needed). */
WYJIT_API wyjit_status wyjit_check_gdn_verify(const char* spec, const wyjit_gdn_verify_args* args);

/** Checks, then launches `kernel` (a gdn_verify variant) on `stream`. Allocates nothing and never
 *  synchronises, so it may be captured in a CUDA graph (any capture mode). */
WYJIT_API wyjit_status wyjit_launch_gdn_verify(const wyjit_kernel* kernel,
                                               const wyjit_gdn_verify_args* args, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* WYJIT_GDN_VERIFY_H_ */
