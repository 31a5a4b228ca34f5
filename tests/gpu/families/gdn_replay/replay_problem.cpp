// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/gdn_replay/replay_problem.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "gpu/support/host_tensor.hpp"

namespace wyjit::test::conformance {

namespace {

// Draws that do not depend on the standard library's distributions, so that a seed names the
// same problem on every machine.
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(gen_() >> 11) * 0x1.0p-53;
  }
  double normal() {
    const double u1 = static_cast<double>((gen_() >> 11) + 1) * 0x1.0p-53;
    const double u2 = uniform(0.0, 1.0);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  int below(int n) { return static_cast<int>(gen_() % static_cast<std::uint64_t>(n)); }

 private:
  std::mt19937_64 gen_;
};

}  // namespace

std::vector<ReplayCursor> random_cursors(int batch, int K, int L, std::uint64_t seed) {
  Draws draws(seed * 0x94d049bb133111ebull + 11);
  std::vector<ReplayCursor> cursors(static_cast<std::size_t>(batch));
  for (int b = 0; b < batch; ++b) {
    // A verify folds iff len > L - 2K; the contract keeps len <= L - K, so that its K new
    // entries never land on live ones.
    const bool fold = (static_cast<std::uint64_t>(b) + seed) % 2 == 0;
    const int lo = fold ? L - 2 * K + 1 : 0;
    const int hi = fold ? L - K : L - 2 * K;
    ReplayCursor& c = cursors[static_cast<std::size_t>(b)];
    c.len = lo + draws.below(hi - lo + 1);
    // At the end of the ring, the live entries and the new ones wrap past position L-1.
    c.base = b % 3 == 1 ? L - 1 - draws.below(2) : draws.below(L);
  }
  return cursors;
}

ReplayProblem make_replay_problem(const GdnReplaySpec& spec, const ReplaySizes& sizes,
                                  std::uint64_t seed) {
  ReplayProblem p;
  const IoType st = io_type(spec.state);
  p.tokens = make_random_problem(GdnShape{sizes.batch, sizes.hk, sizes.hv, spec.k, spec.dk, spec.dv,
                                          spec.l2norm_qk, spec.fused_gating},
                                 io_type(spec.io), seed);
  for (float& x : p.tokens.state0) x = round_to_io(x, st);  // the kernels read the stored type
  p.log = ReplayLogLayout{spec.log, sizes.hk, sizes.hv, spec.dk, spec.dv};
  p.cursors = random_cursors(sizes.batch, spec.k, spec.log, seed);

  // ---- the live log: unit k rows, N(0,1) u strips, G falling from the checkpoint ----
  Draws draws(seed * 0xbf58476d1ce4e5b9ull + 3);
  const std::size_t SS = std::size_t(spec.dk) * std::size_t(spec.dv);
  const std::size_t tile = std::size_t(sizes.hv) * SS;
  for (int b = 0; b < sizes.batch; ++b) {
    const ReplayCursor& c = p.cursors[static_cast<std::size_t>(b)];
    // NOTE: NaN where no live entry is: a read of a dead entry shows in every output.
    std::vector<float> log(p.log.floats(), std::numeric_limits<float>::quiet_NaN());
    std::vector<double> g(static_cast<std::size_t>(sizes.hv), 0.0);
    for (int j = 0; j < c.len; ++j) {
      const int pos = p.log.position(c, j);
      for (int h = 0; h < sizes.hk; ++h) {
        std::vector<double> row(static_cast<std::size_t>(spec.dk));
        double sum = 0.0;
        for (double& x : row) {
          x = draws.normal();
          sum += x * x;
        }
        for (int i = 0; i < spec.dk; ++i) {
          log[p.log.k(pos, h) + std::size_t(i)] =
              static_cast<float>(row[std::size_t(i)] / std::sqrt(sum));
        }
      }
      for (int vh = 0; vh < sizes.hv; ++vh) {
        for (int jj = 0; jj < spec.dv; ++jj) {
          log[p.log.u(pos, vh) + std::size_t(jj)] = static_cast<float>(draws.normal());
        }
        g[std::size_t(vh)] -= draws.uniform(0.01, 0.3);
        log[p.log.g(pos, vh)] = static_cast<float>(g[std::size_t(vh)]);
      }
    }
    const std::vector<double> s0(
        p.tokens.state0.begin() + static_cast<std::ptrdiff_t>(b * tile),
        p.tokens.state0.begin() + static_cast<std::ptrdiff_t>((b + 1) * tile));
    const std::vector<double> current = replay_current_state(s0.data(), log.data(), p.log, c);
    p.current.insert(p.current.end(), current.begin(), current.end());
    p.logs.push_back(std::move(log));
  }
  return p;
}

GdnReference replay_verify_reference(const ReplayProblem& p) {
  GdnProblem tokens = p.tokens;
  tokens.state0_exact = p.current;
  return gdn_reference(tokens);
}

double replay_logged_g(const ReplayProblem& p, const GdnReference& ref, int b, int t, int vh,
                       bool fold) {
  const int K = p.tokens.k, HV = p.tokens.hv;
  double g = fold ? 0.0
                  : replay_g_cur(p.logs[static_cast<std::size_t>(b)].data(), p.log,
                                 p.cursors[static_cast<std::size_t>(b)], vh);
  for (int s = 0; s <= t; ++s)
    g += ref.g[std::size_t(b * K + s) * std::size_t(HV) + std::size_t(vh)];
  return g;
}

std::size_t state_offset(Layout layout, int dk, int dv, int i, int j) {
  return layout == Layout::vk ? std::size_t(j) * std::size_t(dk) + std::size_t(i)
                              : std::size_t(i) * std::size_t(dv) + std::size_t(j);
}

namespace {

template <class T>
std::vector<float> tile_of(const std::vector<T>& states, int b, int hv, int dk, int dv,
                           Layout layout) {
  const std::size_t SS = std::size_t(dk) * std::size_t(dv);
  std::vector<float> tile(std::size_t(hv) * SS);
  for (int h = 0; h < hv; ++h) {
    const T* head = states.data() + (std::size_t(b) * std::size_t(hv) + std::size_t(h)) * SS;
    for (int i = 0; i < dk; ++i) {
      for (int j = 0; j < dv; ++j) {
        tile[std::size_t(h) * SS + state_offset(layout, dk, dv, i, j)] =
            static_cast<float>(head[std::size_t(i) * std::size_t(dv) + std::size_t(j)]);
      }
    }
  }
  return tile;
}

}  // namespace

std::vector<float> state_tile(const std::vector<float>& states, int b, int hv, int dk, int dv,
                              Layout layout) {
  return tile_of(states, b, hv, dk, dv, layout);
}

std::vector<float> state_tile(const std::vector<double>& states, int b, int hv, int dk, int dv,
                              Layout layout) {
  return tile_of(states, b, hv, dk, dv, layout);
}

void compare_state_tile(ComparisonAccumulator& cmp, const std::vector<double>& want, int b,
                        const std::uint8_t* pool, std::size_t at, IoType type, int hv, int dk,
                        int dv, Layout layout) {
  const std::size_t SS = std::size_t(dk) * std::size_t(dv);
  for (int h = 0; h < hv; ++h) {
    const double* head = want.data() + (std::size_t(b) * std::size_t(hv) + std::size_t(h)) * SS;
    for (int i = 0; i < dk; ++i) {
      for (int j = 0; j < dv; ++j) {
        cmp.add(head[std::size_t(i) * std::size_t(dv) + std::size_t(j)],
                load_io(pool, at + std::size_t(h) * SS + state_offset(layout, dk, dv, i, j), type));
      }
    }
  }
}

std::vector<std::uint8_t> cursor_image(const std::vector<ReplayCursor>& cursors,
                                       std::int64_t stride) {
  // NOTE: the gap holds a value no cursor takes, which must survive every launch.
  std::vector<std::int32_t> image(cursors.size() * static_cast<std::size_t>(stride), -7777);
  for (std::size_t b = 0; b < cursors.size(); ++b) {
    image[b * static_cast<std::size_t>(stride)] = cursors[b].base;
    image[b * static_cast<std::size_t>(stride) + 1] = cursors[b].len;
  }
  return as_bytes(image);
}

double replay_out_tolerance(const GdnReplaySpec& spec) {
  return spec.io == DType::f32 ? 1e-4 : 1e-2;
}

double replay_state_tolerance(const GdnReplaySpec& spec) {
  switch (spec.state) {
    case DType::f32:
      return 1e-4;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
  }
  return 0.0;
}

}  // namespace wyjit::test::conformance
