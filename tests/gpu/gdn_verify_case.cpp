// SPDX-License-Identifier: Apache-2.0
#include "gpu/gdn_verify_case.hpp"

#include <cmath>
#include <limits>

#include "common/gdn_reference.hpp"
#include "common/half_types.hpp"
#include "gpu/gpu_support.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

namespace {

constexpr float kPoison = std::numeric_limits<float>::quiet_NaN();

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

// A host image of a device buffer of `count` elements of `type`, every element poisoned.
struct HostTensor {
  IoType type;
  std::size_t count;
  std::vector<std::uint8_t> bytes;
  HostTensor(IoType t, std::size_t n) : type(t), count(n), bytes(n * io_size(t)) {
    for (std::size_t i = 0; i < n; ++i) store_io(bytes.data(), i, kPoison, t);
  }
  void set(std::size_t i, float x) { store_io(bytes.data(), i, x, type); }
  float get(std::size_t i) const { return load_io(bytes.data(), i, type); }
};

std::size_t state_offset(Layout layout, int dk, int dv, int i, int j) {
  return layout == Layout::vk ? static_cast<std::size_t>(j) * dk + i
                              : static_cast<std::size_t>(i) * dv + j;
}

}  // namespace

std::string describe(const VerifyCase& c) {
  return format_spec(c.spec) + " batch=" + std::to_string(c.batch) + " hk=" + std::to_string(c.hk) +
         " hv=" + std::to_string(c.hv) + (c.padded ? " padded" : " dense") +
         " seed=" + std::to_string(c.seed);
}

std::vector<CheckedTensor> run_verify_case(const VerifyCase& c) {
  const KernelSpec& s = c.spec;
  const int K = s.k;
  const int dk = s.dk;
  const int dv = s.dv;
  const IoType io = io_type(s.io);
  const IoType st = io_type(s.state);
  const GdnProblem problem = make_random_problem(
      GdnShape{c.batch, c.hk, c.hv, K, dk, dv, s.l2norm_qk, s.fused_gating}, io, c.seed);
  const GdnReference ref = gdn_reference(problem);

  // ---- strides: padding (multiples of 4 where vector loads need it) when asked ----
  const std::int64_t pad = c.padded ? 1 : 0;
  const std::int64_t tile = std::int64_t{c.hv} * dk * dv;
  GdnVerifyArgs args;
  args.batch = c.batch;
  args.num_k_heads = c.hk;
  args.num_v_heads = c.hv;
  args.k = K;
  args.dk = dk;
  args.dv = dv;
  args.scale = static_cast<float>(problem.scale);
  args.qk_stride = std::int64_t{c.hk} * dk + 8 * pad;
  args.v_stride = std::int64_t{c.hv} * dv + 12 * pad;
  args.gb_stride = c.hv + 3 * pad;
  args.o_stride = std::int64_t{c.hv} * dv + 5 * pad;
  args.state_seq_stride = tile + 64 * pad;
  args.inter_tok_stride = tile + 32 * pad;
  args.inter_seq_stride = (K - 1) * args.inter_tok_stride + 16 * pad;
  const std::size_t rows = static_cast<std::size_t>(c.batch) * K;

  // ---- host images, poisoned, then filled ----
  HostTensor q(io, rows * args.qk_stride), k(io, rows * args.qk_stride);
  HostTensor v(io, rows * args.v_stride), out(io, rows * args.o_stride);
  HostTensor g(IoType::f32, rows * args.gb_stride), beta(IoType::f32, rows * args.gb_stride);
  HostTensor state(st, static_cast<std::size_t>(c.batch) * args.state_seq_stride);
  HostTensor inter(st, K > 1 ? static_cast<std::size_t>(c.batch) * args.inter_seq_stride : 1);
  for (std::size_t r = 0; r < rows; ++r) {
    for (int i = 0; i < c.hk * dk; ++i) {
      q.set(r * args.qk_stride + i, problem.q[r * c.hk * dk + i]);
      k.set(r * args.qk_stride + i, problem.k_in[r * c.hk * dk + i]);
    }
    for (int j = 0; j < c.hv * dv; ++j) v.set(r * args.v_stride + j, problem.v[r * c.hv * dv + j]);
    for (int h = 0; h < c.hv; ++h) {
      g.set(r * args.gb_stride + h, problem.g[r * c.hv + h]);
      beta.set(r * args.gb_stride + h, problem.beta[r * c.hv + h]);
    }
  }
  for (int b = 0; b < c.batch; ++b) {
    for (int h = 0; h < c.hv; ++h) {
      for (int i = 0; i < dk; ++i) {
        for (int j = 0; j < dv; ++j) {
          const std::size_t canonical = ((std::size_t(b) * c.hv + h) * dk + i) * dv + j;
          state.set(b * args.state_seq_stride + h * std::int64_t{dk} * dv +
                        state_offset(s.layout, dk, dv, i, j),
                    problem.state0[canonical]);
        }
      }
    }
  }
  const std::vector<std::uint8_t> state_before = state.bytes;

  // ---- device ----
  DeviceBuffer d_q(q.bytes.size()), d_k(k.bytes.size()), d_v(v.bytes.size());
  DeviceBuffer d_out(out.bytes.size()), d_g(g.bytes.size()), d_beta(beta.bytes.size());
  DeviceBuffer d_state(state.bytes.size()), d_inter(inter.bytes.size());
  d_q.upload(q.bytes);
  d_k.upload(k.bytes);
  d_v.upload(v.bytes);
  d_out.upload(out.bytes);
  d_g.upload(g.bytes);
  d_beta.upload(beta.bytes);
  d_state.upload(state.bytes);
  d_inter.upload(inter.bytes);
  args.q = d_q.get();
  args.k_in = d_k.get();
  args.v = d_v.get();
  args.out = d_out.get();
  args.g = static_cast<const float*>(d_g.get());
  args.beta = static_cast<const float*>(d_beta.get());
  args.state = d_state.get();
  args.inter = K > 1 ? d_inter.get() : nullptr;

  const Kernel kernel = test_jit().kernel(s);
  launch_gdn_verify(kernel, args, nullptr);
  WYJIT_CU_CHECK(cuCtxSynchronize());
  out.bytes = d_out.download();
  state.bytes = d_state.download();
  inter.bytes = d_inter.download();

  // ---- compare ----
  const double out_tol = s.io == DType::f32 ? 1e-5 : 1e-2;
  const double state_tol = s.io == DType::f32 && s.state == DType::f32 ? 1e-5 : 1e-4;
  std::vector<CheckedTensor> checks;
  std::vector<double> got(ref.out.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (int j = 0; j < c.hv * dv; ++j) got[r * c.hv * dv + j] = out.get(r * args.o_stride + j);
  }
  checks.push_back({"out", compare(ref.out, got), out_tol});

  const std::size_t tiles = static_cast<std::size_t>(c.batch) * c.hv * dk * dv;  // one token
  for (int t = 0; t < K; ++t) {
    std::vector<double> expected(tiles), actual(tiles);
    std::size_t n = 0;
    for (int b = 0; b < c.batch; ++b) {
      for (int h = 0; h < c.hv; ++h) {
        for (int i = 0; i < dk; ++i) {
          for (int j = 0; j < dv; ++j, ++n) {
            expected[n] = ref.states[(((std::size_t(b) * K + t) * c.hv + h) * dk + i) * dv + j];
            const std::size_t in_tile =
                h * std::size_t(dk) * dv + state_offset(s.layout, dk, dv, i, j);
            actual[n] =
                t == K - 1
                    ? state.get(b * args.state_seq_stride + in_tile)
                    : inter.get(b * args.inter_seq_stride + t * args.inter_tok_stride + in_tile);
          }
        }
      }
    }
    checks.push_back({t == K - 1 ? "final state" : "state after token " + std::to_string(t),
                      compare(expected, actual), state_tol});
  }

  // ---- nothing written outside the tensors: padding keeps its poison / old bytes ----
  std::size_t stray = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::int64_t j = std::int64_t{c.hv} * dv; j < args.o_stride; ++j) {
      stray += std::isnan(out.get(r * args.o_stride + j)) ? 0 : 1;
    }
  }
  for (int b = 0; b < c.batch; ++b) {
    const std::size_t from = (b * args.state_seq_stride + tile) * io_size(st);
    const std::size_t to = (b + 1) * args.state_seq_stride * io_size(st);
    for (std::size_t x = from; x < to; ++x) stray += state.bytes[x] != state_before[x] ? 1 : 0;
  }
  Comparison padding;
  padding.count = stray;
  padding.max_abs_err = static_cast<double>(stray);
  padding.max_abs_ref = 1;
  padding.rel_err = static_cast<double>(stray);
  checks.push_back({"padding written (elements)", padding, 0.0});
  return checks;
}

}  // namespace wyjit::test
