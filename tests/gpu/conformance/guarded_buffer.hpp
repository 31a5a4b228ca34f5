// SPDX-License-Identifier: Apache-2.0
// A device buffer between two guard regions of a known byte pattern: a launch that writes past
// either end of what it was given changes a guard, which check_guards() reports.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

class GuardedBuffer {
 public:
  /// `bytes` of data with `guard` bytes on each side (a multiple of 256, so the data keeps the
  /// allocation's alignment; 0: an allocation of exactly `bytes`, which is what
  /// compute-sanitizer's memcheck needs to see an access past the end). The guards are written
  /// now, synchronously; the data is left unset until the first upload.
  GuardedBuffer(std::size_t bytes, std::size_t guard);

  void* data() const noexcept { return reinterpret_cast<void*>(memory_.address() + guard_); }
  std::size_t bytes() const noexcept { return bytes_; }

  /// Enqueues a copy of `host` (exactly bytes() long) into the data on `stream`. `host` must stay
  /// alive until the copy completed.
  void upload_async(const std::vector<std::uint8_t>& host, CUstream stream) const;

  /// The data and the guards as they are now (synchronous).
  struct Contents {
    std::vector<std::uint8_t> data;
    std::size_t guard_bytes_changed = 0;  ///< bytes of either guard that differ from the pattern
  };
  Contents download() const;

 private:
  std::size_t bytes_ = 0;
  std::size_t guard_ = 0;
  DeviceBuffer memory_;
  std::vector<std::uint8_t> pattern_;  // both guards' bytes, before then after
};

}  // namespace wyjit::test::conformance
