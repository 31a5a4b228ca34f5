// SPDX-License-Identifier: Apache-2.0
#include "gpu/gpu_support.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
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

Jit& test_jit() {
  static Jit jit(JitOptions{.cache_dir = std::string(WYJIT_BINARY_DIR) + "/test-cache"});
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
  WYJIT_CU_CHECK(cuMemcpyHtoD(ptr_, host.data(), bytes_));
}

std::vector<std::uint8_t> DeviceBuffer::download() const {
  std::vector<std::uint8_t> host(bytes_);
  WYJIT_CU_CHECK(cuMemcpyDtoH(host.data(), ptr_, bytes_));
  return host;
}

}  // namespace wyjit::test
