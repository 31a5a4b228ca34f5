// SPDX-License-Identifier: Apache-2.0
// gdn_replay's verify in the conformance kit: random checkpoints (the rig's pool, in the state
// dtype), random live logs and cursors (replay_problem.hpp), random tokens. The launch must
// write the outputs, K log entries per sequence past its live ones (k rows, u strips, G) and, on
// a fold, S_cur as the new checkpoint (write 0), checked against the float64 sequential
// recurrence from S_cur; everything else it must leave as it was, the cursors included.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/conformance/family_refs.hpp"
#include "gpu/families/gdn_common/gdn_number_hazards.hpp"
#include "gpu/families/gdn_common/gdn_token_buffers.hpp"
#include "gpu/families/gdn_replay/gdn_replay_launch.hpp"
#include "gpu/families/gdn_replay/replay_problem.hpp"
#include "gpu/support/host_tensor.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test::conformance {

namespace {

constexpr std::uint64_t kLogSalt = 0x6c6f67;

class ReplayVerifyLaunch final : public FamilyLaunch {
 public:
  ReplayVerifyLaunch(const Sample& sample, const RigOptions& options, std::int32_t path)
      : spec_(std::get<GdnReplaySpec>(sample.spec)),
        sizes_{sample.batch, sample.shape[0], sample.shape[1]},
        st_(io_type(spec_.state)),
        layout_{spec_.log, sizes_.hk, sizes_.hv, spec_.dk, spec_.dv},
        tile_(std::size_t(sizes_.hv) * std::size_t(spec_.dk) * std::size_t(spec_.dv)),
        tokens_({sizes_.batch, sizes_.hk, sizes_.hv, spec_.k, spec_.dk, spec_.dv, spec_.l2norm_qk,
                 spec_.fused_gating},
                io_type(spec_.io), options.padded),
        // NOTE: log tiles 4 floats apart at least: the kernel copies their rows 16 bytes at a
        // time.
        log_("log", spec_.addressing, sizes_.batch,
             {.writes = 1, .span = layout_.floats(), .stride_multiple = 4, .type = IoType::f32},
             options.padded, kLogSalt),
        hazard_(options.hazard) {
    args_.cursor_stride = options.padded ? 3 : 2;
    args_.path = path;
  }

  // The tokens (out last), the cursors, the log's pool and slot arrays.
  std::vector<BufferSpec> buffers() const override {
    std::vector<BufferSpec> list = tokens_.buffers();
    list.push_back({"cursor", cursor_bytes(), IoType::f32});
    for (BufferSpec& b : log_.buffers()) list.push_back(std::move(b));
    return list;
  }

  TileShape tiles() const override {
    // NOTE: a multiple of 4 elements apart: the kernel reads checkpoint rows 4 at a time.
    return {.writes = 1, .span = tile_, .stride_multiple = 4, .type = st_};
  }

  void bind(const std::vector<void*>& device) override {
    tokens_.bind(args_, device);
    args_.cursor = static_cast<const std::int32_t*>(device.at(cursor_index()));
    log_.bind(args_.log, device, cursor_index() + 1);
    // NOTE: the log is read and written in place: its references name no write slots.
    args_.log.write_slot = nullptr;
    args_.log.write_slot_stride = 0;
  }

  StateRefs& states() override { return args_.states; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding& padding,
            std::vector<std::vector<std::uint8_t>>& images) override {
    problem_ = make_replay_problem(spec_, sizes_, seed);
    if (hazard_) apply_number_hazard(*hazard_, problem_.tokens, io_type(spec_.io));
    reference_ = replay_verify_reference(problem_);
    tokens_.append_images(problem_.tokens, images);
    images.push_back(cursor_image(problem_.cursors, args_.cursor_stride));
    log_plan_ = log_.plan(seed, padding, plan);
    log_.append_images(pool_image(
                           log_plan_, IoType::f32, [&](int b) { return log_plan_.read[idx(b)]; },
                           [&](int b) { return problem_.logs[idx(b)]; }),
                       images);
    images.push_back(pool_image(
        plan, st_, [&](int b) { return plan.read[idx(b)]; },
        [&](int b) {
          return state_tile(problem_.tokens.state0, b, sizes_.hv, spec_.dk, spec_.dv, spec_.layout);
        }));
  }

  void stage(CUstream stream) override { log_.stage(stream); }

  std::vector<std::vector<bool>> written(const TilePlan& plan) const override {
    std::vector<std::vector<bool>> masks(pool_index() + 1);
    masks[tokens_.out_index()] = tokens_.out_mask(live(plan));
    std::vector<bool>& log = masks[cursor_index() + 1];
    log.assign(log_.pool_elems(), false);
    for_each_entry(plan, [&](int b, int, int pos) {
      const std::size_t at = log_plan_.at(log_plan_.read[idx(b)]);
      for (int h = 0; h < sizes_.hk; ++h) mark(log, at + layout_.k(pos, h), spec_.dk);
      for (int vh = 0; vh < sizes_.hv; ++vh) {
        mark(log, at + layout_.u(pos, vh), spec_.dv);
        mark(log, at + layout_.g(pos, vh), 1);
      }
    });
    std::vector<bool>& pool = masks[pool_index()];
    pool.assign(plan.pool_elems, false);
    for_each_fold(plan, [&](int, int tile) { mark(pool, plan.at(tile), static_cast<int>(tile_)); });
    return masks;
  }

  std::vector<CheckedTensor> compare(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const int K = spec_.k, HK = sizes_.hk, HV = sizes_.hv, DK = spec_.dk, DV = spec_.dv;
    const NonFinite rule = nonfinite_rule(hazard_);
    std::vector<CheckedTensor> checks;
    checks.push_back(
        {"out",
         tokens_.compare_out(reference_.out, device.at(tokens_.out_index()), live(plan), rule),
         hazard_tolerance(hazard_, replay_out_tolerance(spec_))});

    const std::uint8_t* log = device.at(cursor_index() + 1).data();
    ComparisonAccumulator k_cmp(rule), u_cmp(rule), g_cmp;
    for_each_entry(plan, [&](int b, int t, int pos) {
      const std::size_t at = log_plan_.at(log_plan_.read[idx(b)]);
      const std::size_t row = std::size_t(b * K + t);
      const bool fold = replay_folds(problem_.cursors[idx(b)], K, spec_.log);
      for (int h = 0; h < HK; ++h) {
        for (int i = 0; i < DK; ++i) {
          k_cmp.add(reference_.keys[(row * std::size_t(HK) + std::size_t(h)) * std::size_t(DK) +
                                    std::size_t(i)],
                    load_io(log, at + layout_.k(pos, h) + std::size_t(i), IoType::f32));
        }
      }
      for (int vh = 0; vh < HV; ++vh) {
        for (int j = 0; j < DV; ++j) {
          u_cmp.add(
              reference_
                  .u[(row * std::size_t(HV) + std::size_t(vh)) * std::size_t(DV) + std::size_t(j)],
              load_io(log, at + layout_.u(pos, vh) + std::size_t(j), IoType::f32));
        }
        g_cmp.add(replay_logged_g(problem_, reference_, b, t, vh, fold),
                  load_io(log, at + layout_.g(pos, vh), IoType::f32));
      }
    });
    const double log_tolerance = hazard_tolerance(hazard_, kReplayLogTolerance);
    checks.push_back({"log entries: k", k_cmp.finish(), log_tolerance});
    checks.push_back({"log entries: u", u_cmp.finish(), log_tolerance});
    if (hazard_) {
      // NOTE: an entry's G after a gate the kernel floors (-inf, -1e30: common/gdn_tokens.cuh)
      // is not the float64 sum by design; the entries are checked by the states they stand for.
      checks.push_back({"states from the log (S_cur after each token)",
                        logged_states(plan, device.at(cursor_index() + 1), rule), log_tolerance});
    } else {
      checks.push_back({"log entries: G", g_cmp.finish(), kReplayLogTolerance});
    }

    ComparisonAccumulator fold_cmp;
    for_each_fold(plan, [&](int b, int tile) {
      compare_state_tile(fold_cmp, problem_.current, b, device.at(pool_index()).data(),
                         plan.at(tile), st_, HV, DK, DV, spec_.layout);
    });
    if (fold_cmp.finish().count > 0) {
      checks.push_back(
          {"folded checkpoint (S_cur)", fold_cmp.finish(), replay_state_tolerance(spec_)});
    }
    return checks;
  }

  // out rows [b*K + t], then log entries [b*K + t] (k of every key head, u and G of every value
  // head), then the new checkpoints [b].
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan& plan, const std::vector<std::vector<std::uint8_t>>& device) const override {
    const std::size_t rows = tokens_.rows();
    std::vector<std::vector<std::uint8_t>> items =
        tokens_.out_rows(device.at(tokens_.out_index()), live(plan));
    items.resize(2 * rows + std::size_t(sizes_.batch));
    const std::vector<std::uint8_t>& log = device.at(cursor_index() + 1);
    const auto append = [](std::vector<std::uint8_t>& item, const std::vector<std::uint8_t>& from,
                           std::size_t at, std::size_t bytes) {
      const auto first = from.begin() + static_cast<std::ptrdiff_t>(at);
      item.insert(item.end(), first, first + static_cast<std::ptrdiff_t>(bytes));
    };
    for_each_entry(plan, [&](int b, int t, int pos) {
      const std::size_t at = log_plan_.at(log_plan_.read[idx(b)]);
      std::vector<std::uint8_t>& item = items[rows + std::size_t(b * spec_.k + t)];
      for (int h = 0; h < sizes_.hk; ++h) {
        append(item, log, (at + layout_.k(pos, h)) * 4, std::size_t(spec_.dk) * 4);
      }
      for (int vh = 0; vh < sizes_.hv; ++vh) {
        append(item, log, (at + layout_.u(pos, vh)) * 4, std::size_t(spec_.dv) * 4);
      }
      for (int vh = 0; vh < sizes_.hv; ++vh) append(item, log, (at + layout_.g(pos, vh)) * 4, 4);
    });
    const std::size_t st = io_size(st_);
    for_each_fold(plan, [&](int b, int tile) {
      append(items[2 * rows + idx(b)], device.at(pool_index()), plan.at(tile) * st, tile_ * st);
    });
    return items;
  }

  std::vector<NumberHazard> number_hazards() const override {
    return gdn_number_hazards({sizes_.batch, sizes_.hk, sizes_.hv, spec_.k, spec_.dk, spec_.dv,
                               spec_.l2norm_qk, spec_.fused_gating},
                              io_type(spec_.io));
  }

  void check_args() const override { check_gdn_replay_verify_args(spec_, args_); }
  wyjit_status check_args_c(const char* name) const override {
    return wyjit_check_gdn_replay_verify(name, &args_);
  }
  void launch(const Kernel& kernel, CUstream stream) const override {
    launch_gdn_replay_verify(kernel, args_, stream);
  }
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const override {
    return wyjit_launch_gdn_replay_verify(kernel, &args_, stream);
  }

  std::string describe() const override {
    return "hk=" + std::to_string(sizes_.hk) + " hv=" + std::to_string(sizes_.hv);
  }

 private:
  static std::size_t idx(int b) { return static_cast<std::size_t>(b); }
  static GdnTokenBuffers::Live live(const TilePlan& plan) {
    return [&plan](int b) { return !plan.padded(b); };
  }
  static void mark(std::vector<bool>& mask, std::size_t at, int count) {
    std::fill(mask.begin() + static_cast<std::ptrdiff_t>(at),
              mask.begin() + static_cast<std::ptrdiff_t>(at + std::size_t(count)), true);
  }
  std::size_t cursor_index() const { return tokens_.count(); }
  std::size_t pool_index() const { return cursor_index() + 1 + log_.count(); }
  std::size_t cursor_bytes() const {
    return std::size_t(sizes_.batch) * static_cast<std::size_t>(args_.cursor_stride) * 4;
  }

  // The state after each token of every live sequence as the next verify and materialize see
  // it: S_cur from the checkpoint (the new one, S_cur in float64, after a fold) and the log as
  // the launch left it (`log_pool`, a device image), in double, against the reference's states.
  Comparison logged_states(const TilePlan& plan, const std::vector<std::uint8_t>& log_pool,
                           NonFinite rule) const {
    const int K = spec_.k, L = spec_.log;
    ComparisonAccumulator cmp(rule);
    std::vector<float> log(layout_.floats());
    for (int b = 0; b < sizes_.batch; ++b) {
      if (plan.padded(b)) continue;
      const std::size_t at = log_plan_.at(log_plan_.read[idx(b)]);
      std::memcpy(log.data(), log_pool.data() + at * sizeof(float), log.size() * sizeof(float));
      const ReplayCursor& c = problem_.cursors[idx(b)];
      const bool fold = replay_folds(c, K, L);
      const auto first = static_cast<std::ptrdiff_t>(idx(b) * tile_);
      const auto last = first + static_cast<std::ptrdiff_t>(tile_);
      const std::vector<double> s0 =
          fold ? std::vector<double>(problem_.current.begin() + first,
                                     problem_.current.begin() + last)
               : std::vector<double>(problem_.tokens.state0.begin() + first,
                                     problem_.tokens.state0.begin() + last);
      for (int t = 0; t < K; ++t) {
        const ReplayCursor after = fold ? ReplayCursor{(c.base + c.len) & (L - 1), t + 1}
                                        : ReplayCursor{c.base, c.len + t + 1};
        const std::vector<double> state =
            replay_current_state(s0.data(), log.data(), layout_, after);
        const double* want = reference_.states.data() + std::size_t(b * K + t) * tile_;
        for (std::size_t e = 0; e < tile_; ++e) cmp.add(want[e], state[e]);
      }
    }
    return cmp.finish();
  }

  // f(b, t, position) for every log entry the launch must write: K per live sequence, past
  // its live ones.
  template <class F>
  void for_each_entry(const TilePlan& plan, F f) const {
    for (int b = 0; b < sizes_.batch; ++b) {
      if (plan.padded(b)) continue;
      const ReplayCursor& c = problem_.cursors[idx(b)];
      for (int t = 0; t < spec_.k; ++t) f(b, t, layout_.position(c, c.len + t));
    }
  }
  // f(b, tile) for every sequence that folds into a checkpoint tile (not a skipped write).
  template <class F>
  void for_each_fold(const TilePlan& plan, F f) const {
    for (int b = 0; b < sizes_.batch; ++b) {
      if (plan.padded(b) || !replay_folds(problem_.cursors[idx(b)], spec_.k, spec_.log)) continue;
      const int tile = plan.write_tile(b, 0);
      if (tile >= 0) f(b, tile);
    }
  }

  GdnReplaySpec spec_;
  ReplaySizes sizes_;
  IoType st_;
  ReplayLogLayout layout_;
  std::size_t tile_;  // HV*dk*dv: one checkpoint
  GdnTokenBuffers tokens_;
  FamilyRefs log_;
  std::optional<NumberHazard> hazard_;
  GdnReplayVerifyArgs args_;
  // The last fill().
  ReplayProblem problem_;
  GdnReference reference_;
  TilePlan log_plan_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_gdn_replay_verify_launch(const Sample& sample,
                                                            const RigOptions& options,
                                                            std::int32_t path) {
  return std::make_unique<ReplayVerifyLaunch>(sample, options, path);
}

}  // namespace wyjit::test::conformance
