// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/gdn_common/gdn_token_buffers.hpp"

#include <algorithm>

#include "gpu/support/host_tensor.hpp"

namespace wyjit::test::conformance {

GdnTokenBuffers::GdnTokenBuffers(const GdnShape& shape, IoType io, bool padded)
    : shape_(shape), io_(io) {
  const std::int64_t pad = padded ? 1 : 0;
  // NOTE: q/k and v strides stay multiples of 4 (the kernels' vector loads); g and out need not.
  qk_stride_ = std::int64_t{shape.hk} * shape.dk + 8 * pad;
  v_stride_ = std::int64_t{shape.hv} * shape.dv + 12 * pad;
  gb_stride_ = shape.hv + 3 * pad;
  o_stride_ = std::int64_t{shape.hv} * shape.dv + 5 * pad;
  rows_ = static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.k);
  row_elems_ = static_cast<std::size_t>(shape.hv) * static_cast<std::size_t>(shape.dv);
}

std::vector<BufferSpec> GdnTokenBuffers::buffers() const {
  const std::size_t io = io_size(io_);
  const auto rows_of = [&](std::int64_t stride) {
    return rows_ * static_cast<std::size_t>(stride);
  };
  std::vector<BufferSpec> list{{"q", rows_of(qk_stride_) * io, io_},
                               {"k_in", rows_of(qk_stride_) * io, io_},
                               {"v", rows_of(v_stride_) * io, io_}};
  const std::size_t heads = static_cast<std::size_t>(shape_.hv);
  if (shape_.fused_gating) {
    list.push_back({"a", rows_of(gb_stride_) * io, io_});
    list.push_back({"b", rows_of(gb_stride_) * io, io_});
    list.push_back({"a_log", heads * sizeof(float), IoType::f32});
    list.push_back({"dt_bias", heads * sizeof(float), IoType::f32});
  } else {
    list.push_back({"g", rows_of(gb_stride_) * sizeof(float), IoType::f32});
    list.push_back({"beta", rows_of(gb_stride_) * sizeof(float), IoType::f32});
  }
  list.push_back({"out", rows_of(o_stride_) * io, io_});
  return list;
}

void GdnTokenBuffers::append_images(const GdnProblem& p,
                                    std::vector<std::vector<std::uint8_t>>& images) const {
  const std::size_t qk = static_cast<std::size_t>(qk_stride_);
  const std::size_t vs = static_cast<std::size_t>(v_stride_);
  const std::size_t gb = static_cast<std::size_t>(gb_stride_);
  const std::size_t key_elems =
      static_cast<std::size_t>(shape_.hk) * static_cast<std::size_t>(shape_.dk);
  const std::size_t heads = static_cast<std::size_t>(shape_.hv);
  HostTensor q(io_, rows_ * qk), k(io_, rows_ * qk), v(io_, rows_ * vs);
  HostTensor g(IoType::f32, rows_ * gb), beta(IoType::f32, rows_ * gb);
  HostTensor ga(io_, rows_ * gb), gbt(io_, rows_ * gb);
  HostTensor a_log(IoType::f32, heads), dt_bias(IoType::f32, heads);
  for (std::size_t r = 0; r < rows_; ++r) {
    for (std::size_t i = 0; i < key_elems; ++i) {
      q.set(r * qk + i, p.q[r * key_elems + i]);
      k.set(r * qk + i, p.k_in[r * key_elems + i]);
    }
    for (std::size_t j = 0; j < row_elems_; ++j) v.set(r * vs + j, p.v[r * row_elems_ + j]);
    for (std::size_t h = 0; h < heads; ++h) {
      g.set(r * gb + h, p.g[r * heads + h]);
      beta.set(r * gb + h, p.beta[r * heads + h]);
      ga.set(r * gb + h, p.a[r * heads + h]);
      gbt.set(r * gb + h, p.b[r * heads + h]);
    }
  }
  for (std::size_t h = 0; h < heads; ++h) {
    a_log.set(h, p.a_log[h]);
    dt_bias.set(h, p.dt_bias[h]);
  }
  images.push_back(std::move(q.bytes));
  images.push_back(std::move(k.bytes));
  images.push_back(std::move(v.bytes));
  if (shape_.fused_gating) {
    images.push_back(std::move(ga.bytes));
    images.push_back(std::move(gbt.bytes));
    images.push_back(std::move(a_log.bytes));
    images.push_back(std::move(dt_bias.bytes));
  } else {
    images.push_back(std::move(g.bytes));
    images.push_back(std::move(beta.bytes));
  }
  images.push_back(poisoned(rows_ * static_cast<std::size_t>(o_stride_), io_));
}

std::vector<bool> GdnTokenBuffers::out_mask(const Live& live) const {
  const std::size_t o = static_cast<std::size_t>(o_stride_);
  std::vector<bool> out(rows_ * o, false);
  for (std::size_t r = 0; r < rows_; ++r) {
    if (!live(static_cast<int>(r / static_cast<std::size_t>(shape_.k)))) continue;
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(r * o),
              out.begin() + static_cast<std::ptrdiff_t>(r * o + row_elems_), true);
  }
  return out;
}

Comparison GdnTokenBuffers::compare_out(const std::vector<double>& reference,
                                        const std::vector<std::uint8_t>& out, const Live& live,
                                        NonFinite rule) const {
  const std::size_t o = static_cast<std::size_t>(o_stride_);
  ComparisonAccumulator cmp(rule);
  for (std::size_t r = 0; r < rows_; ++r) {
    if (!live(static_cast<int>(r / static_cast<std::size_t>(shape_.k)))) continue;
    for (std::size_t j = 0; j < row_elems_; ++j) {
      cmp.add(reference[r * row_elems_ + j], load_io(out.data(), r * o + j, io_));
    }
  }
  return cmp.finish();
}

std::vector<std::vector<std::uint8_t>> GdnTokenBuffers::out_rows(
    const std::vector<std::uint8_t>& out, const Live& live) const {
  const std::size_t io = io_size(io_);
  const std::size_t o = static_cast<std::size_t>(o_stride_);
  std::vector<std::vector<std::uint8_t>> items(rows_);
  for (std::size_t r = 0; r < rows_; ++r) {
    if (!live(static_cast<int>(r / static_cast<std::size_t>(shape_.k)))) continue;
    const auto row = out.begin() + static_cast<std::ptrdiff_t>(r * o * io);
    items[r].assign(row, row + static_cast<std::ptrdiff_t>(row_elems_ * io));
  }
  return items;
}

}  // namespace wyjit::test::conformance
