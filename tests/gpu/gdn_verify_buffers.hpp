// SPDX-License-Identifier: Apache-2.0
// Host images and device copies of a gdn_verify launch's token inputs and outputs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/gdn_reference.hpp"
#include "common/half_types.hpp"
#include "gpu/gpu_support.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

IoType io_type(DType t);

/// Offset of state element (i over dk, j over dv) inside one head's tile in `layout`.
inline std::size_t state_offset(Layout layout, int dk, int dv, int i, int j) {
  return layout == Layout::vk ? static_cast<std::size_t>(j) * dk + i
                              : static_cast<std::size_t>(i) * dv + j;
}

template <typename T>
std::vector<std::uint8_t> as_bytes(const std::vector<T>& values) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(values.data());
  return {p, p + values.size() * sizeof(T)};
}

/// A host image of `count` elements of `type`, every element poisoned with NaN.
struct HostTensor {
  IoType type;
  std::size_t count;
  std::vector<std::uint8_t> bytes;
  HostTensor(IoType t, std::size_t n);
  void set(std::size_t i, float x) { store_io(bytes.data(), i, x, type); }
  float get(std::size_t i) const { return load_io(bytes.data(), i, type); }
};

/// q, k, v, g/beta (or a, b, A_log, dt_bias), and the poisoned output on the device, with
/// row strides padded when asked (padding poisoned too).
class GdnVerifyInputs {
 public:
  GdnVerifyInputs(const GdnProblem& problem, const KernelSpec& spec, bool padded);

  /// Shapes, strides, scale and the token-input and output pointers; state pointers unset.
  const GdnVerifyArgs& args() const { return args_; }
  HostTensor download_out() const;

 private:
  GdnVerifyArgs args_;
  IoType io_;
  std::size_t out_count_ = 0;
  std::vector<DeviceBuffer> buffers_;
};

}  // namespace wyjit::test
