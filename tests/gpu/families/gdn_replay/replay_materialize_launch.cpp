// SPDX-License-Identifier: Apache-2.0
// gdn_replay's materialize in the conformance kit: random checkpoints (the rig's pool), live
// logs and cursors (replay_problem.hpp); the launch writes S_cur of each sequence to write 0 of
// `out` (a poisoned pool of the launch's own, in the variant's addressing mode), checked against
// S_cur in float64, and changes nothing else: checkpoints, logs and cursors stay as they were.
#include <memory>
#include <string>
#include <vector>

#include "gpu/conformance/family_refs.hpp"
#include "gpu/families/gdn_replay/gdn_replay_launch.hpp"
#include "gpu/families/gdn_replay/replay_problem.hpp"
#include "gpu/support/host_tensor.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test::conformance {

namespace {

constexpr std::uint64_t kLogSalt = 0x6c6f67;
constexpr std::uint64_t kOutSalt = 0x6f7574;

class ReplayMaterializeLaunch final : public FamilyLaunch {
 public:
  ReplayMaterializeLaunch(const Sample& sample, const RigOptions& options)
      : spec_(std::get<GdnReplaySpec>(sample.spec)),
        sizes_{sample.batch, sample.shape[0], sample.shape[1]},
        st_(io_type(spec_.state)),
        tile_(std::size_t(sizes_.hv) * std::size_t(spec_.dk) * std::size_t(spec_.dv)),
        log_("log", spec_.addressing, sizes_.batch,
             {.writes = 1,
              .span = ReplayLogLayout{spec_.log, sizes_.hk, sizes_.hv, spec_.dk, spec_.dv}.floats(),
              .stride_multiple = 4,
              .type = IoType::f32},
             options.padded, kLogSalt),
        out_("out", spec_.addressing, sizes_.batch,
             {.writes = 1, .span = tile_, .stride_multiple = 4, .type = st_}, options.padded,
             kOutSalt) {
    GdnReplayMaterializeArgs& a = args_;
    a.batch = sizes_.batch;
    a.num_k_heads = sizes_.hk;
    a.num_v_heads = sizes_.hv;
    a.dk = spec_.dk;
    a.dv = spec_.dv;
    a.cursor_stride = options.padded ? 3 : 2;
  }

  // The cursors, the log's pool and slot arrays, out's pool and slot arrays.
  std::vector<BufferSpec> buffers() const override {
    std::vector<BufferSpec> list{
        {"cursor", std::size_t(sizes_.batch) * static_cast<std::size_t>(args_.cursor_stride) * 4,
         IoType::f32}};
    for (BufferSpec& b : log_.buffers()) list.push_back(std::move(b));
    for (BufferSpec& b : out_.buffers()) list.push_back(std::move(b));
    return list;
  }

  TileShape tiles() const override {
    // NOTE: a multiple of 4 elements apart: the kernel reads checkpoint rows 4 at a time.
    return {.writes = 1, .span = tile_, .stride_multiple = 4, .type = st_};
  }

  void bind(const std::vector<void*>& device) override {
    args_.cursor = static_cast<const std::int32_t*>(device.at(0));
    log_.bind(args_.log, device, log_index());
    args_.log.write_slot = nullptr;  // read only: no write slots
    args_.log.write_slot_stride = 0;
    out_.bind(args_.out, device, out_index());
    // NOTE: write only: the contract names out.write_slot[b] alone, no read slots.
    args_.out.read_slot = nullptr;
  }

  StateRefs& states() override { return args_.states; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding& padding,
            std::vector<std::vector<std::uint8_t>>& images) override {
    problem_ = make_replay_problem(spec_, sizes_, seed);
    images.push_back(cursor_image(problem_.cursors, args_.cursor_stride));
    log_plan_ = log_.plan(seed, padding, plan);
    log_.append_images(pool_image(
                           log_plan_, IoType::f32, [&](int b) { return log_plan_.read[idx(b)]; },
                           [&](int b) { return problem_.logs[idx(b)]; }),
                       images);
    out_plan_ = out_.plan(seed, padding, plan);
    out_.append_images(poisoned(out_.pool_elems(), st_), images);
    images.push_back(pool_image(
        plan, st_, [&](int b) { return plan.read[idx(b)]; },
        [&](int b) {
          return state_tile(problem_.tokens.state0, b, sizes_.hv, spec_.dk, spec_.dv, spec_.layout);
        }));
  }

  void stage(CUstream stream) override {
    log_.stage(stream);
    out_.stage(stream);
  }

  std::vector<std::vector<bool>> written(const TilePlan& plan) const override {
    std::vector<std::vector<bool>> masks(out_index() + out_.count() + 1);
    std::vector<bool>& out = masks[out_index()];
    out.assign(out_.pool_elems(), false);
    for_each_write(plan, [&](int, std::size_t at) {
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(at),
                out.begin() + static_cast<std::ptrdiff_t>(at + tile_), true);
    });
    return masks;
  }

  std::vector<CheckedTensor> compare(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    ComparisonAccumulator cmp;
    for_each_write(plan, [&](int b, std::size_t at) {
      compare_state_tile(cmp, problem_.current, b, device.at(out_index()).data(), at, st_,
                         sizes_.hv, spec_.dk, spec_.dv, spec_.layout);
    });
    return {{"materialized state (S_cur)", cmp.finish(), replay_state_tolerance(spec_)}};
  }

  // S_cur of each sequence written [b].
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    std::vector<std::vector<std::uint8_t>> items(std::size_t(sizes_.batch));
    const std::size_t st = io_size(st_);
    for_each_write(plan, [&](int b, std::size_t at) {
      const auto first = device.at(out_index()).begin() + static_cast<std::ptrdiff_t>(at * st);
      items[idx(b)].assign(first, first + static_cast<std::ptrdiff_t>(tile_ * st));
    });
    return items;
  }

  void check_args() const override { check_gdn_replay_materialize_args(spec_, args_); }
  wyjit_status check_args_c(const char* name) const override {
    return wyjit_check_gdn_replay_materialize(name, &args_);
  }
  void launch(const Kernel& kernel, CUstream stream) const override {
    launch_gdn_replay_materialize(kernel, args_, stream);
  }
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const override {
    return wyjit_launch_gdn_replay_materialize(kernel, &args_, stream);
  }

  std::string describe() const override {
    return "hk=" + std::to_string(sizes_.hk) + " hv=" + std::to_string(sizes_.hv);
  }

 private:
  static std::size_t idx(int b) { return static_cast<std::size_t>(b); }
  static constexpr std::size_t log_index() { return 1; }
  std::size_t out_index() const { return log_index() + log_.count(); }

  // f(b, element offset in out's pool) for every sequence whose S_cur the launch must write: not
  // padded (its checkpoint and log are there) and its out entry not skipped.
  template <class F>
  void for_each_write(const TilePlan& plan, F f) const {
    for (int b = 0; b < sizes_.batch; ++b) {
      if (plan.padded(b)) continue;
      const int tile = out_plan_.write_tile(b, 0);
      if (tile >= 0) f(b, out_plan_.at(tile));
    }
  }

  GdnReplaySpec spec_;
  ReplaySizes sizes_;
  IoType st_;
  std::size_t tile_;  // HV*dk*dv: one state
  FamilyRefs log_;
  FamilyRefs out_;
  GdnReplayMaterializeArgs args_;
  // The last fill().
  ReplayProblem problem_;
  TilePlan log_plan_;
  TilePlan out_plan_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_gdn_replay_materialize_launch(const Sample& sample,
                                                                 const RigOptions& options) {
  return std::make_unique<ReplayMaterializeLaunch>(sample, options);
}

}  // namespace wyjit::test::conformance
