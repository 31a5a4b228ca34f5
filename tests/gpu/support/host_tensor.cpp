// SPDX-License-Identifier: Apache-2.0
#include "gpu/support/host_tensor.hpp"

#include <limits>

namespace wyjit::test {

IoType io_type(DType t) {
  switch (t) {
    case DType::f32:
      return IoType::f32;
    case DType::f16:
      return IoType::f16;
    case DType::bf16:
      return IoType::bf16;
  }
  return IoType::f32;
}

std::vector<std::uint8_t> poisoned(std::size_t count, IoType type) {
  const std::vector<float> nan(count, std::numeric_limits<float>::quiet_NaN());
  return pack_io(nan, type);
}

HostTensor::HostTensor(IoType t, std::size_t n) : type(t), count(n), bytes(poisoned(n, t)) {}

}  // namespace wyjit::test
