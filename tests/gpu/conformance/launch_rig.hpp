// SPDX-License-Identifier: Apache-2.0
// One family launch at fixed device addresses (so that a captured graph stays valid), refilled
// with a new random problem before each launch and checked afterwards against the float64
// reference: every output and state the launch must write, every other byte of every buffer
// (padding, other tiles, inputs) unchanged, and the guard regions around every buffer intact.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/conformance/family_case.hpp"
#include "gpu/conformance/guarded_buffer.hpp"
#include "gpu/conformance/state_binding.hpp"

namespace wyjit::test::conformance {

/// What one launch produced.
struct RigResult {
  std::vector<CheckedTensor> checks;
  std::vector<std::vector<std::uint8_t>> canonical;  ///< FamilyLaunch::canonical
};

class LaunchRig {
 public:
  /// Allocates every buffer in the current context and binds the arguments.
  LaunchRig(const FamilyCase& family, const Sample& sample, const RigOptions& options = {});
  LaunchRig(const LaunchRig&) = delete;
  LaunchRig& operator=(const LaunchRig&) = delete;

  const KernelSpec& spec() const noexcept { return sample_.spec; }
  const Sample& sample() const noexcept { return sample_; }
  const RigOptions& options() const noexcept { return options_; }
  FamilyLaunch& launch_args() noexcept { return *launch_; }

  /// Enqueues on `stream` a new launch's data from `seed`: inputs, NaN-poisoned outputs and
  /// pool with each sequence's initial state in place, new slot arrays or restaged tables (the
  /// pool's, then the family's FamilyLaunch::stage). The
  /// host images live until the next prepare(): synchronise `stream` after the launch first.
  void prepare(std::uint64_t seed, CUstream stream, const Padding& padding = {});

  /// The launch through the C++ API or the C API, on `stream`.
  void launch(const Kernel& kernel, CUstream stream) const;
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const;

  /// After prepare() completed, before the launch: every element the launch must write is NaN,
  /// but for what it overwrites in place (the tiles holding its initial states, and the
  /// family's FamilyLaunch::in_place).
  std::vector<CheckedTensor> check_poisoned() const;

  /// After the launch finished: the family's comparisons, then what must be unchanged.
  RigResult result() const;

  /// After prepare(), before the launch: overwrites every device index array of the launch
  /// (slot arrays, replay cursors and accepted counts, window offsets: int32 arrays named so)
  /// with hostile values (negative, INT_MIN, INT_MAX, far past any pool, random) and enqueues
  /// their upload on `stream`; returns the names of the arrays it overwrote.
  std::vector<std::string> corrupt_indices(std::uint64_t seed, CUstream stream);
  /// After a launch finished: bytes changed in the guard regions around every buffer.
  std::size_t guard_bytes_changed() const;

  /// Family, variant, kernel, layout, sizes, padding and seed of the last prepare().
  std::string describe() const;

 private:
  std::vector<GuardedBuffer::Contents> download() const;

  const FamilyCase& family_;
  Sample sample_;
  RigOptions options_;
  std::unique_ptr<FamilyLaunch> launch_;
  std::unique_ptr<StateBinder> binder_;
  std::vector<BufferSpec> specs_;  // the family's buffers, the pool, the binder's arrays
  std::vector<GuardedBuffer> buffers_;
  std::size_t family_buffers_ = 0;
  // The last prepare(): its plan and the images uploaded (alive until the next one).
  TilePlan plan_;
  std::vector<std::vector<std::uint8_t>> images_;
  std::uint64_t seed_ = 0;
  Padding padding_;
};

}  // namespace wyjit::test::conformance
