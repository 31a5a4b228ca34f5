/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file wyjit.h
 * @brief The C API of wyjit, for engines in C, Rust (extern "C"), Python (ctypes) and anything
 *        else that speaks the C ABI.
 *
 * Everything the C++ API does is here, behind opaque handles and plain structs:
 *
 * - a manager (wyjit_jit) that stamps, compiles (NVRTC), caches and loads kernel variants;
 * - variants as a plain struct (wyjit_spec) or by canonical name
 *   ("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128");
 * - typed, checked, graph-capturable launches, one per family (wyjit_launch_gdn_verify,
 *   wyjit_launch_conv1d_update);
 * - a pointer-table stager for table addressing, for both families (wyjit_table_stager);
 * - counters, and precompiling a list of variants for a target without a GPU.
 *
 * The launches and the stager are declared in wyjit_launch.h, which this header includes at
 * its end: include wyjit.h.
 *
 * Conventions:
 *
 * - Every fallible function returns a wyjit_status. On anything but WYJIT_OK, the calling
 *   thread's wyjit_last_error() holds a message naming the argument and its value (or the
 *   compiler log, the variant, the driver error). No C++ exception ever crosses this API.
 * - Structs that may grow (wyjit_jit_options, wyjit_gdn_verify_args,
 *   wyjit_conv1d_update_args, wyjit_counters) start
 *   with `struct_size`; fill them with their *_init function (which sets it), then change the
 *   fields you need. A size this library does not know is refused with
 *   WYJIT_ERROR_INVALID_ARGUMENT, so a header/library mismatch is an error, not a crash.
 * - Enumerations are passed as int32_t fields holding the WYJIT_* constants below.
 * - Device pointers and streams are `void*`: a CUdeviceptr cast to a pointer, a CUstream or
 *   a cudaStream_t. A NULL stream is the legacy default stream.
 * - Output handles are written only on success.
 * - Thread safety: a wyjit_jit may be used from many threads at once. A wyjit_table_stager
 *   is not thread-safe (one owner). Launches need the right CUDA context current on the
 *   calling thread (the one the kernel was fetched for), as every CUDA call does.
 */
#ifndef WYJIT_WYJIT_H_
#define WYJIT_WYJIT_H_

#include <stddef.h>
#include <stdint.h>

/** @name Version of this header. wyjit_version() reports the library's. */
/** @{ */
#define WYJIT_VERSION_MAJOR 0
#define WYJIT_VERSION_MINOR 1
#define WYJIT_VERSION_PATCH 0
/** MAJOR * 1000000 + MINOR * 1000 + PATCH, comparable with wyjit_version(). */
#define WYJIT_VERSION \
  (WYJIT_VERSION_MAJOR * 1000000 + WYJIT_VERSION_MINOR * 1000 + WYJIT_VERSION_PATCH)
/** @} */

#if defined(__GNUC__)
#define WYJIT_API __attribute__((visibility("default")))
#else
#define WYJIT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------------------ */

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

/** Printable name of a status ("ok", "invalid_spec", ...); "unknown" for other values. */
WYJIT_API const char* wyjit_status_name(wyjit_status status);

/**
 * The message of the most recent call on this thread that returned an error ("" if none).
 * Valid until the next failing call on the same thread. Successful calls leave it alone.
 */
WYJIT_API const char* wyjit_last_error(void);

/** The library's version, encoded like WYJIT_VERSION. Compare with WYJIT_VERSION at run time. */
WYJIT_API uint32_t wyjit_version(void);

/** The library's version as text, "MAJOR.MINOR.PATCH". */
WYJIT_API const char* wyjit_version_string(void);

/* ---- logging ------------------------------------------------------------------------------ */

/** Levels of the process-wide "wyjit" logger (spdlog, to stderr). */
enum {
  WYJIT_LOG_FROM_ENV = -1, /**< in wyjit_jit_options: leave the level as it is */
  WYJIT_LOG_TRACE = 0,
  WYJIT_LOG_DEBUG = 1,
  WYJIT_LOG_INFO = 2,
  WYJIT_LOG_WARN = 3, /**< the default, unless WYJIT_LOG_LEVEL says otherwise */
  WYJIT_LOG_ERROR = 4,
  WYJIT_LOG_CRITICAL = 5,
  WYJIT_LOG_OFF = 6
};

/** Sets the level of the process-wide "wyjit" logger (WYJIT_LOG_TRACE..WYJIT_LOG_OFF). */
WYJIT_API wyjit_status wyjit_set_log_level(int32_t level);

/* ---- kernel variants ------------------------------------------------------------------------ */

enum {
  WYJIT_FAMILY_GDN_VERIFY = 0,   /**< WY-form gated delta rule verify of K tokens */
  WYJIT_FAMILY_CONV1D_UPDATE = 1 /**< K-token causal depthwise conv1d update */
};
enum { WYJIT_DTYPE_F32 = 0, WYJIT_DTYPE_F16 = 1, WYJIT_DTYPE_BF16 = 2 };
enum {
  WYJIT_ADDRESSING_STRIDED = 0, /**< base pointers plus explicit strides */
  WYJIT_ADDRESSING_TABLE = 1,   /**< device tables of per-sequence state pointers */
  WYJIT_ADDRESSING_SLOT = 2     /**< one state pool indexed by int32 read/write slots */
};
enum {
  WYJIT_LAYOUT_VK = 0, /**< a head's state is [dv][dk]: dk contiguous */
  WYJIT_LAYOUT_KV = 1  /**< a head's state is [dk][dv]: dv contiguous */
};
enum {
  WYJIT_ROLLBACK_INTERMEDIATE = 0, /**< conv1d_update writes the conv state after every token */
  WYJIT_ROLLBACK_WINDOW = 1        /**< conv1d_update keeps the last W-1+K inputs */
};

/**
 * One kernel variant: every compile-time choice (mirrors wyjit::KernelSpec). Each family uses
 * some of the fields; the others must keep their wyjit_spec_init values.
 */
typedef struct wyjit_spec {
  int32_t family;       /**< WYJIT_FAMILY_* */
  int32_t k;            /**< tokens verified per sequence, 1..32 */
  int32_t io;           /**< WYJIT_DTYPE_* of q, k, v, out (and raw gating inputs) */
  int32_t state;        /**< gdn_verify: WYJIT_DTYPE_* of the recurrent state */
  int32_t addressing;   /**< WYJIT_ADDRESSING_* */
  int32_t layout;       /**< gdn_verify: WYJIT_LAYOUT_* */
  int32_t dk;           /**< gdn_verify: key head dim, 64, 128 or 256 */
  int32_t dv;           /**< gdn_verify: value head dim, 64, 128 or 256 */
  int32_t l2norm_qk;    /**< gdn_verify: 1 normalises q and k rows in the kernel; else 0 */
  int32_t fused_gating; /**< gdn_verify: 1 computes g, beta from a, b, A_log, dt_bias; else 0 */
  int32_t width;        /**< conv1d_update: filter width W, 2..8 */
  int32_t weight;       /**< conv1d_update: WYJIT_DTYPE_* of weight and bias (io or f32) */
  int32_t bias;         /**< conv1d_update: 1 adds a per-channel bias; else 0 */
  int32_t silu;         /**< conv1d_update: 1 applies SiLU to the output; else 0 */
  int32_t rollback;     /**< conv1d_update: WYJIT_ROLLBACK_* */
} wyjit_spec;

/** The default variant: gdn_verify, K 4, io bf16, state f32, strided, vk, dk = dv = 128. */
WYJIT_API void wyjit_spec_init(wyjit_spec* spec);

/**
 * Parses a canonical name: `gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]`
 * (`dkA.dvB` when the head dims differ) or
 * `conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]`.
 * WYJIT_ERROR_INVALID_SPEC names the bad field.
 */
WYJIT_API wyjit_status wyjit_spec_parse(const char* name, wyjit_spec* out);

/**
 * Writes the canonical name of `spec` into `buffer` (NUL-terminated). `*length` (when not NULL)
 * receives the name's length without the NUL. With buffer == NULL and size == 0 only the length
 * is reported; a buffer too small for length + 1 bytes is WYJIT_ERROR_INVALID_ARGUMENT and
 * leaves it untouched.
 */
WYJIT_API wyjit_status wyjit_spec_format(const wyjit_spec* spec, char* buffer, size_t size,
                                         size_t* length);

/** WYJIT_OK when this build supports the variant; else WYJIT_ERROR_INVALID_SPEC and why. */
WYJIT_API wyjit_status wyjit_spec_validate(const wyjit_spec* spec);

/* ---- the manager ----------------------------------------------------------------------------- */

/** A wyjit::Jit: owns the memory and disk caches and the loaded kernels. */
typedef struct wyjit_jit wyjit_jit;

/** In wyjit_jit_options: take the setting from the environment, as wyjit::JitOptions::from_env. */
#define WYJIT_FROM_ENV (-1)

/**
 * How a manager finds and stores binaries (mirrors wyjit::JitOptions). Settings not listed
 * here (process locks, the size bound, ...) come from the environment.
 */
typedef struct wyjit_jit_options {
  size_t struct_size; /**< sizeof(wyjit_jit_options), set by wyjit_jit_options_init */
  /** Writable cache root; NULL or "": $WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit, else
   *  ~/.cache/wyjit. */
  const char* cache_dir;
  /** Precompiled roots searched, in order, before the writable root and never written. NULL:
   *  $WYJIT_CACHE_RO_DIRS (colon-separated); else exactly these num_read_only_dirs paths. */
  const char* const* read_only_dirs;
  size_t num_read_only_dirs;
  /** 1: a variant found in no cache root is WYJIT_ERROR_CACHE_MISS_NO_JIT naming it, never a
   *  compile; 0: compile it; WYJIT_FROM_ENV (default): $WYJIT_NO_JIT. */
  int32_t no_jit;
  int32_t disk_cache; /**< 1 (default): read and write the disk cache; 0: memory only */
  /** WYJIT_LOG_*: sets the process-wide logger's level when the manager is created;
   *  WYJIT_LOG_FROM_ENV (default) leaves it ($WYJIT_LOG_LEVEL, else warn). */
  int32_t log_level;
} wyjit_jit_options;

/** Defaults: everything from the environment, disk cache on, log level unchanged. */
WYJIT_API void wyjit_jit_options_init(wyjit_jit_options* options);

/** Creates a manager. `options` may be NULL (the defaults). Needs no GPU. */
WYJIT_API wyjit_status wyjit_jit_create(const wyjit_jit_options* options, wyjit_jit** out);

/** Destroys a manager and unloads its kernels; every wyjit_kernel from it becomes invalid.
 *  NULL is ignored. */
WYJIT_API void wyjit_jit_destroy(wyjit_jit* jit);

/** The writable cache root in use ("" when the disk cache is off); valid while `jit` lives. */
WYJIT_API const char* wyjit_jit_cache_dir(const wyjit_jit* jit);

/** Counters since the manager was created (mirrors wyjit::JitCounters). Every compile request
 *  ends in exactly one of: a memory hit, a read-only disk hit, a disk hit or a miss. */
typedef struct wyjit_counters {
  size_t struct_size;        /**< sizeof(wyjit_counters): set by wyjit_counters_init */
  uint64_t memory_hits;      /**< served from memory (or from another thread's compile) */
  uint64_t ro_disk_hits;     /**< read from a read-only root */
  uint64_t disk_hits;        /**< read from the writable root */
  uint64_t misses;           /**< found in no cache tier */
  uint64_t compiles;         /**< successful NVRTC compiles */
  uint64_t corrupt_entries;  /**< disk entries rejected (then rebuilt) */
  uint64_t evictions;        /**< entries removed to keep the writable root in bounds */
  uint64_t write_failures;   /**< entries that could not be written (kept in memory only) */
  uint64_t lock_waits;       /**< compiles that first waited for another process */
  uint64_t lock_timeouts;    /**< waits that gave up (the variant was compiled anyway) */
  uint64_t loads;            /**< driver loads of a binary (wyjit_jit_get_kernel) */
  double compile_ms_total;   /**< NVRTC time */
  double disk_read_ms_total; /**< disk lookups, hit or not */
  double lock_wait_ms_total; /**< waiting for other processes' locks */
  double load_ms_total;      /**< driver load time */
} wyjit_counters;

/** Zeroes `counters` and sets its struct_size. */
WYJIT_API void wyjit_counters_init(wyjit_counters* counters);

/** Reads the counters; `out->struct_size` must be set. */
WYJIT_API wyjit_status wyjit_jit_get_counters(const wyjit_jit* jit, wyjit_counters* out);

/**
 * Compiles `count` variants for `target` ("sm_90", "sm_90a" or "compute_90" for PTX) into the
 * caches, on `jobs` threads (<= 0: one per hardware thread). Needs no GPU and never touches the
 * driver. `statuses` (NULL, or `count` entries) receives each variant's status. Returns WYJIT_OK
 * when all succeed, else the first failure's status with every failure in wyjit_last_error().
 */
WYJIT_API wyjit_status wyjit_precompile(wyjit_jit* jit, const wyjit_spec* specs, size_t count,
                                        const char* target, int32_t jobs, wyjit_status* statuses);

/* ---- kernels ------------------------------------------------------------------------------ */

/** A loaded kernel variant. Owned by its manager: valid until wyjit_jit_destroy. */
typedef struct wyjit_kernel wyjit_kernel;

/**
 * The kernel for `spec` on the device of the calling thread's current CUDA context, compiling
 * or loading as needed (the first call per variant may take a while; later calls are cheap).
 * Call it once per variant and device, before capturing a graph. The same handle is returned
 * for the same variant on every device of one architecture.
 */
WYJIT_API wyjit_status wyjit_jit_get_kernel(wyjit_jit* jit, const wyjit_spec* spec,
                                            wyjit_kernel** out);

/** wyjit_jit_get_kernel for a canonical name. */
WYJIT_API wyjit_status wyjit_jit_get_kernel_by_name(wyjit_jit* jit, const char* name,
                                                    wyjit_kernel** out);

/** The variant of a kernel. */
WYJIT_API wyjit_status wyjit_kernel_get_spec(const wyjit_kernel* kernel, wyjit_spec* out);

/* ---- device helpers ----------------------------------------------------------------------------
 * Small conveniences over the CUDA driver (loaded at run time) for programs that have no CUDA
 * runtime of their own: tools, tests, examples. Engines normally use their own. */

/** CUDA devices visible; 0 (and WYJIT_OK) when there is no driver or no device. */
WYJIT_API wyjit_status wyjit_device_count(int32_t* count);

/** Why wyjit_device_count reports 0 ("" when a device is usable), e.g. "no NVIDIA driver on this
 *  machine: ...". Valid until the next call on the same thread. */
WYJIT_API const char* wyjit_device_unavailable_reason(void);

/** Makes device `ordinal`'s primary context current on the calling thread (retaining it). */
WYJIT_API wyjit_status wyjit_device_make_current(int32_t ordinal);

/** Waits for all work of the current context. */
WYJIT_API wyjit_status wyjit_device_synchronize(void);

/** cuMemAlloc in the current context. */
WYJIT_API wyjit_status wyjit_mem_alloc(size_t bytes, void** out);

/** cuMemFree; NULL is ignored. */
WYJIT_API wyjit_status wyjit_mem_free(void* device_ptr);

/** Synchronous copy of `bytes` from host to device. */
WYJIT_API wyjit_status wyjit_memcpy_htod(void* device_dst, const void* host_src, size_t bytes);

/** Synchronous copy of `bytes` from device to host. */
WYJIT_API wyjit_status wyjit_memcpy_dtoh(void* host_dst, const void* device_src, size_t bytes);

#ifdef __cplusplus
}
#endif

/* The families' launch arguments, checks and launches, and the pointer-table stager. */
#include "wyjit_launch.h"

#endif /* WYJIT_WYJIT_H_ */
