// SPDX-License-Identifier: Apache-2.0
// gdn_verify's launch in the conformance kit (FamilyLaunch): q, k, v and the gates on random
// data (row strides padded when asked, padding poisoned), the state after each of the K tokens
// written to the plan's tiles, checked against the float64 sequential reference
// (common/gdn_reference.hpp).
#include "gpu/families/gdn_verify/gdn_verify_launch.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/gdn_reference.hpp"
#include "gpu/families/gdn_common/gdn_number_hazards.hpp"
#include "gpu/families/gdn_common/gdn_token_buffers.hpp"
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
        st_(io_type(spec_.state)),
        tokens_(shape(), io_, options.padded),
        hazard_(options.hazard) {
    rows_ = static_cast<std::size_t>(batch_) * static_cast<std::size_t>(spec_.k);
    tile_ = static_cast<std::size_t>(hv_) * static_cast<std::size_t>(spec_.dv) *
            static_cast<std::size_t>(spec_.dk);
  }

  // The tokens' buffers (out last).
  std::vector<BufferSpec> buffers() const override { return tokens_.buffers(); }

  TileShape tiles() const override {
    // NOTE: tile strides a multiple of 4 elements: the kernel reads state rows 4 at a time.
    return {.writes = spec_.k, .span = tile_, .stride_multiple = 4, .type = st_};
  }

  void bind(const std::vector<void*>& device) override { tokens_.bind(args_, device); }

  StateRefs& states() override { return args_.states; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding&,
            std::vector<std::vector<std::uint8_t>>& images) override {
    const int dk = spec_.dk, dv = spec_.dv;
    const std::size_t heads = static_cast<std::size_t>(hv_);
    GdnProblem p = make_random_problem(shape(), io_, seed);
    for (float& x : p.state0) x = round_to_io(x, st_);  // the kernel reads the stored type
    if (hazard_) apply_number_hazard(*hazard_, p, io_);
    reference_ = gdn_reference(p);
    tokens_.append_images(p, images);

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
    masks[out_index] = tokens_.out_mask(live(plan));
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
    const std::uint8_t* pool = device.at(out_buffer() + 1).data();
    const NonFinite rule = nonfinite_rule(hazard_);
    std::vector<CheckedTensor> checks;
    checks.push_back(
        {"out", tokens_.compare_out(reference_.out, device.at(out_buffer()), live(plan), rule),
         hazard_tolerance(hazard_, out_tolerance(spec_))});

    for (int t = 0; t < K; ++t) {
      ComparisonAccumulator cmp(rule);
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
                          cmp.finish(), hazard_tolerance(hazard_, state_tolerance(spec_))});
      }
    }
    return checks;
  }

  // out rows [b*K + t] (HV*dv elements), then state tiles [b*K + t] (the variant's layout).
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const std::vector<std::uint8_t>& pool = device.at(out_buffer() + 1);
    const std::size_t st = io_size(st_);
    std::vector<std::vector<std::uint8_t>> items =
        tokens_.out_rows(device.at(out_buffer()), live(plan));
    items.resize(2 * rows_);
    for (std::size_t x = 0; x < rows_; ++x) {
      const int tile = plan.write[x];
      if (tile < 0) continue;
      const auto start = pool.begin() + static_cast<std::ptrdiff_t>(plan.at(tile) * st);
      items[rows_ + x].assign(start, start + static_cast<std::ptrdiff_t>(tile_ * st));
    }
    return items;
  }

  std::vector<NumberHazard> number_hazards() const override {
    return gdn_number_hazards(shape(), io_);
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
  std::size_t out_buffer() const { return tokens_.out_index(); }
  GdnShape shape() const {
    return {batch_, hk_, hv_, spec_.k, spec_.dk, spec_.dv, spec_.l2norm_qk, spec_.fused_gating};
  }
  static GdnTokenBuffers::Live live(const TilePlan& plan) {
    return [&plan](int b) { return !plan.padded(b); };
  }

  GdnVerifySpec spec_;
  int batch_, hk_, hv_;
  IoType io_, st_;
  GdnTokenBuffers tokens_;
  std::optional<NumberHazard> hazard_;
  std::size_t rows_ = 0;  // batch*K
  std::size_t tile_ = 0;  // HV*dk*dv: one state tile
  GdnVerifyArgs args_;
  GdnReference reference_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_gdn_verify_launch(const Sample& sample,
                                                     const RigOptions& options) {
  return std::make_unique<GdnVerifyLaunch>(sample, options);
}

}  // namespace wyjit::test::conformance
