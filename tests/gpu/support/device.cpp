// SPDX-License-Identifier: Apache-2.0
#include "gpu/support/device.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

#include "jit/target_select.hpp"

namespace wyjit::test {

void make_context_current() {
  thread_local bool done = false;
  if (done) return;
  static CUcontext context = [] {
    CUdevice device = 0;
    WYJIT_CU_CHECK(cuDeviceGet(&device, 0));
    CUcontext primary = nullptr;
    WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&primary, device));
    return primary;
  }();
  WYJIT_CU_CHECK(cuCtxSetCurrent(context));
  done = true;
}

std::string test_cache_dir() { return std::string(WYJIT_BINARY_DIR) + "/test-cache"; }

Jit& test_jit() {
  static Jit jit(JitOptions{.cache_dir = test_cache_dir()});
  return jit;
}

void prewarm(const std::vector<KernelSpec>& specs) {
  make_context_current();
  const Target target = detail::target_for_current_device();
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < specs.size(); i = next++) test_jit().compile(specs[i], target);
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

int device_count() {
  if (!detail::driver_has_device()) return 0;
  int count = 0;
  WYJIT_CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

std::string failure_of(const std::function<void()>& body) {
  try {
    body();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// ---- DeviceBuffer ----------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  make_context_current();
  WYJIT_CU_CHECK(cuMemAlloc(&ptr_, bytes == 0 ? 1 : bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) detail::driver().cuMemFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

void DeviceBuffer::upload(const std::vector<std::uint8_t>& host) {
  if (host.size() != bytes_) {
    throw std::runtime_error("upload of " + std::to_string(host.size()) +
                             " bytes into a buffer of " + std::to_string(bytes_));
  }
  if (bytes_ == 0) return;
  WYJIT_CU_CHECK(cuMemcpyHtoD(ptr_, host.data(), bytes_));
  // NOTE: from pageable memory cuMemcpyHtoD may return before its DMA lands, and the tests
  // launch on non-blocking streams, which do not wait for the legacy stream: a kernel could
  // read the previous contents (seen: a replay commit read the previous step's accepted
  // counts while other test processes kept the GPU busy).
  WYJIT_CU_CHECK(cuStreamSynchronize(nullptr));
}

std::vector<std::uint8_t> DeviceBuffer::download() const {
  std::vector<std::uint8_t> host(bytes_);
  if (bytes_ > 0) WYJIT_CU_CHECK(cuMemcpyDtoH(host.data(), ptr_, bytes_));
  return host;
}

// ---- ScopedDevice, Stream, CapturedGraph ----------------------------------------------------

ScopedDevice::ScopedDevice(int ordinal) {
  // NOTE: first mark this thread's default context as done, so DeviceBuffer's
  // make_context_current() never switches back to device 0 inside the scope.
  make_context_current();
  WYJIT_CU_CHECK(cuCtxGetCurrent(&previous_));
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
  WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context_, device));
  WYJIT_CU_CHECK(cuCtxSetCurrent(context_));
}

ScopedDevice::~ScopedDevice() { detail::driver().cuCtxSetCurrent(previous_); }

Stream::Stream() { WYJIT_CU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)); }

Stream::~Stream() {
  if (stream_ != nullptr) detail::driver().cuStreamDestroy(stream_);
}

void Stream::synchronize() const { WYJIT_CU_CHECK(cuStreamSynchronize(stream_)); }

CapturedGraph::CapturedGraph(CUstream stream, const std::function<void()>& record) {
  WYJIT_CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    record();
  } catch (...) {
    CUgraph abandoned = nullptr;
    detail::driver().cuStreamEndCapture(stream, &abandoned);
    if (abandoned != nullptr) detail::driver().cuGraphDestroy(abandoned);
    throw;
  }
  WYJIT_CU_CHECK(cuStreamEndCapture(stream, &graph_));
  const CUresult made = detail::driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0);
  if (made != CUDA_SUCCESS) {
    detail::driver().cuGraphDestroy(graph_);
    detail::throw_cu_error(__FILE__, __LINE__, "cuGraphInstantiateWithFlags", made);
  }
}

CapturedGraph::~CapturedGraph() {
  if (exec_ != nullptr) detail::driver().cuGraphExecDestroy(exec_);
  if (graph_ != nullptr) detail::driver().cuGraphDestroy(graph_);
}

void CapturedGraph::launch(CUstream stream) const { WYJIT_CU_CHECK(cuGraphLaunch(exec_, stream)); }

// ---- CJit ------------------------------------------------------------------------------------

CJit::CJit() {
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  const std::string cache = test_cache_dir();
  options.cache_dir = cache.c_str();
  if (wyjit_jit_create(&options, &jit_) != WYJIT_OK) {
    throw std::runtime_error(std::string("wyjit_jit_create: ") + wyjit_last_error());
  }
}

CJit::~CJit() { wyjit_jit_destroy(jit_); }

}  // namespace wyjit::test
