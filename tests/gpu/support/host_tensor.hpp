// SPDX-License-Identifier: Apache-2.0
// Host images of device buffers: typed element access, NaN poison, raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/half_types.hpp"
#include "wyjit/types.hpp"

namespace wyjit::test {

IoType io_type(DType t);

template <typename T>
std::vector<std::uint8_t> as_bytes(const std::vector<T>& values) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(values.data());
  return {p, p + values.size() * sizeof(T)};
}

/// `count` elements of `type`, every one a quiet NaN.
std::vector<std::uint8_t> poisoned(std::size_t count, IoType type);

/// A host image of `count` elements of `type`, every element poisoned with NaN.
struct HostTensor {
  IoType type;
  std::size_t count;
  std::vector<std::uint8_t> bytes;
  HostTensor(IoType t, std::size_t n);
  void set(std::size_t i, float x) { store_io(bytes.data(), i, x, type); }
  float get(std::size_t i) const { return load_io(bytes.data(), i, type); }
};

}  // namespace wyjit::test
