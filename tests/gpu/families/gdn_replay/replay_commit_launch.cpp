// SPDX-License-Identifier: Apache-2.0
// gdn_replay's commit in the conformance kit: random cursors (folding and not, as the verifies of
// the step saw them) and accepted counts of every kind the contract names (negative: padding,
// left as it was; 0; 1..K; more than K, taken as K); the launch updates the cursors in place and
// writes nothing else. It has no state references: the rig's pool is bound to references no
// argument holds, and must come through untouched like every other buffer.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/gdn_replay_reference.hpp"
#include "gpu/families/gdn_replay/gdn_replay_launch.hpp"
#include "gpu/families/gdn_replay/replay_problem.hpp"
#include "gpu/support/host_tensor.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test::conformance {

namespace {

class ReplayCommitLaunch final : public FamilyLaunch {
 public:
  ReplayCommitLaunch(const Sample& sample, const RigOptions& options)
      : spec_(std::get<GdnReplaySpec>(sample.spec)), batch_(sample.batch) {
    args_.batch = batch_;
    args_.k = spec_.k;
    args_.cursor_stride = options.padded ? 3 : 2;
  }

  // The cursors (updated in place), the accepted counts.
  std::vector<BufferSpec> buffers() const override {
    return {{"cursor", cursor_elems() * 4, IoType::f32},
            {"accepted", std::size_t(batch_) * 4, IoType::f32}};
  }

  TileShape tiles() const override {
    return {.writes = 1, .span = 4, .stride_multiple = 4, .type = IoType::f32};
  }

  void bind(const std::vector<void*>& device) override {
    args_.cursor = static_cast<std::int32_t*>(device.at(0));
    args_.accepted = static_cast<const std::int32_t*>(device.at(1));
  }

  StateRefs& states() override { return unbound_; }

  void fill(std::uint64_t seed, const TilePlan& plan, const Padding& padding,
            std::vector<std::vector<std::uint8_t>>& images) override {
    const int K = spec_.k;
    before_ = random_cursors(batch_, K, spec_.log, seed);
    std::mt19937_64 rng(seed * 0xd6e8feb86659fd93ull + 5);
    accepted_.assign(std::size_t(batch_), 0);
    for (int b = 0; b < batch_; ++b) {
      // Every kind the contract names, in turn: padding, none, more than K (taken as K), 1..K.
      // NOTE: sequence 0 always accepts a token, so that its cursor changes: the commit writes
      // only in place, and this is what shows it ran.
      const std::uint64_t kind = b == 0 ? 2 + seed % 2 : (static_cast<std::uint64_t>(b) + seed) % 4;
      const int r = static_cast<int>(rng() % 64);
      accepted_[std::size_t(b)] = kind == 0   ? -1 - r % 3
                                  : kind == 1 ? 0
                                  : kind == 2 ? K + 1 + r % 4
                                              : 1 + r % K;
    }
    // Where the rig pads a sequence the engine commits nothing for it; strided addressing pads
    // none, so the commit's own padding stands in for it.
    for (int b = 1; b < batch_; ++b) {
      const bool pad =
          plan.padded(b) || (padding.middle && batch_ >= 3 && b == 1) || b >= batch_ - padding.tail;
      if (pad) accepted_[std::size_t(b)] = -1;
    }
    images.push_back(cursor_image(before_, args_.cursor_stride));
    images.push_back(as_bytes(accepted_));
    images.push_back(poisoned(plan.pool_elems, IoType::f32));
  }

  // The cursors of the sequences committed; nothing of the accepted counts or the pool.
  std::vector<std::vector<bool>> written(const TilePlan&) const override {
    std::vector<std::vector<bool>> masks(3);
    masks[0].assign(cursor_elems(), false);
    for (int b = 0; b < batch_; ++b) {
      if (accepted_[std::size_t(b)] < 0) continue;
      masks[0][at(b)] = true;
      masks[0][at(b) + 1] = true;
    }
    return masks;
  }

  std::vector<std::vector<bool>> in_place(const TilePlan& plan) const override {
    return written(plan);
  }

  std::vector<CheckedTensor> compare(
      const TilePlan&, const std::vector<std::vector<std::uint8_t>>& device) const override {
    ComparisonAccumulator cursors;
    std::size_t changed = 0;
    for (int b = 0; b < batch_; ++b) {
      const int a = accepted_[std::size_t(b)];
      if (a < 0) continue;
      const ReplayCursor& c = before_[std::size_t(b)];
      const ReplayCursor want = replay_commit(c, a, spec_.k, spec_.log);
      changed += want == c ? 0 : 1;
      cursors.add(want.base, cursor_field(device.at(0), at(b)));
      cursors.add(want.len, cursor_field(device.at(0), at(b) + 1));
    }
    return {{"cursors {base, len}", cursors.finish(), 0.0},
            {"sequences whose cursor must change: none (the check above would not show a "
             "commit that did nothing)",
             count_comparison(changed == 0 ? 1 : 0), 0.0}};
  }

  // The cursor of each sequence committed [b].
  std::vector<std::vector<std::uint8_t>> canonical(
      const TilePlan&, const std::vector<std::vector<std::uint8_t>>& device) const override {
    std::vector<std::vector<std::uint8_t>> items(static_cast<std::size_t>(batch_));
    for (int b = 0; b < batch_; ++b) {
      if (accepted_[std::size_t(b)] < 0) continue;
      const auto first = device.at(0).begin() + static_cast<std::ptrdiff_t>(at(b) * 4);
      items[std::size_t(b)].assign(first, first + 8);
    }
    return items;
  }

  // No state references to break: the accepted counts.
  BrokenArgument break_argument(Addressing) override {
    const std::int32_t* saved = args_.accepted;
    args_.accepted = nullptr;
    return {"args.accepted is null", [this, saved] { args_.accepted = saved; }};
  }

  void check_args() const override { check_gdn_replay_commit_args(spec_, args_); }
  wyjit_status check_args_c(const char* name) const override {
    return wyjit_check_gdn_replay_commit(name, &args_);
  }
  void launch(const Kernel& kernel, CUstream stream) const override {
    launch_gdn_replay_commit(kernel, args_, stream);
  }
  wyjit_status launch_c(const wyjit_kernel* kernel, CUstream stream) const override {
    return wyjit_launch_gdn_replay_commit(kernel, &args_, stream);
  }

  std::string describe() const override { return "cursors only"; }

 private:
  std::size_t cursor_elems() const {
    return std::size_t(batch_) * static_cast<std::size_t>(args_.cursor_stride);
  }
  std::size_t at(int b) const {
    return std::size_t(b) * static_cast<std::size_t>(args_.cursor_stride);
  }
  static double cursor_field(const std::vector<std::uint8_t>& image, std::size_t element) {
    std::int32_t x = 0;
    std::memcpy(&x, image.data() + element * 4, 4);
    return x;
  }

  GdnReplaySpec spec_;
  int batch_;
  GdnReplayCommitArgs args_;
  StateRefs unbound_{};  // what the rig binds its pool to: no argument of a commit
  // The last fill().
  std::vector<ReplayCursor> before_;
  std::vector<std::int32_t> accepted_;
};

}  // namespace

std::unique_ptr<FamilyLaunch> make_gdn_replay_commit_launch(const Sample& sample,
                                                            const RigOptions& options) {
  return std::make_unique<ReplayCommitLaunch>(sample, options);
}

}  // namespace wyjit::test::conformance
