// SPDX-License-Identifier: Apache-2.0
// gdn_verify's launch in the conformance kit (FamilyLaunch): q, k, v and the gates on random
// data (row strides padded when asked, padding poisoned), the state after each of the K tokens
// written to the plan's tiles, checked against the float64 sequential reference
// (common/gdn_reference.hpp).
#include "gpu/families/gdn_verify/gdn_verify_launch.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/gdn_reference.hpp"
#include "gpu/support/host_tensor.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test::conformance {

namespace {

// Offset of state element (i over dk, j over dv) inside one head's tile in `layout`.
std::size_t state_offset(Layout layout, int dk, int dv, int i, int j) {
  return layout == Layout::vk ? static_cast<std::size_t>(j) * static_cast<std::size_t>(dk) +
                                    static_cast<std::size_t>(i)
                              : static_cast<std::size_t>(i) * static_cast<std::size_t>(dv) +
                                    static_cast<std::size_t>(j);
}

double out_tolerance(const GdnVerifySpec& s) { return s.io == DType::f32 ? 1e-5 : 1e-2; }

double state_tolerance(const GdnVerifySpec& s) {
  return s.state == DType::bf16  ? 1e-2
         : s.state == DType::f16 ? 2e-3
         : s.io == DType::f32    ? 1e-5
                                 : 1e-4;
}

class GdnVerifyLaunch final : public FamilyLaunch {
 public:
  GdnVerifyLaunch(const Sample& sample, const RigOptions& options)
      : spec_(std::get<GdnVerifySpec>(sample.spec)),
        batch_(sample.batch),
        hk_(sample.shape[0]),
        hv_(sample.shape[1]),
        io_(io_type(spec_.io)),
        st_(io_type(spec_.state)) {
    const std::int64_t pad = options.padded ? 1 : 0;
    GdnVerifyArgs& a = args_;
    a.batch = batch_;
    a.num_k_heads = hk_;
    a.num_v_heads = hv_;
    a.k = spec_.k;
    a.dk = spec_.dk;
    a.dv = spec_.dv;
    // The scale make_random_problem gives the reference (a captured graph bakes it in).
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec_.dk)));
    a.qk_stride = std::int64_t{hk_} * spec_.dk + 8 * pad;
    a.v_stride = std::int64_t{hv_} * spec_.dv + 12 * pad;
    a.gb_stride = hv_ + 3 * pad;
    a.o_stride = std::int64_t{hv_} * spec_.dv + 5 * pad;
    rows_ = static_cast<std::size_t>(batch_) * static_cast<std::size_t>(spec_.k);
    row_elems_ = static_cast<std::size_t>(hv_) * static_cast<std::size_t>(spec_.dv);
    tile_ = row_elems_ * static_cast<std::size_t>(spec_.dk);
  }

  // q, k_in, v, then g, beta (or a, b, a_log, dt_bias), then out.
  std::vector<BufferSpec> buffers() const override {
    const std::size_t io = io_size(io_);
    const auto rows_of = [&](std::int64_t stride) {
      return rows_ * static_cast<std::size_t>(stride);
    };
    std::vector<BufferSpec> list{{"q", rows_of(args_.qk_stride) * io, io_},
                                 {"k_in", rows_of(args_.qk_stride) * io, io_},
                                 {"v", rows_of(args_.v_stride) * io, io_}};
    const std::size_t heads = static_cast<std::size_t>(hv_);
    if (spec_.fused_gating) {
      list.push_back({"a", rows_of(args_.gb_stride) * io, io_});
      list.push_back({"b", rows_of(args_.gb_stride) * io, io_});
      list.push_back({"a_log", heads * sizeof(float), IoType::f32});
      list.push_back({"dt_bias", heads * sizeof(float), IoType::f32});
    } else {
      list.push_back({"g", rows_of(args_.gb_stride) * sizeof(float), IoType::f32});
      list.push_back({"beta", rows_of(args_.gb_stride) * sizeof(float), IoType::f32});
    }
    list.push_back({"out", rows_of(args_.o_stride) * io, io_});
    return list;
  }

  TileShape tiles() const override {
    // NOTE: tile strides a multiple of 4 elements: the kernel reads state rows 4 at a time.
    return {.writes = spec_.k, .span = tile_, .stride_multiple = 4, .type = st_};
  }

  void bind(const std::vector<void*>& device) override {
    GdnVerifyArgs& a = args_;
    a.q = device.at(0);
    a.k_in = device.at(1);
    a.v = device.at(2);
    if (spec_.fused_gating) {
      a.a = device.at(3);
      a.b = device.at(4);
      a.a_log = static_cast<const float*>(device.at(5));
      a.dt_bias = static_cast<const float*>(device.at(6));
      a.out = device.at(7);
    } else {
      a.g = static_cast<const float*>(device.at(3));
      a.beta = static_cast<const float*>(device.at(4));
      a.out = device.at(5);
    }
  }

  StateRefs& states() override { return args_.states; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding&,
            std::vector<std::vector<std::uint8_t>>& images) override {
    const int K = spec_.k, dk = spec_.dk, dv = spec_.dv;
    GdnProblem p = make_random_problem(
        GdnShape{batch_, hk_, hv_, K, dk, dv, spec_.l2norm_qk, spec_.fused_gating}, io_, seed);
    for (float& x : p.state0) x = round_to_io(x, st_);  // the kernel reads the stored type
    reference_ = gdn_reference(p);

    const GdnVerifyArgs& a = args_;
    const std::size_t qk = static_cast<std::size_t>(a.qk_stride);
    const std::size_t vs = static_cast<std::size_t>(a.v_stride);
    const std::size_t gb = static_cast<std::size_t>(a.gb_stride);
    const std::size_t key_elems = static_cast<std::size_t>(hk_) * static_cast<std::size_t>(dk);
    const std::size_t heads = static_cast<std::size_t>(hv_);
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
    if (spec_.fused_gating) {
      images.push_back(std::move(ga.bytes));
      images.push_back(std::move(gbt.bytes));
      images.push_back(std::move(a_log.bytes));
      images.push_back(std::move(dt_bias.bytes));
    } else {
      images.push_back(std::move(g.bytes));
      images.push_back(std::move(beta.bytes));
    }
    images.push_back(poisoned(rows_ * static_cast<std::size_t>(a.o_stride), io_));

    // The pool: poison, and S0 of each sequence in the tile it reads.
    HostTensor pool(st_, plan.pool_elems);
    for (int b = 0; b < batch_; ++b) {
      if (plan.padded(b)) continue;
      const std::size_t base = plan.at(plan.read[static_cast<std::size_t>(b)]);
      for (int h = 0; h < hv_; ++h) {
        for (int i = 0; i < dk; ++i) {
          for (int j = 0; j < dv; ++j) {
            const std::size_t head =
                static_cast<std::size_t>(b) * heads + static_cast<std::size_t>(h);
            const std::size_t canonical =
                (head * static_cast<std::size_t>(dk) + static_cast<std::size_t>(i)) *
                    static_cast<std::size_t>(dv) +
                static_cast<std::size_t>(j);
            pool.set(base + static_cast<std::size_t>(h) * static_cast<std::size_t>(dk * dv) +
                         state_offset(spec_.layout, dk, dv, i, j),
                     p.state0[canonical]);
          }
        }
      }
    }
    images.push_back(std::move(pool.bytes));
  }

  std::vector<std::vector<bool>> written(const TilePlan& plan) const override {
    const std::size_t out_index = out_buffer();
    std::vector<std::vector<bool>> masks(out_index + 2);
    std::vector<bool>& out = masks[out_index];
    const std::size_t o = static_cast<std::size_t>(args_.o_stride);
    out.assign(rows_ * o, false);
    for (std::size_t r = 0; r < rows_; ++r) {
      if (plan.padded(static_cast<int>(r / static_cast<std::size_t>(spec_.k)))) continue;
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(r * o),
                out.begin() + static_cast<std::ptrdiff_t>(r * o + row_elems_), true);
    }
    std::vector<bool>& pool = masks[out_index + 1];
    pool.assign(plan.pool_elems, false);
    for (const int tile : plan.write) {
      if (tile < 0) continue;
      const std::size_t at = plan.at(tile);
      std::fill(pool.begin() + static_cast<std::ptrdiff_t>(at),
                pool.begin() + static_cast<std::ptrdiff_t>(at + tile_), true);
    }
    return masks;
  }

  std::vector<CheckedTensor> compare(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const int K = spec_.k, dk = spec_.dk, dv = spec_.dv;
    const std::uint8_t* out = device.at(out_buffer()).data();
    const std::uint8_t* pool = device.at(out_buffer() + 1).data();
    const std::size_t o = static_cast<std::size_t>(args_.o_stride);
    std::vector<CheckedTensor> checks;

    ComparisonAccumulator out_cmp;
    for (std::size_t r = 0; r < rows_; ++r) {
      if (plan.padded(static_cast<int>(r / static_cast<std::size_t>(K)))) continue;
      for (std::size_t j = 0; j < row_elems_; ++j) {
        out_cmp.add(reference_.out[r * row_elems_ + j], load_io(out, r * o + j, io_));
      }
    }
    checks.push_back({"out", out_cmp.finish(), out_tolerance(spec_)});

    for (int t = 0; t < K; ++t) {
      ComparisonAccumulator cmp;
      for (int b = 0; b < batch_; ++b) {
        const int tile = plan.write_tile(b, t);
        if (tile < 0) continue;
        const std::size_t at = plan.at(tile);
        const std::size_t token = static_cast<std::size_t>(b * K + t);
        for (int h = 0; h < hv_; ++h) {
          for (int i = 0; i < dk; ++i) {
            for (int j = 0; j < dv; ++j) {
              const std::size_t head =
                  token * static_cast<std::size_t>(hv_) + static_cast<std::size_t>(h);
              const std::size_t canonical =
                  (head * static_cast<std::size_t>(dk) + static_cast<std::size_t>(i)) *
                      static_cast<std::size_t>(dv) +
                  static_cast<std::size_t>(j);
              cmp.add(reference_.states[canonical],
                      load_io(pool,
                              at + static_cast<std::size_t>(h) * static_cast<std::size_t>(dk * dv) +
                                  state_offset(spec_.layout, dk, dv, i, j),
                              st_));
            }
          }
        }
      }
      if (cmp.finish().count > 0) {
        checks.push_back({t == K - 1 ? "final state" : "state after token " + std::to_string(t),
                          cmp.finish(), state_tolerance(spec_)});
      }
    }
    return checks;
  }

  // out rows [b*K + t] (HV*dv elements), then state tiles [b*K + t] (the variant's layout).
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const std::vector<std::uint8_t>& out = device.at(out_buffer());
    const std::vector<std::uint8_t>& pool = device.at(out_buffer() + 1);
    const std::size_t io = io_size(io_);
    const std::size_t st = io_size(st_);
    const std::size_t o = static_cast<std::size_t>(args_.o_stride);
    std::vector<std::vector<std::uint8_t>> items(2 * rows_);
    for (std::size_t r = 0; r < rows_; ++r) {
      if (plan.padded(static_cast<int>(r / static_cast<std::size_t>(spec_.k)))) continue;
      const auto row = out.begin() + static_cast<std::ptrdiff_t>(r * o * io);
      items[r].assign(row, row + static_cast<std::ptrdiff_t>(row_elems_ * io));
    }
    for (std::size_t x = 0; x < rows_; ++x) {
      const int tile = plan.write[x];
      if (tile < 0) continue;
      const auto start = pool.begin() + static_cast<std::ptrdiff_t>(plan.at(tile) * st);
      items[rows_ + x].assign(start, start + static_cast<std::ptrdiff_t>(tile_ * st));
    }
    return items;
  }

  void check_args() const override { check_gdn_verify_args(spec_, args_); }
  wyjit_status check_args_c(const char* name) const override {
    return wyjit_check_gdn_verify(name, &args_);
  }
  void launch(const Kernel& kernel, CUstream stream) const override {
    launch_gdn_verify(kernel, args_, stream);
  }
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const override {
    return wyjit_launch_gdn_verify(kernel, &args_, stream);
  }

  std::string describe() const override {
    return "hk=" + std::to_string(hk_) + " hv=" + std::to_string(hv_);
  }

 private:
  std::size_t out_buffer() const { return spec_.fused_gating ? 7 : 5; }

  GdnVerifySpec spec_;
  int batch_, hk_, hv_;
  IoType io_, st_;
  std::size_t rows_ = 0;       // batch*K
  std::size_t row_elems_ = 0;  // HV*dv: one output row
  std::size_t tile_ = 0;       // HV*dk*dv: one state tile
  GdnVerifyArgs args_;
  GdnReference reference_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_gdn_verify_launch(const Sample& sample,
                                                     const RigOptions& options) {
  return std::make_unique<GdnVerifyLaunch>(sample, options);
}

}  // namespace wyjit::test::conformance
