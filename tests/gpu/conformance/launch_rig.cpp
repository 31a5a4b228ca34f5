// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/launch_rig.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string_view>

namespace wyjit::test::conformance {

namespace {

// Elements of `type` in `after` that differ from `before`, outside `mask` (empty: everywhere).
std::size_t changed_elements(const std::vector<std::uint8_t>& before,
                             const std::vector<std::uint8_t>& after, const std::vector<bool>& mask,
                             std::size_t elem, const std::string& name) {
  if (before.size() != after.size()) {
    throw std::logic_error(name + ": " + std::to_string(after.size()) + " bytes downloaded, " +
                           std::to_string(before.size()) + " uploaded");
  }
  if (mask.empty()) {
    if (before == after) return 0;
  } else if (mask.size() * elem != before.size()) {
    throw std::logic_error(name + ": a write mask of " + std::to_string(mask.size()) +
                           " elements for " + std::to_string(before.size()) + " bytes");
  }
  std::size_t changed = 0;
  for (std::size_t e = 0; e * elem < before.size(); ++e) {
    if (!mask.empty() && mask[e]) continue;
    changed += std::memcmp(before.data() + e * elem, after.data() + e * elem, elem) == 0 ? 0 : 1;
  }
  return changed;
}

// "what (a: 3, b: 1)" listing the non-zero counts, so a failure names the buffers.
std::string with_counts(const std::string& what, const std::vector<std::string>& names,
                        const std::vector<std::size_t>& counts) {
  std::string detail;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (counts[i] == 0) continue;
    detail += (detail.empty() ? "" : ", ") + names[i] + ": " + std::to_string(counts[i]);
  }
  return detail.empty() ? what : what + " (" + detail + ")";
}

}  // namespace

LaunchRig::LaunchRig(const FamilyCase& family, const Sample& sample, const RigOptions& options)
    : family_(family),
      sample_(sample),
      options_(options),
      launch_(family.make_launch(sample, options)) {
  const TileShape tiles = launch_->tiles();
  binder_ = std::make_unique<StateBinder>(addressing_of(sample.spec), sample.batch, tiles,
                                          options.padded, options.token_major);
  specs_ = launch_->buffers();
  family_buffers_ = specs_.size();
  specs_.push_back({"state pool", binder_->pool_elems() * io_size(tiles.type), tiles.type});
  for (const StateBinder::Array& a : binder_->arrays()) {
    specs_.push_back({a.name, a.bytes, IoType::f32});
  }
  buffers_.reserve(specs_.size());
  for (const BufferSpec& s : specs_) buffers_.emplace_back(s.bytes, options.guard_bytes);

  std::vector<void*> family_data;
  for (std::size_t i = 0; i < family_buffers_; ++i) family_data.push_back(buffers_[i].data());
  launch_->bind(family_data);
  std::vector<void*> arrays;
  for (std::size_t i = family_buffers_ + 1; i < buffers_.size(); ++i) {
    arrays.push_back(buffers_[i].data());
  }
  binder_->bind(launch_->states(), buffers_[family_buffers_].data(), arrays);
}

void LaunchRig::prepare(std::uint64_t seed, CUstream stream, const Padding& padding) {
  seed_ = seed;
  padding_ = padding;
  std::vector<std::vector<std::uint8_t>> arrays;
  plan_ = binder_->plan(seed, padding, arrays);
  images_.clear();
  launch_->fill(seed, plan_, padding, images_);
  if (images_.size() != family_buffers_ + 1) {
    throw std::logic_error(std::string(family_.name()) + ": fill() made " +
                           std::to_string(images_.size()) + " images for " +
                           std::to_string(family_buffers_) + " buffers and the pool");
  }
  for (std::vector<std::uint8_t>& a : arrays) images_.push_back(std::move(a));
  for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].upload_async(images_[i], stream);
  binder_->stage(stream);
  launch_->stage(stream);
}

void LaunchRig::launch(const Kernel& kernel, CUstream stream) const {
  launch_->launch(kernel, stream);
}

wyjit_status LaunchRig::launch_c(const wyjit_kernel* kernel, CUstream stream) const {
  return launch_->launch_c(kernel, stream);
}

std::vector<std::string> LaunchRig::corrupt_indices(std::uint64_t seed, CUstream stream) {
  static constexpr std::string_view kIndexArrays[] = {"read_slot", "write_slot", "cursor",
                                                      "accepted", "window_offset"};
  // NOTE: 0 too: an accepted count of 0 (the edge of 0..K), a slot or offset many share.
  static constexpr std::int32_t kHostile[] = {
      std::numeric_limits<std::int32_t>::min(), -1,   -2,     1 << 20,
      std::numeric_limits<std::int32_t>::max(), 4096, -65536, 0};
  std::mt19937_64 rng(seed);
  std::vector<std::string> corrupted;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const std::string& name = specs_[i].name;
    const bool index = std::any_of(std::begin(kIndexArrays), std::end(kIndexArrays),
                                   [&](std::string_view a) { return name.ends_with(a); });
    if (!index || images_[i].size() % sizeof(std::int32_t) != 0) continue;
    const std::size_t n = images_[i].size() / sizeof(std::int32_t);
    for (std::size_t e = 0; e < n; ++e) {
      // NOTE: every third value random over all of int32, the others from the list in turn.
      const std::int32_t v = e % 3 == 2 ? static_cast<std::int32_t>(rng())
                                        : kHostile[(e + seed) % std::size(kHostile)];
      std::memcpy(images_[i].data() + e * sizeof(std::int32_t), &v, sizeof v);
    }
    buffers_[i].upload_async(images_[i], stream);
    corrupted.push_back(name);
  }
  return corrupted;
}

std::size_t LaunchRig::guard_bytes_changed() const {
  std::size_t changed = 0;
  for (const GuardedBuffer& b : buffers_) changed += b.download().guard_bytes_changed;
  return changed;
}

std::vector<GuardedBuffer::Contents> LaunchRig::download() const {
  std::vector<GuardedBuffer::Contents> contents;
  contents.reserve(buffers_.size());
  for (const GuardedBuffer& b : buffers_) contents.push_back(b.download());
  return contents;
}

std::vector<CheckedTensor> LaunchRig::check_poisoned() const {
  const std::vector<GuardedBuffer::Contents> contents = download();
  const std::vector<std::vector<bool>> masks = launch_->written(plan_);
  const std::vector<std::vector<bool>> in_place = launch_->in_place(plan_);
  // The tiles a launch overwrites in place hold its initial states, not poison.
  std::vector<bool> read_tile(plan_.pool_elems, false);
  const std::size_t span = launch_->tiles().span;
  for (int b = 0; b < plan_.batch; ++b) {
    if (plan_.padded(b)) continue;
    const std::size_t at = plan_.at(plan_.read[static_cast<std::size_t>(b)]);
    std::fill(read_tile.begin() + static_cast<std::ptrdiff_t>(at),
              read_tile.begin() + static_cast<std::ptrdiff_t>(at + span), true);
  }
  std::size_t must_write = 0;
  std::size_t written_in_place = 0;
  std::size_t not_nan = 0;
  for (std::size_t i = 0; i < masks.size() && i < specs_.size(); ++i) {
    const bool pool = i == family_buffers_;
    if (masks[i].empty()) continue;
    if (masks[i].size() * io_size(specs_[i].type) != contents[i].data.size()) {
      throw std::logic_error(specs_[i].name + ": a write mask of " +
                             std::to_string(masks[i].size()) + " elements for " +
                             std::to_string(contents[i].data.size()) + " bytes");
    }
    const std::vector<bool>* family_in_place =
        i < in_place.size() && !in_place[i].empty() ? &in_place[i] : nullptr;
    if (family_in_place != nullptr && family_in_place->size() != masks[i].size()) {
      throw std::logic_error(specs_[i].name + ": an in-place mask of " +
                             std::to_string(family_in_place->size()) + " elements for " +
                             std::to_string(masks[i].size()));
    }
    for (std::size_t e = 0; e < masks[i].size(); ++e) {
      if (!masks[i][e]) continue;
      if ((pool && read_tile[e]) || (family_in_place != nullptr && (*family_in_place)[e])) {
        ++written_in_place;
        continue;
      }
      ++must_write;
      not_nan += std::isnan(load_io(contents[i].data.data(), e, specs_[i].type)) ? 0 : 1;
    }
  }
  // NOTE: a launch that writes only in place (a commit of cursors) has no poison to show that it
  // ran; its compare() does, where the reference differs from what those elements held.
  return {
      {"elements the launch must write (not in place) that hold no NaN before it",
       count_comparison(not_nan), 0.0},
      {"the launch must write some element",
       count_comparison(must_write + written_in_place == 0 ? 1 : 0), 0.0},
  };
}

RigResult LaunchRig::result() const {
  std::vector<GuardedBuffer::Contents> contents = download();
  // NOTE: moved, not copied: a pool can be hundreds of MiB.
  std::vector<std::vector<std::uint8_t>> device;
  for (std::size_t i = 0; i <= family_buffers_; ++i) device.push_back(std::move(contents[i].data));
  const auto after = [&](std::size_t i) -> const std::vector<std::uint8_t>& {
    return i <= family_buffers_ ? device[i] : contents[i].data;
  };
  RigResult result;
  result.checks = launch_->compare(plan_, device);
  result.canonical = launch_->canonical(plan_, device);

  const std::vector<std::vector<bool>> masks = launch_->written(plan_);
  const std::vector<bool> nothing;  // inputs: no element may change
  std::vector<std::string> names;
  std::vector<std::size_t> changed, guards;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    names.push_back(specs_[i].name);
    changed.push_back(changed_elements(images_[i], after(i), i < masks.size() ? masks[i] : nothing,
                                       io_size(specs_[i].type), specs_[i].name));
    guards.push_back(contents[i].guard_bytes_changed);
  }
  std::size_t changed_total = 0;
  std::size_t guards_total = 0;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    changed_total += changed[i];
    guards_total += guards[i];
  }
  result.checks.push_back(
      {with_counts("elements changed outside what the launch may write", names, changed),
       count_comparison(changed_total), 0.0});
  if (options_.guard_bytes > 0) {
    result.checks.push_back({with_counts("guard bytes changed around the buffers", names, guards),
                             count_comparison(guards_total), 0.0});
  }
  return result;
}

std::string LaunchRig::describe() const {
  const std::vector<std::string> modes = family_.launch_modes(spec());
  const std::size_t mode = static_cast<std::size_t>(options_.mode);
  std::string text = format_spec(spec()) +
                     " launch=" + (mode < modes.size() ? modes[mode] : std::to_string(mode)) +
                     " batch=" + std::to_string(sample_.batch) + " " + launch_->describe() +
                     (options_.padded ? " padded" : " dense") + " " + binder_->describe();
  if (padding_.tail > 0) text += " tail-padding=" + std::to_string(padding_.tail);
  if (padding_.middle) text += " middle-padding";
  if (options_.guard_bytes == 0) text += " no-guards";
  return text + " seed=" + std::to_string(seed_);
}

}  // namespace wyjit::test::conformance
