/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file array_swap.h
 * @brief Swapping new arrays into a launch's argument struct in one call, reading each one
 *        through a framework's DLPack exchange API: the hot path of a prepared launch.
 *
 * A binding that checked a launch's arguments once (the Python package's prepared launches)
 * keeps the argument struct and, per step, only replaces pointers. Each new array must be
 * described exactly as the one it replaces (device, dtype, shape, strides), which is what the
 * binding's one-time checks established; wyjit_array_swap_run checks that in C and writes the
 * pointers. The launch that follows still runs every guard of its family (null, alignment,
 * ...), so nothing unchecked is ever launched.
 *
 * Frameworks describe a tensor without allocating or synchronising through DLPack's exchange
 * API (PyTorch: the capsule `torch.Tensor.__dlpack_c_exchange_api__`, whose
 * `dltensor_from_py_object_no_sync` is a wyjit_dltensor_from_object). That function needs the
 * caller's Python GIL: call wyjit_array_swap_run holding it (ctypes: a PYFUNCTYPE prototype),
 * and the launch after it without (it may wait on the driver).
 */
#ifndef WYJIT_ARRAY_SWAP_H_
#define WYJIT_ARRAY_SWAP_H_

#include <stddef.h>
#include <stdint.h>

#include "wyjit/export.h"
#include "wyjit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** DLPack's DLTensor (dlpack.h, ABI major version 1), field for field. */
typedef struct wyjit_dltensor {
  void* data;
  int32_t device_type; /**< DLDeviceType (kDLCUDA = 2) */
  int32_t device_id;
  int32_t ndim;
  uint8_t dtype_code; /**< DLDataTypeCode */
  uint8_t dtype_bits;
  uint16_t dtype_lanes;
  int64_t* shape;       /**< [ndim] */
  int64_t* strides;     /**< [ndim], in elements; NULL: compact row-major */
  uint64_t byte_offset; /**< the array starts at data + byte_offset */
} wyjit_dltensor;

/** Describes `object` in `out` with no allocation and no synchronisation; 0 on success (DLPack's
 *  DLPackDLTensorFromPyObjectNoSync). `out`'s shape and strides live until control returns. */
typedef int (*wyjit_dltensor_from_object)(void* object, wyjit_dltensor* out);

/** One array of a kept argument struct. */
typedef struct wyjit_array_slot {
  size_t word; /**< the 8-byte word of the argument struct that holds the array's pointer */
  /** What a new array must be: device, ndim, dtype, shape and strides (never NULL here);
   *  data and byte_offset are not read. */
  wyjit_dltensor expected;
} wyjit_array_slot;

/** A kept argument struct and the buffers of its swaps, filled once by the binding. */
typedef struct wyjit_array_swap {
  size_t struct_size; /**< sizeof(wyjit_array_swap) */
  void* args;         /**< the launch's argument struct */
  size_t args_size;   /**< its size in bytes */
  const wyjit_array_slot* slots;
  size_t num_slots;
  wyjit_dltensor_from_object from_object;
  const int32_t* which; /**< [capacity] the slot each object goes to */
  void* const* objects; /**< [capacity] the new arrays */
  uint64_t* previous;   /**< [capacity] out: the pointer each one replaced */
  size_t capacity;
  size_t refused; /**< out: on failure, the index of the object that did not fit */
} wyjit_array_swap;

/** Reads objects[0..count) through from_object, checks each against its slot and, only when
 *  every one fits, writes each one's pointer (data + byte_offset) into its word of `args`,
 *  the word's old value into previous[i]. Otherwise writes nothing into `args`, sets
 *  `refused` and returns WYJIT_ERROR_INVALID_ARGUMENT naming what differs (from_object's own
 *  failure too: a Python exception is then set as well). */
WYJIT_API wyjit_status wyjit_array_swap_run(wyjit_array_swap* swap, size_t count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WYJIT_ARRAY_SWAP_H_ */
