// SPDX-License-Identifier: Apache-2.0
#include "gpu/gdn_verify_buffers.hpp"

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

HostTensor::HostTensor(IoType t, std::size_t n) : type(t), count(n), bytes(n * io_size(t)) {
  for (std::size_t i = 0; i < n; ++i)
    store_io(bytes.data(), i, std::numeric_limits<float>::quiet_NaN(), t);
}

GdnVerifyInputs::GdnVerifyInputs(const GdnProblem& p, const KernelSpec& spec, bool padded)
    : io_(io_type(spec.io)) {
  const std::int64_t pad = padded ? 1 : 0;
  GdnVerifyArgs& a = args_;
  a.batch = p.batch;
  a.num_k_heads = p.hk;
  a.num_v_heads = p.hv;
  a.k = p.k;
  a.dk = p.dk;
  a.dv = p.dv;
  a.scale = static_cast<float>(p.scale);
  a.qk_stride = std::int64_t{p.hk} * p.dk + 8 * pad;
  a.v_stride = std::int64_t{p.hv} * p.dv + 12 * pad;
  a.gb_stride = p.hv + 3 * pad;
  a.o_stride = std::int64_t{p.hv} * p.dv + 5 * pad;
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.k;

  HostTensor q(io_, rows * a.qk_stride), k(io_, rows * a.qk_stride), v(io_, rows * a.v_stride);
  HostTensor g(IoType::f32, rows * a.gb_stride), beta(IoType::f32, rows * a.gb_stride);
  HostTensor ga(io_, rows * a.gb_stride), gb(io_, rows * a.gb_stride);
  HostTensor a_log(IoType::f32, p.hv), dt_bias(IoType::f32, p.hv);
  for (std::size_t r = 0; r < rows; ++r) {
    for (int i = 0; i < p.hk * p.dk; ++i) {
      q.set(r * a.qk_stride + i, p.q[r * p.hk * p.dk + i]);
      k.set(r * a.qk_stride + i, p.k_in[r * p.hk * p.dk + i]);
    }
    for (int j = 0; j < p.hv * p.dv; ++j) v.set(r * a.v_stride + j, p.v[r * p.hv * p.dv + j]);
    for (int h = 0; h < p.hv; ++h) {
      g.set(r * a.gb_stride + h, p.g[r * p.hv + h]);
      beta.set(r * a.gb_stride + h, p.beta[r * p.hv + h]);
      ga.set(r * a.gb_stride + h, p.a[r * p.hv + h]);
      gb.set(r * a.gb_stride + h, p.b[r * p.hv + h]);
    }
  }
  for (int h = 0; h < p.hv; ++h) {
    a_log.set(h, p.a_log[h]);
    dt_bias.set(h, p.dt_bias[h]);
  }
  out_count_ = rows * a.o_stride;
  const HostTensor out(io_, out_count_);
  const auto device = [this](const HostTensor& t) {
    buffers_.emplace_back(t.bytes.size());
    buffers_.back().upload(t.bytes);
    return buffers_.back().get();
  };
  buffers_.reserve(12);
  a.q = device(q);
  a.k_in = device(k);
  a.v = device(v);
  if (spec.fused_gating) {
    a.a = device(ga);
    a.b = device(gb);
    a.a_log = static_cast<const float*>(device(a_log));
    a.dt_bias = static_cast<const float*>(device(dt_bias));
  } else {
    a.g = static_cast<const float*>(device(g));
    a.beta = static_cast<const float*>(device(beta));
  }
  a.out = device(out);
}

HostTensor GdnVerifyInputs::download_out() const {
  HostTensor out(io_, out_count_);
  out.bytes = buffers_.back().download();
  return out;
}

}  // namespace wyjit::test
