/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file status.h
 * @brief The C API's status codes and handle types, shared by wyjit.h and the families' headers.
 */
#ifndef WYJIT_STATUS_H_
#define WYJIT_STATUS_H_

#include "wyjit/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every fallible call. The error values mirror wyjit::ErrorCode. */
typedef enum wyjit_status {
  WYJIT_OK = 0,
  WYJIT_ERROR_INVALID_SPEC = 1,      /**< a spec field or canonical name is not allowed */
  WYJIT_ERROR_INVALID_ARGUMENT = 2,  /**< a launch or API argument failed a check */
  WYJIT_ERROR_COMPILE_FAILED = 3,    /**< NVRTC rejected the stamped source (log in message) */
  WYJIT_ERROR_CACHE_IO = 4,          /**< the disk cache could not be read or written */
  WYJIT_ERROR_CACHE_MISS_NO_JIT = 5, /**< no-JIT mode and no cached binary for the variant */
  WYJIT_ERROR_DRIVER = 6,            /**< the CUDA driver is missing or returned an error */
  WYJIT_ERROR_NVRTC = 7,             /**< an NVRTC call other than compilation failed */
  WYJIT_ERROR_INTERNAL = 8,          /**< a wyjit bug, or the host ran out of memory */
  WYJIT_STATUS_MAX_ENUM = 0x7fffffff /**< never returned: makes the type a 32-bit int */
} wyjit_status;

/** A loaded kernel variant (all its kernels). Owned by its manager: valid until
 *  wyjit_jit_destroy. */
typedef struct wyjit_kernel wyjit_kernel;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* WYJIT_STATUS_H_ */
