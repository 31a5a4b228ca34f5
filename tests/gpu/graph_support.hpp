// SPDX-License-Identifier: Apache-2.0
// Reusable verify launches for the graph, thread and multi-GPU tests: device buffers at fixed
// addresses (so a captured graph stays valid), refilled with new random inputs before each
// launch and checked against the double-precision sequential reference afterwards.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/compare.hpp"
#include "common/gdn_reference.hpp"
#include "common/half_types.hpp"
#include "gpu/gpu_support.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

/// CUDA devices the driver reports (0 when there is no driver).
int device_count();

/// True when this build accepts the addressing mode (validate_spec), so a test can skip modes
/// that are not built yet.
bool addressing_supported(Addressing addressing);

/// Makes device `ordinal`'s primary context current on this thread for the scope, then restores
/// whatever was current before.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  CUcontext context() const noexcept { return context_; }

 private:
  CUcontext previous_ = nullptr;
  CUcontext context_ = nullptr;
};

/// A non-blocking stream of the current context.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const noexcept { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

/// A graph captured from `stream` in CU_STREAM_CAPTURE_MODE_GLOBAL and instantiated. The
/// capture is ended even when `record` throws (the exception is rethrown).
class CapturedGraph {
 public:
  CapturedGraph(CUstream stream, const std::function<void()>& record);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(CUstream stream) const;

 private:
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

/// One comparison of a rig's result.
struct RigCheck {
  std::string name;
  Comparison comparison;
  double tolerance = 0;
  bool passed() const { return comparison.passed(tolerance); }
};

/// Everything one verify launch of `spec` needs, in the current context, at fixed addresses.
///
/// States live in one pool of tiles (HV*dk*dv elements each):
/// - strided: S_b is tile b, Hi_t(b) is tile batch + t*batch + b (token-major inter);
/// - table: each prepare() scatters S_b and Hi_t(b) over a pool twice that size and restages
///   the tables through a GdnTableStager;
/// - slot: each prepare() draws new read and write slots over a pool of batch*(K+1)+2 slots,
///   with sequence 0's first state skipped (write slot -1) when K > 1 and a padding column.
class VerifyRig {
 public:
  VerifyRig(const KernelSpec& spec, int batch, int hk, int hv);
  VerifyRig(const VerifyRig&) = delete;
  VerifyRig& operator=(const VerifyRig&) = delete;

  /// Enqueues on `stream` a new launch's data from `seed`: random inputs, poisoned outputs and
  /// pool, S0 in place (table: a new scatter, restaged; slot: new slot arrays). `padded`
  /// sequences at the end are padding (table: not staged, so their table entries are null;
  /// slot: read slot -1; strided: not allowed). The host images are reused: synchronise
  /// `stream` after the launch before the next prepare().
  void prepare(std::uint64_t seed, CUstream stream, int padded = 0);

  const GdnVerifyArgs& args() const noexcept { return args_; }
  const KernelSpec& spec() const noexcept { return spec_; }

  /// After the launch finished: outputs, every written state, and every element that must not
  /// have been written (padding sequences' outputs, the rest of the pool).
  std::vector<RigCheck> check() const;

  /// The output rows as the kernel wrote them (to compare runs bit for bit).
  std::vector<std::uint8_t> output_bytes() const;

  /// Variant, shapes and the seed of the last prepare().
  std::string describe() const;

 private:
  std::size_t tile_index_bytes(std::size_t tile) const;

  KernelSpec spec_;
  int batch_, hk_, hv_;
  std::size_t tile_ = 0;        // elements of one state tile
  std::size_t pool_tiles_ = 0;  // tiles in the pool
  std::uint64_t seed_ = 0;
  int padded_ = 0;
  GdnVerifyArgs args_;

  // Device buffers (fixed addresses).
  std::vector<DeviceBuffer> inputs_;  // q, k, v, g|a, beta|b, a_log, dt_bias
  std::optional<DeviceBuffer> out_, pool_, read_slot_, write_slot_;
  std::optional<GdnTableStager> stager_;

  // Host images of the last prepare(), alive until the next one (async uploads read them).
  std::vector<std::vector<std::uint8_t>> input_images_;
  std::vector<std::uint8_t> out_image_, pool_image_;
  std::vector<std::int32_t> read_slots_, write_slots_;
  std::vector<void*> staged_states_;
  std::vector<std::vector<void*>> staged_inter_;
  std::vector<void* const*> staged_inter_rows_;

  // Where the launch reads and writes, in tiles of the pool (nullopt: must not touch).
  std::vector<std::optional<std::size_t>> read_at_;   // [b]
  std::vector<std::optional<std::size_t>> write_at_;  // [b*K + t]
  GdnReference reference_;
};

/// Runs `body` on the current thread and returns "" or the message of what it threw.
std::string failure_of(const std::function<void()>& body);

}  // namespace wyjit::test
