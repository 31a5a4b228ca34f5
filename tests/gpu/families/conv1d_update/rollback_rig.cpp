// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/conv1d_update/rollback_rig.hpp"

#include <algorithm>
#include <numeric>

#include "wyjit/conv1d_update.hpp"

namespace wyjit::test {

Conv1dGeometry make_conv1d_geometry(const Conv1dCase& c) {
  const Conv1dUpdateSpec& s = c.spec;
  const std::int64_t pad = c.padded ? 1 : 0;
  Conv1dGeometry g;
  g.batch = c.batch;
  g.channels = c.channels;
  g.K = s.k;
  g.H = s.width - 1;
  g.window = s.rollback == Rollback::window;
  g.writes = g.window ? 1 : g.K;
  g.written_cols = g.window ? g.H + g.K : g.H;
  // NOTE: padded x rows (and channel-contiguous tiles) keep a multiple of 4, the kernel's vector
  // path; padded y rows do not.
  g.x_stride = c.padded ? (c.channels + 4) / 4 * 4 : c.channels;
  g.y_stride = c.channels + 3 * pad;
  g.cols = g.written_cols + 2 * pad;  // room for columns the launch must not touch
  if (c.channels_contiguous) {
    g.channel_stride = 1;
    g.col_stride = c.padded ? (c.channels + 4) / 4 * 4 : c.channels;
    g.tile = static_cast<std::size_t>(g.cols * g.col_stride);
  } else {
    g.col_stride = 1;
    g.channel_stride = g.cols + pad;
    g.tile = static_cast<std::size_t>(c.channels * g.channel_stride);
  }
  const auto tile = static_cast<std::int64_t>(g.tile);
  if (s.addressing == Addressing::strided) {
    g.state_seq_stride = tile + 5 * pad;
    g.inter_tok_stride = tile + 3 * pad;
    g.inter_seq_stride = (g.K - 1) * g.inter_tok_stride + 7 * pad;
    const std::int64_t inter_base = c.batch * g.state_seq_stride;
    for (int b = 0; b < c.batch; ++b)
      g.at.push_back(static_cast<std::size_t>(b * g.state_seq_stride));
    if (!g.window) {
      for (int b = 0; b < c.batch; ++b) {
        for (int t = 0; t + 1 < g.K; ++t) {
          g.at.push_back(static_cast<std::size_t>(inter_base + b * g.inter_seq_stride +
                                                  t * g.inter_tok_stride));
        }
      }
    }
    g.image_elems =
        static_cast<std::size_t>(inter_base + (g.window ? 0 : c.batch * g.inter_seq_stride));
  } else {
    // A pool: K+1 tiles a sequence (intermediate) or 2 (window), tile_stride apart.
    const std::int64_t tile_stride = tile + 5 * pad;
    const int tiles = c.batch * (g.window ? 2 : g.K + 1);
    for (int i = 0; i < tiles; ++i) g.at.push_back(static_cast<std::size_t>(i * tile_stride));
    g.image_elems = static_cast<std::size_t>(tiles * tile_stride);
  }
  return g;
}

Conv1dCursor make_conv1d_cursor(const Conv1dCase& c, const Conv1dGeometry& g,
                                std::mt19937_64& rng) {
  const bool strided = c.spec.addressing == Addressing::strided;
  const int per_seq = strided ? g.writes : static_cast<int>(g.at.size()) / c.batch;
  std::vector<int> order(g.at.size());
  std::iota(order.begin(), order.end(), 0);
  if (!strided) {
    // A fixed shuffle of the pool, so that no sequence's tiles are in order.
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::swap(order[i], order[(i * 7 + 3) % order.size()]);
    }
  }
  Conv1dCursor cur;
  for (int b = 0; b < c.batch; ++b) {
    std::vector<int> tiles;
    if (strided) {
      tiles.push_back(b);  // S_b, then Hi_t(b)
      for (int t = 0; t + 1 < per_seq; ++t) tiles.push_back(c.batch + b * (g.K - 1) + t);
    } else {
      tiles.assign(order.begin() + b * per_seq, order.begin() + (b + 1) * per_seq);
    }
    cur.group.push_back(tiles);
    cur.current.push_back(tiles.front());
    const auto max_offset = static_cast<unsigned>(g.cols - g.H);
    cur.offset.push_back(g.window ? static_cast<int>(rng() % (max_offset + 1)) : 0);
  }
  return cur;
}

Conv1dPlan make_conv1d_plan(const Conv1dCase& c, const Conv1dGeometry& g, const Conv1dCursor& cur,
                            bool pad_sequences) {
  const int B = c.batch;
  const Addressing addressing = c.spec.addressing;
  Conv1dPlan plan;
  plan.read = cur.current;
  plan.offset = cur.offset;
  plan.write.assign(static_cast<std::size_t>(B * g.writes), -1);
  for (int b = 0; b < B; ++b) {
    std::vector<int> others;
    for (const int tile : cur.group[b]) {
      if (tile != cur.current[b]) others.push_back(tile);
    }
    int* w = plan.write.data() + b * g.writes;
    if (g.window) {
      w[0] = addressing == Addressing::slot ? others.front() : cur.current[b];
    } else if (addressing == Addressing::slot) {
      std::copy(others.begin(), others.begin() + g.K, w);
    } else {
      std::copy(others.begin(), others.begin() + (g.K - 1), w);
      w[g.K - 1] = cur.current[b];  // the final state goes over S_b
    }
  }
  if (pad_sequences) {
    if (addressing != Addressing::strided) {
      plan.read[1] = -1;
    } else if (g.window) {
      plan.offset[1] = -1;
    }
    if (g.window && addressing == Addressing::strided && B >= 5) {
      plan.offset[3] = static_cast<int>(g.cols) - g.H + 1;  // past the columns: padding
    }
    if (!g.window && g.K > 1 && addressing != Addressing::strided) plan.write[0] = -1;
    if (g.window && addressing == Addressing::slot) plan.write[0] = -1;
  }
  return plan;
}

bool padded_sequence(const Conv1dGeometry& g, const Conv1dPlan& plan, int b) {
  if (plan.read[b] < 0) return true;
  return g.window && (plan.offset[b] < 0 || plan.offset[b] > g.cols - g.H);
}

Conv1dRig::Conv1dRig(const Conv1dCase& c, const Conv1dGeometry& g, const Conv1dProblem& first)
    : c_(c),
      g_(g),
      io_(io_type(c.spec.io)),
      image_(io_, g.image_elems),
      x_(static_cast<std::size_t>(g.batch * g.K * g.x_stride) * io_size(io_)),
      y_(static_cast<std::size_t>(g.batch * g.K * g.y_stride) * io_size(io_)),
      weight_(first.weight.size() * io_size(io_type(c.spec.weight))),
      bias_(first.bias_values.size() * io_size(io_type(c.spec.weight))),
      state_(g.image_elems * io_size(io_)),
      tables_(sizeof(void*) * static_cast<std::size_t>(g.writes * (g.batch + 1))),
      read_slot_(sizeof(std::int32_t) * static_cast<std::size_t>(g.batch)),
      write_slot_(sizeof(std::int32_t) * static_cast<std::size_t>(g.batch * (g.writes + 1))),
      offsets_(sizeof(std::int32_t) * static_cast<std::size_t>(g.batch)) {
  weight_.upload(pack_io(first.weight, io_type(c.spec.weight)));
  bias_.upload(pack_io(first.bias_values, io_type(c.spec.weight)));
}

HostTensor Conv1dRig::launch(const Conv1dProblem& p, const Conv1dPlan& plan) {
  const int rows = g_.batch * g_.K;
  HostTensor x(io_, static_cast<std::size_t>(rows * g_.x_stride));
  for (int r = 0; r < rows; ++r) {
    for (int ch = 0; ch < g_.channels; ++ch) {
      x.set(static_cast<std::size_t>(r * g_.x_stride + ch),
            p.x[static_cast<std::size_t>(r) * g_.channels + ch]);
    }
  }
  x_.upload(x.bytes);
  HostTensor y(io_, static_cast<std::size_t>(rows * g_.y_stride));
  y_.upload(y.bytes);
  state_.upload(image_.bytes);

  Conv1dUpdateArgs a;
  a.batch = g_.batch;
  a.channels = g_.channels;
  a.k = g_.K;
  a.width = g_.H + 1;
  a.path = c_.path;
  a.x = x_.get();
  a.y = y_.get();
  a.x_stride = g_.x_stride;
  a.y_stride = g_.y_stride;
  a.weight = weight_.get();
  a.bias = c_.spec.bias ? bias_.get() : nullptr;
  a.state_cols = g_.cols;
  a.state_channel_stride = g_.channel_stride;
  a.state_col_stride = g_.col_stride;
  const std::size_t elem = io_size(io_);
  const auto tile_ptr = [&](int tile) -> void* {
    return tile < 0 ? nullptr
                    : reinterpret_cast<void*>(state_.address() +
                                              g_.at[static_cast<std::size_t>(tile)] * elem);
  };
  const std::vector<std::int32_t> read_slot(plan.read.begin(), plan.read.end());
  std::vector<std::int32_t> write_slot(static_cast<std::size_t>(g_.batch * (g_.writes + 1)), -5);
  switch (c_.spec.addressing) {
    case Addressing::strided:
      a.states.state = state_.get();
      a.states.state_seq_stride = g_.state_seq_stride;
      a.states.inter = g_.window || g_.K == 1 ? nullptr : tile_ptr(g_.batch);
      a.states.inter_seq_stride = g_.inter_seq_stride;
      a.states.inter_tok_stride = g_.inter_tok_stride;
      break;
    case Addressing::table: {
      a.states.slab_stride = g_.batch + 1;
      std::vector<void*> table(static_cast<std::size_t>(g_.writes * a.states.slab_stride), nullptr);
      for (int b = 0; b < g_.batch; ++b) {
        table[static_cast<std::size_t>(b)] = tile_ptr(plan.read[b]);
        for (int t = 0; t + 1 < g_.writes; ++t) {
          table[static_cast<std::size_t>((1 + t) * a.states.slab_stride + b)] =
              tile_ptr(plan.write[b * g_.writes + t]);
        }
      }
      tables_.upload(as_bytes(table));
      a.states.tables = static_cast<void* const*>(tables_.get());
      break;
    }
    case Addressing::slot:
      a.states.state = state_.get();
      a.states.slot_stride =
          static_cast<std::int64_t>(g_.at.size() > 1 ? g_.at[1] - g_.at[0] : g_.tile);
      a.states.num_slots = static_cast<std::int32_t>(g_.at.size());
      a.states.write_slot_stride = g_.writes + 1;
      for (int b = 0; b < g_.batch; ++b) {
        for (int t = 0; t < g_.writes; ++t) {
          const int tile = plan.write[b * g_.writes + t];
          // NOTE: a skipped window write uses a slot past the pool, which must count as -1.
          write_slot[static_cast<std::size_t>(b * a.states.write_slot_stride + t)] =
              tile >= 0 ? tile : (g_.window ? a.states.num_slots : -1);
        }
      }
      read_slot_.upload(as_bytes(read_slot));
      write_slot_.upload(as_bytes(write_slot));
      a.states.read_slot = static_cast<const std::int32_t*>(read_slot_.get());
      a.states.write_slot = static_cast<const std::int32_t*>(write_slot_.get());
      break;
  }
  if (g_.window) {
    const std::vector<std::int32_t> offsets(plan.offset.begin(), plan.offset.end());
    offsets_.upload(as_bytes(offsets));
    a.window_offset = static_cast<const std::int32_t*>(offsets_.get());
  }
  launch_conv1d_update(test_jit().kernel(c_.spec), a, nullptr);
  WYJIT_CU_CHECK(cuCtxSynchronize());
  image_.bytes = state_.download();
  y.bytes = y_.download();
  return y;
}

}  // namespace wyjit::test
