// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/guarded_buffer.hpp"

#include <stdexcept>

namespace wyjit::test::conformance {

GuardedBuffer::GuardedBuffer(std::size_t bytes, std::size_t guard)
    : bytes_(bytes), guard_(guard), memory_(bytes + 2 * guard) {
  if (guard % 256 != 0) {
    throw std::invalid_argument("GuardedBuffer: guard of " + std::to_string(guard) +
                                " bytes, want a multiple of 256");
  }
  // NOTE: a pattern no dtype writes by accident: not zero, not NaN, different in every byte of
  // a 16-byte vector, and different before and after the data.
  pattern_.resize(2 * guard);
  for (std::size_t i = 0; i < pattern_.size(); ++i) {
    pattern_[i] = static_cast<std::uint8_t>(0xA5 ^ (i * 37 + (i >= guard ? 11 : 0)));
  }
  if (guard > 0) {
    WYJIT_CU_CHECK(cuMemcpyHtoD(memory_.address(), pattern_.data(), guard));
    WYJIT_CU_CHECK(cuMemcpyHtoD(memory_.address() + guard + bytes, pattern_.data() + guard, guard));
    // NOTE: a pageable copy may still be in flight on return (DeviceBuffer::upload says why).
    WYJIT_CU_CHECK(cuStreamSynchronize(nullptr));
  }
}

void GuardedBuffer::upload_async(const std::vector<std::uint8_t>& host, CUstream stream) const {
  if (host.size() != bytes_) {
    throw std::runtime_error("upload of " + std::to_string(host.size()) +
                             " bytes into a buffer of " + std::to_string(bytes_));
  }
  if (bytes_ > 0) {
    WYJIT_CU_CHECK(cuMemcpyHtoDAsync(memory_.address() + guard_, host.data(), bytes_, stream));
  }
}

GuardedBuffer::Contents GuardedBuffer::download() const {
  Contents contents;
  contents.data.resize(bytes_);
  if (bytes_ > 0) {
    WYJIT_CU_CHECK(cuMemcpyDtoH(contents.data.data(), memory_.address() + guard_, bytes_));
  }
  if (guard_ > 0) {
    std::vector<std::uint8_t> guards(2 * guard_);
    WYJIT_CU_CHECK(cuMemcpyDtoH(guards.data(), memory_.address(), guard_));
    WYJIT_CU_CHECK(
        cuMemcpyDtoH(guards.data() + guard_, memory_.address() + guard_ + bytes_, guard_));
    for (std::size_t i = 0; i < guards.size(); ++i) {
      contents.guard_bytes_changed += guards[i] != pattern_[i] ? 1 : 0;
    }
  }
  return contents;
}

}  // namespace wyjit::test::conformance
