// SPDX-License-Identifier: Apache-2.0
/// @file jit.hpp
/// @brief The Jit manager: spec -> stamped source -> cached binary -> loaded kernel.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wyjit/spec.hpp"

namespace wyjit {

/// A compilation target: `sm_90` (cubin), `sm_90a` (cubin, arch-specific) or `compute_90` (PTX).
struct WYJIT_API Target {
  int arch = 90;               ///< compute capability * 10 + minor
  bool arch_specific = false;  ///< the `a` suffix
  bool ptx = false;            ///< emit PTX for `compute_XX` instead of a cubin

  /// `sm_90`, `sm_90a` or `compute_90`.
  std::string name() const;
  /// Parses the forms name() prints. Throws Error(invalid_argument) on anything else.
  static Target parse(const std::string& text);
  friend bool operator==(const Target&, const Target&) = default;
};

/// One kernel of a compiled variant: its role in the family (`verify`, `wide`, ...) and its
/// mangled name inside the binary.
struct CompiledRole {
  std::string role;
  std::string lowered_name;
  friend bool operator==(const CompiledRole&, const CompiledRole&) = default;
};

/// What compiling one variant for one target produced: one binary holding every kernel of the
/// variant, by role.
struct CompiledKernel {
  KernelSpec spec;
  Target target;
  std::string key_hash;              ///< hex SHA-256 of the cache key text
  std::vector<CompiledRole> roles;   ///< in the family's role order
  std::vector<std::uint8_t> binary;  ///< cubin or PTX (NUL-terminated text)
  bool from_disk = false;            ///< true when read from the disk cache
  std::string path;                  ///< cache entry path, empty for memory-only
};

/// A variant loaded for use with the driver: one CUkernel per role, valid in every context of
/// the process, on every device of the architecture it was loaded for (whose shared-memory
/// attributes Jit::kernel set).
class WYJIT_API Kernel {
 public:
  static constexpr int kMaxRoles = 4;

  Kernel() = default;
  /// `handles` in the family's role order. NOTE: public so that tests and embedders can
  /// exercise launch guards without a GPU (Kernel(spec) has null handles); a null handle is
  /// refused at launch, after the guards.
  explicit Kernel(const KernelSpec& spec, std::span<const CUkernel> handles = {});

  const KernelSpec& spec() const noexcept { return spec_; }
  /// The kernel of role `role` (an index into the family's roles); null when not loaded.
  CUkernel handle(int role) const noexcept {
    return role >= 0 && role < kMaxRoles ? handles_[static_cast<std::size_t>(role)] : nullptr;
  }
  /// The family's role names, in order (e.g. {"wide", "narrow"}).
  std::span<const std::string_view> roles() const noexcept;

 private:
  KernelSpec spec_{};
  std::array<CUkernel, kMaxRoles> handles_{};
};

/// Counters an engine can read at any time (monotonic since the Jit was built). Every
/// Jit::compile call ends in exactly one of: a memory hit, a read-only disk hit, a disk hit or
/// a miss (a compile, or an error when no_jit is set or the compile fails).
struct JitCounters {
  std::uint64_t memory_hits = 0;      ///< served from memory (or from another thread's compile)
  std::uint64_t ro_disk_hits = 0;     ///< read from a read-only root (WYJIT_CACHE_RO_DIRS)
  std::uint64_t disk_hits = 0;        ///< read from the writable root
  std::uint64_t misses = 0;           ///< found in no tier
  std::uint64_t compiles = 0;         ///< successful NVRTC compiles
  std::uint64_t corrupt_entries = 0;  ///< disk entries rejected (then recompiled and rewritten)
  std::uint64_t evictions = 0;        ///< entries removed to keep the writable root in bounds
  std::uint64_t write_failures = 0;   ///< entries that could not be written (memory only)
  std::uint64_t lock_waits = 0;       ///< compiles that first waited for another process
  std::uint64_t lock_timeouts = 0;    ///< waits that gave up (the variant was compiled anyway)
  std::uint64_t loads = 0;            ///< driver loads of a binary (Jit::kernel)
  double compile_ms_total = 0.0;      ///< NVRTC time
  double disk_read_ms_total = 0.0;    ///< disk lookups (read and verify), hit or not
  double lock_wait_ms_total = 0.0;    ///< time spent waiting for other processes' locks
  double load_ms_total = 0.0;         ///< cuLibraryLoadData + cuLibraryGetKernel time
};

/// How a Jit finds and stores binaries. from_env() fills it from the environment; a
/// default-constructed one reads no environment, except that an empty cache_dir means the
/// default root ($WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit, else ~/.cache/wyjit).
struct WYJIT_API JitOptions {
  /// Writable cache root; empty: the default root above.
  std::string cache_dir{};
  /// Keep binaries in memory only (no disk reads or writes).
  bool disk_cache = true;
  /// Precompiled roots searched, in order, before the writable root; never written
  /// (WYJIT_CACHE_RO_DIRS, colon-separated).
  std::vector<std::string> read_only_dirs{};
  /// A miss is Error(cache_miss_no_jit) naming the variant, the target and every root searched,
  /// instead of a compile (WYJIT_NO_JIT=1). The writable root is then only read.
  bool no_jit = false;
  /// Per-key advisory locks, so that processes starting together compile each variant once.
  bool process_locks = true;
  /// Node-local directory for the lock files; empty: $XDG_RUNTIME_DIR/wyjit-locks, else
  /// <temp dir>/wyjit-locks-<uid> (WYJIT_LOCK_DIR).
  std::string lock_dir{};
  /// How long to wait for another process's lock before compiling anyway.
  std::uint32_t lock_timeout_ms = 30'000;
  /// Bound on the writable root's entries, least recently used evicted first; 0: no bound
  /// (WYJIT_CACHE_MAX_BYTES, e.g. 1073741824 or 1G).
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  /// Also write the stamped source next to each entry written, as `<entry>.cu`
  /// (WYJIT_SAVE_SOURCE=1).
  bool save_source = false;

  /// Every field from the environment (the variables named above and WYJIT_CACHE_DIR); a
  /// malformed value is reported through the log and the field keeps its default.
  static JitOptions from_env();
};

/// One directory a Jit searches for binaries, in search order.
struct CacheRootInfo {
  std::string path;
  bool read_only = false;  ///< searched, never written
  /// Why a root is read-only ("WYJIT_CACHE_RO_DIRS", "no_jit", or why it cannot be written).
  std::string reason;
};

/// Owns the caches. Thread-safe: many threads may ask for kernels at once; a variant is
/// compiled once (single flight per key) and a hit never waits on another key's compile.
class WYJIT_API Jit {
 public:
  explicit Jit(JitOptions options = JitOptions::from_env());
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  /// The kernels of `spec` on the current context's device, compiling or loading as needed, with
  /// their shared-memory attributes set on every device of the same architecture. Needs the
  /// CUDA driver and a current context.
  Kernel kernel(const KernelSpec& spec);

  /// The binary for `spec` and `target`, from memory, disk or NVRTC. Never touches the driver.
  std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, const Target& target);

  /// The writable cache root in use (empty when the disk cache is off).
  const std::string& cache_dir() const noexcept;

  /// Every disk root searched, in order: the read-only roots, then the writable root.
  std::vector<CacheRootInfo> cache_roots() const;

  JitCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The stamped CUDA source of a variant (what NVRTC compiles).
WYJIT_API std::string stamped_source(const KernelSpec& spec);

}  // namespace wyjit
