// SPDX-License-Identifier: Apache-2.0
// conv1d_update's launch in the conformance kit (FamilyLaunch): x, weights (and bias) on random
// data, each sequence's history in its read tile (window form: at a random column offset), y and
// every state written checked against the float64 reference (common/conv1d_reference.hpp), the
// states bit for bit. The launch modes are the two kernels (wide and narrow): the launch forces
// `path` to the one asked for.
#include "gpu/families/conv1d_update/conv1d_update_launch.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/conv1d_reference.hpp"
#include "gpu/support/host_tensor.hpp"
#include "wyjit/conv1d_update.hpp"

namespace wyjit::test::conformance {

namespace {

double y_tolerance(DType io) {
  switch (io) {
    case DType::f32:
      return 1e-5;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
  }
  return 0;
}

std::int32_t path_of(const KernelSpec& spec, int mode) {
  const std::vector<std::string> roles = role_names(spec);
  const std::string& name = roles.at(static_cast<std::size_t>(mode));
  if (name == "wide") return WYJIT_CONV1D_PATH_WIDE;
  if (name == "narrow") return WYJIT_CONV1D_PATH_NARROW;
  throw std::logic_error("conv1d_update has no kernel '" + name + "'");
}

class Conv1dUpdateLaunch final : public FamilyLaunch {
 public:
  Conv1dUpdateLaunch(const Sample& sample, const RigOptions& options)
      : spec_(std::get<Conv1dUpdateSpec>(sample.spec)),
        batch_(sample.batch),
        channels_(sample.shape[0]),
        contiguous_(sample.shape[1] != 0),
        io_(io_type(spec_.io)),
        wt_(io_type(spec_.weight)),
        hazard_(options.hazard) {
    const std::int64_t pad = options.padded ? 1 : 0;
    const std::int64_t C = channels_;
    K_ = spec_.k;
    H_ = spec_.width - 1;
    window_ = spec_.rollback == Rollback::window;
    written_cols_ = window_ ? H_ + K_ : H_;
    Conv1dUpdateArgs& a = args_;
    a.batch = batch_;
    a.channels = channels_;
    a.k = K_;
    a.width = spec_.width;
    a.path = path_of(sample.spec, options.mode);
    // NOTE: padded x rows (and channel-contiguous tiles) keep a multiple of 4, the kernel's
    // vector path; padded y rows do not.
    a.x_stride = options.padded ? (C + 4) / 4 * 4 : C;
    a.y_stride = C + 3 * pad;
    a.state_cols = written_cols_ + 2 * pad;  // room for columns the launch must not touch
    if (contiguous_) {
      a.state_channel_stride = 1;
      a.state_col_stride = options.padded ? (C + 4) / 4 * 4 : C;
      tile_ = static_cast<std::size_t>(a.state_cols * a.state_col_stride);
    } else {
      a.state_col_stride = 1;
      a.state_channel_stride = a.state_cols + pad;
      tile_ = static_cast<std::size_t>(C * a.state_channel_stride);
    }
    rows_ = static_cast<std::size_t>(batch_) * static_cast<std::size_t>(K_);
  }

  // x, y, weight, then bias (option `bias`) and window_offset (window form).
  std::vector<BufferSpec> buffers() const override {
    const std::size_t io = io_size(io_);
    const std::size_t wt = io_size(wt_);
    const std::size_t C = static_cast<std::size_t>(channels_);
    std::vector<BufferSpec> list{{"x", rows_ * static_cast<std::size_t>(args_.x_stride) * io, io_},
                                 {"y", rows_ * static_cast<std::size_t>(args_.y_stride) * io, io_},
                                 {"weight", C * static_cast<std::size_t>(spec_.width) * wt, wt_}};
    if (spec_.bias) list.push_back({"bias", C * wt, wt_});
    if (window_) {
      list.push_back(
          {"window_offset", static_cast<std::size_t>(batch_) * sizeof(std::int32_t), IoType::f32});
    }
    return list;
  }

  TileShape tiles() const override {
    return {.writes = window_ ? 1 : K_, .span = tile_, .stride_multiple = 1, .type = io_};
  }

  void bind(const std::vector<void*>& device) override {
    Conv1dUpdateArgs& a = args_;
    a.x = device.at(0);
    a.y = device.at(1);
    a.weight = device.at(2);
    std::size_t next = 3;
    if (spec_.bias) a.bias = device.at(next++);
    if (window_) a.window_offset = static_cast<const std::int32_t*>(device.at(next++));
  }

  StateRefs& states() override { return args_.states; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding& padding,
            std::vector<std::vector<std::uint8_t>>& images) override {
    const std::size_t C = static_cast<std::size_t>(channels_);
    const std::size_t H = static_cast<std::size_t>(H_);
    const Conv1dShape shape{batch_, channels_, K_, spec_.width, spec_.bias, spec_.silu};
    Conv1dProblem p = make_random_conv1d_problem(shape, io_, wt_, seed);
    if (hazard_) apply_hazard(*hazard_, p);
    reference_ = conv1d_reference(p);

    // Window offsets first, whatever the addressing, so that every mode reads the same history.
    const std::int64_t max_offset = args_.state_cols - H_;
    std::mt19937_64 rng(seed * 7919 + 17);
    offset_.assign(static_cast<std::size_t>(batch_), 0);
    for (std::int32_t& o : offset_) {
      o = window_ ? static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(max_offset + 1))
                  : 0;
    }
    // Strided addressing cannot pad a sequence; the window form can, by its offset: below the
    // columns, or past them.
    if (window_ && spec_.addressing == Addressing::strided) {
      const auto past = static_cast<std::int32_t>(max_offset + 1);
      if (padding.middle && batch_ >= 3) offset_[1] = -1;
      if (padding.middle && batch_ >= 5) offset_[3] = past;
      for (int b = std::max(1, batch_ - padding.tail); b < batch_; ++b) {
        offset_[static_cast<std::size_t>(b)] = past;
      }
    }
    padded_.assign(static_cast<std::size_t>(batch_), false);
    for (int b = 0; b < batch_; ++b) {
      const std::int32_t o = offset_[static_cast<std::size_t>(b)];
      padded_[static_cast<std::size_t>(b)] = plan.padded(b) || o < 0 || o > max_offset;
    }

    HostTensor x(io_, rows_ * static_cast<std::size_t>(args_.x_stride));
    for (std::size_t r = 0; r < rows_; ++r) {
      for (std::size_t ch = 0; ch < C; ++ch) {
        x.set(r * static_cast<std::size_t>(args_.x_stride) + ch, p.x[r * C + ch]);
      }
    }
    images.push_back(std::move(x.bytes));
    images.push_back(poisoned(rows_ * static_cast<std::size_t>(args_.y_stride), io_));
    images.push_back(pack_io(p.weight, wt_));
    if (spec_.bias) images.push_back(pack_io(p.bias_values, wt_));
    if (window_) images.push_back(as_bytes(offset_));

    // The pool: poison, and each sequence's history in its read tile at its offset.
    HostTensor pool(io_, plan.pool_elems);
    for (int b = 0; b < batch_; ++b) {
      if (padded_[static_cast<std::size_t>(b)]) continue;
      const int tile = plan.read[static_cast<std::size_t>(b)];
      const std::int64_t o = offset_[static_cast<std::size_t>(b)];
      for (int ch = 0; ch < channels_; ++ch) {
        for (int j = 0; j < H_; ++j) {
          pool.set(element(plan, tile, ch, o + j),
                   p.state0[(static_cast<std::size_t>(b) * C + static_cast<std::size_t>(ch)) * H +
                            static_cast<std::size_t>(j)]);
        }
      }
    }
    images.push_back(std::move(pool.bytes));
  }

  std::vector<std::vector<bool>> written(const TilePlan& plan) const override {
    std::vector<std::vector<bool>> masks(buffer_count() + 1);
    std::vector<bool>& y = masks[1];
    y.assign(rows_ * static_cast<std::size_t>(args_.y_stride), false);
    for (std::size_t r = 0; r < rows_; ++r) {
      if (padded_[r / static_cast<std::size_t>(K_)]) continue;
      const auto row =
          y.begin() + static_cast<std::ptrdiff_t>(r * static_cast<std::size_t>(args_.y_stride));
      std::fill(row, row + channels_, true);
    }
    std::vector<bool>& pool = masks.back();
    pool.assign(plan.pool_elems, false);
    for_each_write(plan, [&](int, int, int tile) {
      for (int ch = 0; ch < channels_; ++ch) {
        for (int j = 0; j < written_cols_; ++j) pool[element(plan, tile, ch, j)] = true;
      }
    });
    return masks;
  }

  std::vector<CheckedTensor> compare(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const std::size_t C = static_cast<std::size_t>(channels_);
    const std::uint8_t* y = device.at(1).data();
    const std::uint8_t* pool = device.back().data();
    const NonFinite rule = nonfinite_rule(hazard_);
    ComparisonAccumulator y_cmp(rule);
    for (std::size_t r = 0; r < rows_; ++r) {
      if (padded_[r / static_cast<std::size_t>(K_)]) continue;
      for (std::size_t ch = 0; ch < C; ++ch) {
        y_cmp.add(reference_.y[r * C + ch],
                  load_io(y, r * static_cast<std::size_t>(args_.y_stride) + ch, io_));
      }
    }
    ComparisonAccumulator state_cmp(rule);
    for_each_write(plan, [&](int b, int t, int tile) {
      for (int ch = 0; ch < channels_; ++ch) {
        for (int j = 0; j < written_cols_; ++j) {
          state_cmp.add(want_state(b, t, ch, j), load_io(pool, element(plan, tile, ch, j), io_));
        }
      }
    });
    // A state holds inputs, so it must be bit for bit what was read (a NaN or an infinity too,
    // by class).
    return {{"y", y_cmp.finish(), hazard_tolerance(hazard_, y_tolerance(spec_.io))},
            {"states written", state_cmp.finish(), 0.0}};
  }

  // y rows [b*K + t] (channels elements), then state writes [b*writes + t] (channel by channel,
  // the columns written).
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const std::size_t io = io_size(io_);
    const std::vector<std::uint8_t>& y = device.at(1);
    const std::vector<std::uint8_t>& pool = device.back();
    const std::size_t writes = static_cast<std::size_t>(tiles().writes);
    std::vector<std::vector<std::uint8_t>> items(rows_ + static_cast<std::size_t>(batch_) * writes);
    for (std::size_t r = 0; r < rows_; ++r) {
      if (padded_[r / static_cast<std::size_t>(K_)]) continue;
      const auto row = y.begin() + static_cast<std::ptrdiff_t>(
                                       r * static_cast<std::size_t>(args_.y_stride) * io);
      items[r].assign(row,
                      row + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(channels_) * io));
    }
    for_each_write(plan, [&](int b, int t, int tile) {
      std::vector<std::uint8_t>& item =
          items[rows_ + static_cast<std::size_t>(b) * writes + static_cast<std::size_t>(t)];
      for (int ch = 0; ch < channels_; ++ch) {
        for (int j = 0; j < written_cols_; ++j) {
          const auto at =
              pool.begin() + static_cast<std::ptrdiff_t>(element(plan, tile, ch, j) * io);
          item.insert(item.end(), at, at + static_cast<std::ptrdiff_t>(io));
        }
      }
    });
    return items;
  }

  // NaN, +inf and -inf in one element of x, of the weights and of the bias.
  std::vector<NumberHazard> number_hazards() const override {
    std::vector<NumberHazard> list;
    for (const char* input : {"x", "weight", "bias"}) {
      if (std::string_view(input) == "bias" && !spec_.bias) continue;
      for (const double v :
           {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity()}) {
        list.push_back(hazard_element(input, v));
      }
    }
    return list;
  }

  void check_args() const override { check_conv1d_update_args(spec_, args_); }
  wyjit_status check_args_c(const char* name) const override {
    return wyjit_check_conv1d_update(name, &args_);
  }
  void launch(const Kernel& kernel, CUstream stream) const override {
    launch_conv1d_update(kernel, args_, stream);
  }
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const override {
    return wyjit_launch_conv1d_update(kernel, &args_, stream);
  }

  std::string describe() const override {
    return "channels=" + std::to_string(channels_) +
           (contiguous_ ? " tiles=[cols][channels]" : " tiles=[channels][cols]");
  }

 private:
  // `h` in sequence batch/2, token K/2 (or every token), channel channels/3 of x; weight w = 1
  // (of W) and the bias of that channel.
  void apply_hazard(const NumberHazard& h, Conv1dProblem& p) const {
    const std::size_t C = static_cast<std::size_t>(channels_);
    const std::size_t K = static_cast<std::size_t>(K_);
    const std::size_t c = C / 3;
    const float value = static_cast<float>(h.value);
    if (h.row) throw std::logic_error("conv1d_update has no rows to scale: " + h.describe());
    if (h.input == "x") {
      const std::size_t b = static_cast<std::size_t>(batch_ / 2);
      for (std::size_t t = h.every_token ? 0 : K / 2; t < (h.every_token ? K : K / 2 + 1); ++t) {
        p.x[(b * K + t) * C + c] = round_to_io(value, io_);
      }
    } else if (h.input == "weight") {
      p.weight[c * static_cast<std::size_t>(spec_.width) + 1] = round_to_io(value, wt_);
    } else if (h.input == "bias" && spec_.bias) {
      p.bias_values[c] = round_to_io(value, wt_);
    } else {
      throw std::logic_error("conv1d_update has no input for " + h.describe());
    }
  }

  std::size_t buffer_count() const { return 3 + (spec_.bias ? 1 : 0) + (window_ ? 1 : 0); }

  // Element (channel c, column j) of `tile` in the pool.
  std::size_t element(const TilePlan& plan, int tile, int c, std::int64_t j) const {
    return plan.at(tile) +
           static_cast<std::size_t>(c * args_.state_channel_stride + j * args_.state_col_stride);
  }

  // Calls f(b, t, tile) for every tile the launch must write.
  template <class F>
  void for_each_write(const TilePlan& plan, F f) const {
    for (int b = 0; b < batch_; ++b) {
      if (padded_[static_cast<std::size_t>(b)]) continue;
      for (int t = 0; t < plan.writes; ++t) {
        const int tile = plan.write_tile(b, t);
        if (tile >= 0) f(b, t, tile);
      }
    }
  }

  // Column j of channel ch of write t of sequence b, as the reference has it: the window z, or
  // the state after token t.
  float want_state(int b, int t, int ch, int j) const {
    const std::size_t C = static_cast<std::size_t>(channels_);
    const std::size_t B = static_cast<std::size_t>(b);
    const std::size_t c = static_cast<std::size_t>(ch);
    if (window_) {
      return reference_
          .window[(B * C + c) * static_cast<std::size_t>(H_ + K_) + static_cast<std::size_t>(j)];
    }
    const std::size_t token = B * static_cast<std::size_t>(K_) + static_cast<std::size_t>(t);
    return reference_
        .states[(token * C + c) * static_cast<std::size_t>(H_) + static_cast<std::size_t>(j)];
  }

  Conv1dUpdateSpec spec_;
  int batch_, channels_;
  bool contiguous_;
  IoType io_, wt_;
  int K_ = 0, H_ = 0, written_cols_ = 0;
  bool window_ = false;
  std::size_t tile_ = 0;  // elements one state tile spans
  std::size_t rows_ = 0;  // batch*K
  std::optional<NumberHazard> hazard_;
  Conv1dUpdateArgs args_;
  // The last fill().
  Conv1dReference reference_;
  std::vector<std::int32_t> offset_;
  std::vector<bool> padded_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_conv1d_update_launch(const Sample& sample,
                                                        const RigOptions& options) {
  return std::make_unique<Conv1dUpdateLaunch>(sample, options);
}

}  // namespace wyjit::test::conformance
