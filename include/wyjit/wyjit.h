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
} wyjit_conv1d_update_args;

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

#endif /* WYJIT_WYJIT_H_ */
