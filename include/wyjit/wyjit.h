/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file wyjit.h
 * @brief The C API of wyjit, for engines in C, Rust (extern "C"), Python (ctypes) and anything
 *        else that speaks the C ABI.
 *
 * Everything the C++ API does is here, behind opaque handles and plain structs:
 *
 * - a manager (wyjit_jit) that stamps, compiles (NVRTC), caches and loads kernel variants;
 * - variants by canonical name ("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"), with the
 *   families' fields described by the library (wyjit_family_field), so that no language
 *   binding keeps a copy of them;
 * - typed, checked, graph-capturable launches, one per family, declared in the family's header
 *   (wyjit/gdn_verify.h, ...), which this header includes at its end: include wyjit.h;
 * - a pointer-table stager for table addressing, for every family (wyjit_table_stager);
 * - counters, and precompiling a list of variants for a target without a GPU.
 *
 * Conventions:
 *
 * - Every fallible function returns a wyjit_status. On anything but WYJIT_OK, the calling
 *   thread's wyjit_last_error() holds a message naming the argument and its value (or the
 *   compiler log, the variant, the driver error). No C++ exception ever crosses this API.
 * - Structs that may grow (wyjit_jit_options, the families' launch arguments, wyjit_counters,
 *   wyjit_field_info) start with `struct_size`; fill them with their *_init function (which
 *   sets it), then change the fields you need. A size this library does not know is refused
 *   with WYJIT_ERROR_INVALID_ARGUMENT, so a header/library mismatch is an error, not a crash.
 *   The launch argument structs are the C++ API's (wyjit::GdnVerifyArgs is
 *   wyjit_gdn_verify_args).
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
#define WYJIT_VERSION_MINOR 2
#define WYJIT_VERSION_PATCH 0
/** MAJOR * 1000000 + MINOR * 1000 + PATCH, comparable with wyjit_version(). */
#define WYJIT_VERSION \
  (WYJIT_VERSION_MAJOR * 1000000 + WYJIT_VERSION_MINOR * 1000 + WYJIT_VERSION_PATCH)
/** @} */

#include "wyjit/export.h"
#include "wyjit/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------------------ */

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

/* ---- kernel variants ------------------------------------------------------------------------
 * A variant crosses this API as its canonical name. The families and their fields are described
 * by the library, so that a binding builds and checks names without a copy of the fields. */

/** Number of kernel families. */
WYJIT_API size_t wyjit_family_count(void);

/** Name of family `index` (0..wyjit_family_count()-1), e.g. "gdn_verify"; NULL when out of range.
 *  Static storage. */
WYJIT_API const char* wyjit_family_name(size_t index);

/** What kind of value a field holds (wyjit_field_info.kind). */
enum {
  WYJIT_FIELD_INTEGER = 0, /**< a number in [min, max], or one of `allowed` */
  WYJIT_FIELD_CHOICE = 1,  /**< one of `choices` (its value is the index) */
  WYJIT_FIELD_FLAG = 2     /**< on or off */
};

/** One field of a family's spec (mirrors wyjit::FieldInfo). Every pointer is static storage. */
typedef struct wyjit_field_info {
  size_t struct_size; /**< sizeof(wyjit_field_info): set it before wyjit_family_field */
  const char* name;   /**< identifier, e.g. "k", "io" */
  const char* label;  /**< as messages name it, e.g. "K", "io dtype" */
  int32_t kind;       /**< WYJIT_FIELD_* */
  /** how the canonical name spells the value: prefix + number or choice ("k4", "io_bf16"; ""
   *  spells the choice alone), or the word of a flag that is on */
  const char* spelling;
  const char* const* choices; /**< CHOICE: the names, by value */
  size_t num_choices;
  int32_t min;            /**< INTEGER: smallest allowed value */
  int32_t max;            /**< INTEGER: largest allowed value */
  const int32_t* allowed; /**< INTEGER: the allowed values when num_allowed > 0 */
  size_t num_allowed;
  int32_t default_value;       /**< the value (CHOICE: index, FLAG: 0 or 1) when not given */
  const char* standard;        /**< values of the standard matrix as `--set` spells them, or NULL */
  const char* merged_spelling; /**< INTEGER: prefix when equal to the next field ("d"), or NULL */
  const char* same_as; /**< CHOICE: a field whose name may stand for its value ("io"), or NULL */
  const char* doc;     /**< one line */
} wyjit_field_info;

/** Number of fields of `family` (into *count). WYJIT_ERROR_INVALID_SPEC for an unknown family. */
WYJIT_API wyjit_status wyjit_family_field_count(const char* family, size_t* count);

/** Field `index` of `family` (in name order); `out->struct_size` must be set. */
WYJIT_API wyjit_status wyjit_family_field(const char* family, size_t index, wyjit_field_info* out);

/**
 * The canonical name of the variant of `family` whose fields `fields[i]` have the values
 * `values[i]` (as text: a number, a choice's name, "on"/"off", or for a choice with `same_as`
 * that field's name, e.g. weight = "io") and every other field its default; validated.
 * Text out (here and in every call that returns text into `buffer`): the text is written
 * NUL-terminated into `buffer`; `*length` (when not NULL) receives its length without the NUL;
 * buffer == NULL with size == 0 reports the length only; a buffer too small for length + 1 bytes
 * is WYJIT_ERROR_INVALID_ARGUMENT and is left untouched.
 * WYJIT_ERROR_INVALID_SPEC names a bad field or value.
 */
WYJIT_API wyjit_status wyjit_spec_build(const char* family, const char* const* fields,
                                        const char* const* values, size_t count, char* buffer,
                                        size_t size, size_t* length);

/** WYJIT_OK when `name` is the canonical name of a variant this build supports; else
 *  WYJIT_ERROR_INVALID_SPEC and why (the field, its value, what is allowed). */
WYJIT_API wyjit_status wyjit_spec_validate(const char* name);

/** The value of `field` in the variant `name`, as text ("4", "bf16", "on"; text out as in
 *  wyjit_spec_build). The family of a name is field "family". */
WYJIT_API wyjit_status wyjit_spec_field(const char* name, const char* field, char* buffer,
                                        size_t size, size_t* length);

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
 * Compiles the `count` variants named `names` for `target` ("sm_90", "sm_90a" or "compute_90" for
 * PTX) into the caches, on `jobs` threads (<= 0: one per hardware thread). Needs no GPU and never
 * touches the driver. `statuses` (NULL, or `count` entries) receives each variant's status. Returns
 * WYJIT_OK when all succeed, else the first failure's status with every failure in
 * wyjit_last_error().
 */
WYJIT_API wyjit_status wyjit_precompile(wyjit_jit* jit, const char* const* names, size_t count,
                                        const char* target, int32_t jobs, wyjit_status* statuses);

/* ---- kernels ------------------------------------------------------------------------------ */

/**
 * The kernels of the variant `name` on the device of the calling thread's current CUDA context,
 * compiling or loading as needed (the first call per variant may take a while; later calls are
 * cheap). Call it once per variant and device, before capturing a graph. The same handle is
 * returned for the same variant on every device of one architecture.
 */
WYJIT_API wyjit_status wyjit_jit_get_kernel(wyjit_jit* jit, const char* name, wyjit_kernel** out);

/** The canonical name of a kernel's variant (text out as in wyjit_spec_build). */
WYJIT_API wyjit_status wyjit_kernel_name(const wyjit_kernel* kernel, char* buffer, size_t size,
                                         size_t* length);

/* ---- NVRTC -----------------------------------------------------------------------------------
 * NVRTC is opened at run time, the first time something compiles (or asks about it), from the
 * first of these that loads: $WYJIT_NVRTC (a file, or a folder holding libnvrtc.so.<CUDA major>;
 * set, it is the only place tried); the folder given to wyjit_nvrtc_set_wheel_dir (the Python
 * package gives the lib folder of NVIDIA's nvidia-cuda-nvrtc wheel); a CUDA toolkit ($CUDA_HOME,
 * $CUDA_PATH, /usr/local/cuda, the toolkit this library was built with); the dynamic loader's
 * search path. Nothing links NVRTC, so the library loads on a machine with neither. */

/** The NVRTC file this build looks for: "libnvrtc.so.<CUDA major>" of the headers it was built
 *  with (e.g. "libnvrtc.so.13"). Static storage. */
WYJIT_API const char* wyjit_nvrtc_file_name(void);

/** The lib folder of NVIDIA's nvidia-cuda-nvrtc wheel, tried after $WYJIT_NVRTC and before any
 *  toolkit; NULL or "" forgets it. Call it before anything compiles: once NVRTC is loaded from
 *  elsewhere, WYJIT_ERROR_INVALID_ARGUMENT. */
WYJIT_API wyjit_status wyjit_nvrtc_set_wheel_dir(const char* dir);

/** Which NVRTC this process uses, and why. Every pointer is valid for the life of the process. */
typedef struct wyjit_nvrtc_info {
  size_t struct_size; /**< sizeof(wyjit_nvrtc_info), set by wyjit_nvrtc_info_init */
  const char* path;   /**< the file loaded (symlinks resolved); NULL when none could be */
  const char* rule;   /**< the search rule that found it, e.g. "WYJIT_NVRTC"; NULL when none */
  const char* tried;  /**< each place passed over, with why, one per line ("" when none) */
  int32_t version_major;
  int32_t version_minor;
} wyjit_nvrtc_info;

/** Zeroes `info` and sets its struct_size. */
WYJIT_API void wyjit_nvrtc_info_init(wyjit_nvrtc_info* info);

/** Loads NVRTC if it is not loaded yet and describes it; `info->struct_size` must be set. When
 *  none loads: WYJIT_ERROR_NVRTC naming every place tried, and `info` filled all the same. */
WYJIT_API wyjit_status wyjit_nvrtc_get_info(wyjit_nvrtc_info* info);

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

/* ---- pointer tables ----------------------------------------------------------------------- */

/**
 * A fixed device buffer for the pointer tables of table addressing (wyjit::TableStager). Its
 * address never changes, so a graph that captured a launch reading it stays valid when new
 * tables are staged between replays. The tables are `writes` slabs of per-sequence pointers, S_b
 * in slab 0 and the tile of write t in slab 1+t (wyjit/state_refs.h); make it for the tiles a
 * sequence writes per launch, as the family's arguments say (e.g. K for gdn_verify).
 */
typedef struct wyjit_table_stager wyjit_table_stager;

/** Allocates tables for `max_batch` sequences of `writes` tiles in the current context. */
WYJIT_API wyjit_status wyjit_table_stager_create(int32_t writes, int32_t max_batch,
                                                 wyjit_table_stager** out);

/** Frees the buffer (in the context it was allocated in). NULL is ignored. */
WYJIT_API void wyjit_table_stager_destroy(wyjit_table_stager* stager);

/**
 * Copies `states[b]` (S_b) and `inter[t][b]` (write t, t = 0..writes-2) for b < batch into the
 * buffer, asynchronously on `stream`; entries batch..max_batch-1 become NULL. A NULL entry is
 * padding, anywhere: a NULL states[b] makes the kernel skip sequence b whole (its inter[t][b] are
 * ignored); a NULL inter[t][b] skips writing that tile only. The arrays `states`, and `inter`
 * and each `inter[t]` when writes > 1, must be non-NULL (`inter` may be NULL when writes == 1),
 * and batch in 1..max_batch; on any error nothing is copied. The host arrays must stay alive
 * until the copy completes. Not allowed while `stream` is being captured: stage between
 * replays, on the replay stream.
 */
WYJIT_API wyjit_status wyjit_table_stager_stage(wyjit_table_stager* stager, void* const* states,
                                                void* const* const* inter, int32_t batch,
                                                void* stream);

/** The device tables, for wyjit_state_refs.tables (NULL for a NULL stager). */
WYJIT_API void* const* wyjit_table_stager_tables(const wyjit_table_stager* stager);

/** Entries per slab, for wyjit_state_refs.slab_stride (0 for a NULL stager). */
WYJIT_API int64_t wyjit_table_stager_slab_stride(const wyjit_table_stager* stager);

#ifdef __cplusplus
}
#endif

/* The families: each one's launch arguments, check and launch. */
#include "wyjit/conv1d_update.h"
#include "wyjit/gdn_replay.h"
#include "wyjit/gdn_verify.h"

/* Bindings' fast path: new arrays into a kept argument struct, read through DLPack. */
#include "wyjit/array_swap.h"

#endif /* WYJIT_WYJIT_H_ */
