// SPDX-License-Identifier: Apache-2.0
// Contexts, device memory, streams and graphs for GPU tests, through wyjit's run-time-loaded
// driver table; the test process's Jit and C API managers.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::test {

/// Makes device 0's primary context current on the calling thread (once per thread).
void make_context_current();

/// The cache root every manager of the test process shares (under the build tree).
std::string test_cache_dir();

/// One Jit per test process, caching under test_cache_dir().
Jit& test_jit();

/// Compiles `specs` for device 0 on all cores, so that the tests that follow only load them.
void prewarm(const std::vector<KernelSpec>& specs);

/// CUDA devices the driver reports (0 when there is no driver).
int device_count();

/// Runs `body` on the current thread and returns "" or the message of what it threw.
std::string failure_of(const std::function<void()>& body);

/// Move-only device allocation in the current context.
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

/// A C API manager (wyjit_jit) on test_cache_dir(), destroyed with the object.
class CJit {
 public:
  /// Throws std::runtime_error with wyjit_last_error() when the manager cannot be created.
  CJit();
  ~CJit();
  CJit(const CJit&) = delete;
  CJit& operator=(const CJit&) = delete;
  wyjit_jit* get() const noexcept { return jit_; }

 private:
  wyjit_jit* jit_ = nullptr;
};

}  // namespace wyjit::test
