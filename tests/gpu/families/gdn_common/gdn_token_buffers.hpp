// SPDX-License-Identifier: Apache-2.0
// The K tokens of a GDN launch in the conformance kit, shared by the GDN families' cases (as
// src/families/gdn_common shares their guards): the buffers q, k_in, v, the gates and out, with
// row strides padded when the rig asks, their images from a random GdnProblem, and the output
// rows a launch must write, compared with the reference and gathered for bit-for-bit checks.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/compare.hpp"
#include "common/gdn_reference.hpp"
#include "gpu/conformance/family_case.hpp"

namespace wyjit::test::conformance {

class GdnTokenBuffers {
 public:
  /// Sequence b's rows are b*K .. b*K+K-1; `padded`: gaps after the rows of every buffer.
  GdnTokenBuffers(const GdnShape& shape, IoType io, bool padded);

  /// q, k_in, v, then g, beta (or a, b, a_log, dt_bias with fused gating), then out.
  std::vector<BufferSpec> buffers() const;
  std::size_t count() const { return shape_.fused_gating ? 8 : 6; }
  std::size_t out_index() const { return count() - 1; }

  /// The sizes, strides and token pointers of `args` (a GDN family's args struct), from the
  /// device addresses of buffers() at device[0 .. count()-1].
  template <class Args>
  void bind(Args& args, const std::vector<void*>& device) const;

  /// The images of `p`'s inputs (its padding poisoned) and a poisoned out, appended.
  void append_images(const GdnProblem& p, std::vector<std::vector<std::uint8_t>>& images) const;

  /// Which sequences a launch processes (false: padded, its rows left as they were).
  using Live = std::function<bool(int)>;
  /// The out elements a launch must write: the rows of the live sequences.
  std::vector<bool> out_mask(const Live& live) const;
  /// The live rows of `out` (a device image) against `reference` ([batch*K][HV][dv]).
  Comparison compare_out(const std::vector<double>& reference, const std::vector<std::uint8_t>& out,
                         const Live& live, NonFinite rule = NonFinite::fail) const;
  /// Row r's bytes of `out` as item r of batch*K (empty for a padded sequence).
  std::vector<std::vector<std::uint8_t>> out_rows(const std::vector<std::uint8_t>& out,
                                                  const Live& live) const;

  std::size_t rows() const { return rows_; }

 private:
  GdnShape shape_;
  IoType io_;
  std::int64_t qk_stride_, v_stride_, gb_stride_, o_stride_;
  std::size_t rows_;       // batch*K
  std::size_t row_elems_;  // HV*dv: one output row
};

template <class Args>
void GdnTokenBuffers::bind(Args& a, const std::vector<void*>& device) const {
  a.batch = shape_.batch;
  a.num_k_heads = shape_.hk;
  a.num_v_heads = shape_.hv;
  a.k = shape_.k;
  a.dk = shape_.dk;
  a.dv = shape_.dv;
  // The scale make_random_problem gives the reference (a captured graph bakes it in).
  a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape_.dk)));
  a.qk_stride = qk_stride_;
  a.v_stride = v_stride_;
  a.gb_stride = gb_stride_;
  a.o_stride = o_stride_;
  a.q = device.at(0);
  a.k_in = device.at(1);
  a.v = device.at(2);
  if (shape_.fused_gating) {
    a.a = device.at(3);
    a.b = device.at(4);
    a.a_log = static_cast<const float*>(device.at(5));
    a.dt_bias = static_cast<const float*>(device.at(6));
  } else {
    a.g = static_cast<const float*>(device.at(3));
    a.beta = static_cast<const float*>(device.at(4));
  }
  a.out = device.at(out_index());
}

}  // namespace wyjit::test::conformance
