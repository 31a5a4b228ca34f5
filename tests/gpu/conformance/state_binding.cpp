// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/state_binding.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "gpu/support/host_tensor.hpp"

namespace wyjit::test::conformance {

namespace {

std::size_t round_up(std::size_t x, std::size_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// Gaps (elements) after S_b, after each intermediate tile and after each sequence's (or
// token's) intermediate tiles; prime, so that padded strides are not accidentally aligned.
constexpr std::size_t kGapState = 5;
constexpr std::size_t kGapTile = 3;
constexpr std::size_t kGapRun = 7;

}  // namespace

StateBinder::StateBinder(Addressing addressing, int batch, const TileShape& shape, bool padded,
                         bool token_major)
    : addressing_(addressing),
      batch_(batch),
      shape_(shape),
      padded_(padded),
      token_major_(token_major) {
  if (batch < 1 || shape.writes < 1 || shape.span == 0 || shape.stride_multiple == 0) {
    throw std::invalid_argument("StateBinder: batch " + std::to_string(batch) + ", writes " +
                                std::to_string(shape.writes) + ", span " +
                                std::to_string(shape.span));
  }
  const std::size_t m = shape.stride_multiple;
  const std::size_t span = shape.span;
  const std::size_t B = static_cast<std::size_t>(batch);
  const std::size_t inter_tiles = static_cast<std::size_t>(shape.writes - 1);
  const auto gap = [&](std::size_t g) { return padded ? g : 0; };
  switch (addressing) {
    case Addressing::strided: {
      const std::size_t sss = round_up(span + gap(kGapState), m);
      std::size_t iss = 0;
      std::size_t its = 0;
      if (token_major) {
        iss = round_up(span + gap(kGapTile), m);
        its = round_up(B * iss + gap(kGapRun), m);
      } else {
        its = round_up(span + gap(kGapTile), m);
        iss = round_up(inter_tiles * its + gap(kGapRun), m);
      }
      state_seq_stride_ = static_cast<std::int64_t>(sss);
      inter_base_ = B * sss;
      std::size_t end = 0;
      for (std::size_t b = 0; b < B; ++b) tile_at_.push_back(b * sss);
      if (inter_tiles > 0) {
        inter_seq_stride_ = static_cast<std::int64_t>(iss);
        inter_tok_stride_ = static_cast<std::int64_t>(its);
        for (std::size_t b = 0; b < B; ++b) {
          for (std::size_t t = 0; t < inter_tiles; ++t) {
            tile_at_.push_back(inter_base_ + b * iss + t * its);
          }
        }
      }
      for (const std::size_t at : tile_at_) end = std::max(end, at + span);
      pool_elems_ = round_up(end + gap(kGapState), m);
      break;
    }
    case Addressing::table:
    case Addressing::slot: {
      tile_stride_ = round_up(span + gap(kGapState), m);
      const std::size_t tiles = B * (inter_tiles + 2) + 1;  // = batch*(writes+1) + 1
      for (std::size_t i = 0; i < tiles; ++i) tile_at_.push_back(i * tile_stride_);
      pool_elems_ = tiles * tile_stride_;
      break;
    }
  }
}

std::vector<StateBinder::Array> StateBinder::arrays() const {
  if (addressing_ != Addressing::slot) return {};
  const std::size_t B = static_cast<std::size_t>(batch_);
  return {{"read_slot", B * sizeof(std::int32_t)},
          {"write_slot", B * static_cast<std::size_t>(shape_.writes + 1) * sizeof(std::int32_t)}};
}

void StateBinder::bind(StateRefs& refs, void* pool, const std::vector<void*>& arrays) {
  const std::size_t elem = io_size(shape_.type);
  refs = StateRefs{};
  switch (addressing_) {
    case Addressing::strided:
      refs.state = pool;
      refs.state_seq_stride = state_seq_stride_;
      if (shape_.writes > 1) {
        refs.inter = static_cast<std::uint8_t*>(pool) + inter_base_ * elem;
        refs.inter_seq_stride = inter_seq_stride_;
        refs.inter_tok_stride = inter_tok_stride_;
      }
      return;
    case Addressing::table:
      pool_ = pool;
      stager_.emplace(shape_.writes, batch_ + (padded_ ? 1 : 0));
      refs.tables = stager_->device_tables();
      refs.slab_stride = stager_->slab_stride();
      return;
    case Addressing::slot:
      refs.state = pool;
      refs.slot_stride = static_cast<std::int64_t>(tile_stride_);
      refs.num_slots = static_cast<std::int32_t>(tile_at_.size());
      refs.read_slot = static_cast<const std::int32_t*>(arrays.at(0));
      refs.write_slot = static_cast<const std::int32_t*>(arrays.at(1));
      refs.write_slot_stride = shape_.writes + 1;
      return;
  }
}

TilePlan StateBinder::plan(std::uint64_t seed, const Padding& padding,
                           std::vector<std::vector<std::uint8_t>>& images) {
  const int B = batch_;
  const int W = shape_.writes;
  TilePlan plan;
  plan.batch = B;
  plan.writes = W;
  plan.tile_at = tile_at_;
  plan.pool_elems = pool_elems_;
  plan.read.assign(static_cast<std::size_t>(B), -1);
  plan.write.assign(static_cast<std::size_t>(B) * static_cast<std::size_t>(W), -1);
  images.clear();

  if (addressing_ == Addressing::strided) {
    for (int b = 0; b < B; ++b) {
      plan.read[static_cast<std::size_t>(b)] = b;
      for (int t = 0; t < W; ++t) {
        plan.write[static_cast<std::size_t>(b * W + t)] = t == W - 1 ? b : B + b * (W - 1) + t;
      }
    }
    return plan;
  }

  // ---- table and slot: which sequences are padding, which write is skipped ----
  std::vector<bool> padded(static_cast<std::size_t>(B), false);
  const bool middle = padding.middle && B >= 3;
  if (middle) padded[1] = true;
  for (int b = std::max(0, B - padding.tail); b < B; ++b)
    padded[static_cast<std::size_t>(b)] = true;
  if (std::find(padded.begin(), padded.end(), false) == padded.end() || padding.tail < 0) {
    throw std::invalid_argument("StateBinder::plan: padding (tail " + std::to_string(padding.tail) +
                                ") leaves no sequence of " + std::to_string(B));
  }
  // NOTE: seq 0 is never padded by `middle`; `tail` may reach it only if it pads everything.
  const bool skip = middle && !padded[0] && (W > 1 || addressing_ == Addressing::slot);

  // A new shuffle of the pool every launch, so that no sequence's tiles are in order.
  std::vector<int> perm(tile_at_.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 17);
  std::shuffle(perm.begin(), perm.end(), rng);
  const auto P = [&](int i) { return perm[static_cast<std::size_t>(i)]; };
  const int slots = static_cast<int>(perm.size());

  if (addressing_ == Addressing::table) {
    const auto pointer = [&](int tile) -> void* {
      return static_cast<std::uint8_t*>(pool_) + plan.at(tile) * io_size(shape_.type);
    };
    staged_states_.assign(static_cast<std::size_t>(B), nullptr);
    staged_inter_.assign(static_cast<std::size_t>(W - 1),
                         std::vector<void*>(static_cast<std::size_t>(B), nullptr));
    for (int b = 0; b < B; ++b) {
      const bool pad = padded[static_cast<std::size_t>(b)];
      if (!pad) {
        plan.read[static_cast<std::size_t>(b)] = P(b);
        staged_states_[static_cast<std::size_t>(b)] = pointer(P(b));
        plan.write[static_cast<std::size_t>(b * W + W - 1)] = P(b);  // the last write over S_b
      }
      for (int t = 0; t + 1 < W; ++t) {
        const int tile = P(B + b * (W - 1) + t);
        const bool skipped = skip && b == 0 && t == 0;
        // A padded sequence's entries point at real tiles: a kernel using them would write there.
        staged_inter_[static_cast<std::size_t>(t)][static_cast<std::size_t>(b)] =
            skipped ? nullptr : pointer(tile);
        if (!pad && !skipped) plan.write[static_cast<std::size_t>(b * W + t)] = tile;
      }
    }
    staged_rows_.clear();
    for (const auto& row : staged_inter_) staged_rows_.push_back(row.data());
    // Tail padding is staged as a shorter batch: the stager nulls the rest of every slab.
    staged_count_ = B - std::max(0, padding.tail);
    return plan;
  }

  // ---- slot ----
  std::vector<std::int32_t> read_slot(static_cast<std::size_t>(B), -1);
  std::vector<std::int32_t> write_slot(static_cast<std::size_t>(B) *
                                       static_cast<std::size_t>(W + 1));
  const int spare = P(slots - 1);  // never assigned: what the padding column names
  for (int b = 0; b < B; ++b) {
    const bool pad = padded[static_cast<std::size_t>(b)];
    const bool in_tail = b >= B - padding.tail;
    if (pad) {
      // Both ways out of the pool: -1, and num_slots for the tail.
      read_slot[static_cast<std::size_t>(b)] = in_tail ? slots : -1;
    } else {
      read_slot[static_cast<std::size_t>(b)] = P(b);
      plan.read[static_cast<std::size_t>(b)] = P(b);
    }
    for (int t = 0; t < W; ++t) {
      const int tile = P(B + b * W + t);
      const bool skipped = skip && b == 0 && t == 0;
      write_slot[static_cast<std::size_t>(b * (W + 1) + t)] = skipped ? (W > 1 ? -1 : slots) : tile;
      if (!pad && !skipped) plan.write[static_cast<std::size_t>(b * W + t)] = tile;
    }
    write_slot[static_cast<std::size_t>(b * (W + 1) + W)] = spare;
  }
  images.push_back(as_bytes(read_slot));
  images.push_back(as_bytes(write_slot));
  return plan;
}

void StateBinder::stage(CUstream stream) {
  if (addressing_ != Addressing::table) return;
  stager_->stage(staged_states_.data(), shape_.writes > 1 ? staged_rows_.data() : nullptr,
                 staged_count_, stream);
}

std::string StateBinder::describe() const {
  std::string text = to_string(addressing_);
  if (addressing_ == Addressing::strided && shape_.writes > 1 && token_major_) {
    text += " (token-major)";
  }
  return text;
}

std::string break_state_refs(StateRefs& refs, Addressing addressing) {
  switch (addressing) {
    case Addressing::strided:
      refs.state = nullptr;
      return "args.states.state is null";
    case Addressing::table:
      refs.tables = nullptr;
      return "args.states.tables is null";
    case Addressing::slot:
      refs.read_slot = nullptr;
      return "args.states.read_slot is null";
  }
  return "";
}

}  // namespace wyjit::test::conformance
