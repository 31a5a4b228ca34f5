// SPDX-License-Identifier: Apache-2.0
// Device memory and context for GPU tests, through wyjit's run-time-loaded driver table.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "driver/driver_api.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::test {

/// Makes device 0's primary context current on the calling thread (once per thread).
void make_context_current();

/// One Jit per test process, caching under the build tree.
Jit& test_jit();

/// Compiles `specs` for device 0 on all cores, so that the tests that follow only load them.
void prewarm(const std::vector<KernelSpec>& specs);

/// Move-only device allocation.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr address() const noexcept { return ptr_; }
  void* get() const noexcept { return reinterpret_cast<void*>(ptr_); }
  std::size_t bytes() const noexcept { return bytes_; }

  void upload(const std::vector<std::uint8_t>& host);
  std::vector<std::uint8_t> download() const;

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace wyjit::test
