// SPDX-License-Identifier: Apache-2.0
/// @file jit.hpp
/// @brief The Jit manager: spec -> stamped source -> cached binary -> loaded kernel.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wyjit/spec.hpp"

namespace wyjit {

/// A compilation target: `sm_90` (cubin), `sm_90a` (cubin, arch-specific) or `compute_90` (PTX).
struct Target {
  int arch = 90;               ///< compute capability * 10 + minor
  bool arch_specific = false;  ///< the `a` suffix
  bool ptx = false;            ///< emit PTX for `compute_XX` instead of a cubin

  /// `sm_90`, `sm_90a` or `compute_90`.
  std::string name() const;
  /// Parses the forms name() prints. Throws Error(invalid_argument) on anything else.
  static Target parse(const std::string& text);
  friend bool operator==(const Target&, const Target&) = default;
};

/// What compiling one variant for one target produced.
struct CompiledKernel {
  KernelSpec spec;
  Target target;
  std::string key_hash;              ///< hex SHA-256 of the cache key text
  std::string lowered_name;          ///< mangled kernel name inside the binary
  std::vector<std::uint8_t> binary;  ///< cubin or PTX (NUL-terminated text)
  bool from_disk = false;            ///< true when read from the disk cache
  std::string path;                  ///< cache entry path, empty for memory-only
};

/// A kernel loaded for use with the driver: valid in every context of the process.
class Kernel {
 public:
  Kernel() = default;
  /// NOTE: public so that tests and embedders can exercise launch guards without a GPU;
  /// a null handle is refused at launch, after the guards.
  Kernel(KernelSpec spec, CUkernel handle) : spec_(spec), handle_(handle) {}

  const KernelSpec& spec() const noexcept { return spec_; }
  CUkernel handle() const noexcept { return handle_; }

 private:
  KernelSpec spec_{};
  CUkernel handle_ = nullptr;
};

/// Counters an engine can read at any time (monotonic since the Jit was built).
struct JitCounters {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t compiles = 0;
  std::uint64_t corrupt_entries = 0;  ///< disk entries rejected and rebuilt
  double compile_ms_total = 0.0;
  double disk_read_ms_total = 0.0;
};

/// How a Jit finds and stores binaries.
struct JitOptions {
  /// Writable cache root; empty: $WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit, else ~/.cache/wyjit.
  std::string cache_dir;
  /// Keep binaries in memory only (no disk reads or writes).
  bool disk_cache = true;
  /// Build options from the environment (`WYJIT_CACHE_DIR`, `WYJIT_LOG_LEVEL`).
  static JitOptions from_env();
};

/// Owns the caches. Thread-safe: many threads may ask for kernels at once; a variant is
/// compiled once (single flight per key) and a hit never waits on another key's compile.
class Jit {
 public:
  explicit Jit(JitOptions options = JitOptions::from_env());
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  /// The kernel for `spec` on the current context's device, compiling or loading as needed.
  /// Needs the CUDA driver and a current context.
  Kernel kernel(const KernelSpec& spec);

  /// The binary for `spec` and `target`, from memory, disk or NVRTC. Never touches the driver.
  std::shared_ptr<const CompiledKernel> compile(const KernelSpec& spec, const Target& target);

  /// The writable cache root in use (empty when the disk cache is off).
  const std::string& cache_dir() const noexcept;

  JitCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The stamped CUDA source of a variant (what NVRTC compiles).
std::string stamped_source(const KernelSpec& spec);

}  // namespace wyjit
