// SPDX-License-Identifier: Apache-2.0
#include "common/gdn_reference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

namespace wyjit::test {
namespace {

void check_size(const std::vector<float>& vec, std::size_t expected, const char* name) {
  if (vec.size() != expected) {
    throw std::invalid_argument("gdn_reference: " + std::string(name) + " has " +
                                std::to_string(vec.size()) + " elements, expected " +
                                std::to_string(expected));
  }
}

void validate(const GdnProblem& p) {
  if (p.batch <= 0 || p.hk <= 0 || p.hv <= 0 || p.k <= 0 || p.dk <= 0 || p.dv <= 0) {
    throw std::invalid_argument("gdn_reference: batch, hk, hv, k, dk, dv must all be positive");
  }
  if (p.hv % p.hk != 0) {
    throw std::invalid_argument("gdn_reference: hv (" + std::to_string(p.hv) +
                                ") is not a multiple of hk (" + std::to_string(p.hk) + ")");
  }
  const std::size_t rows = std::size_t(p.batch) * std::size_t(p.k);
  check_size(p.q, rows * p.hk * p.dk, "q");
  check_size(p.k_in, rows * p.hk * p.dk, "k_in");
  check_size(p.v, rows * p.hv * p.dv, "v");
  if (p.fused_gating) {
    check_size(p.a, rows * p.hv, "a");
    check_size(p.b, rows * p.hv, "b");
    check_size(p.a_log, std::size_t(p.hv), "a_log");
    check_size(p.dt_bias, std::size_t(p.hv), "dt_bias");
  } else {
    check_size(p.g, rows * p.hv, "g");
    check_size(p.beta, rows * p.hv, "beta");
  }
  const std::size_t states = std::size_t(p.batch) * p.hv * p.dk * p.dv;
  if (p.state0_exact.empty()) {
    check_size(p.state0, states, "state0");
  } else if (p.state0_exact.size() != states) {
    throw std::invalid_argument("gdn_reference: state0_exact has " +
                                std::to_string(p.state0_exact.size()) + " elements, expected " +
                                std::to_string(states));
  }
}

/// Copies a row of floats into doubles, optionally L2-normalising it (eps 1e-6 inside the sqrt).
void load_row(const float* src, std::size_t n, bool l2norm, std::vector<double>& dst) {
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    dst[i] = static_cast<double>(src[i]);
    sum += dst[i] * dst[i];
  }
  if (l2norm) {
    const double inv = 1.0 / std::sqrt(sum + 1e-6);
    for (std::size_t i = 0; i < n; ++i) dst[i] *= inv;
  }
}

/// Random source with transforms that do not depend on the standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  /// Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  /// Standard normal by Box-Muller (one value per pair of draws; u1 in (0, 1]).
  double normal() {
    const double u1 = static_cast<double>((gen_() >> 11) + 1) * 0x1.0p-53;
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  /// Draws from `draw` until the value rounded to `io` is nonzero.
  template <class F>
  float nonzero(F&& draw, IoType io) {
    for (;;) {
      const float x = round_to_io(static_cast<float>(draw()), io);
      if (x != 0.0f) return x;
    }
  }

 private:
  std::mt19937_64 gen_;
};

/// Fills q or k rows [rows][heads][dim]: N(0,1), then unit-normalised or randomly scaled.
/// A row with an element that would round to zero in `io` is drawn again.
void fill_qk(Rng& rng, std::vector<float>& dst, std::size_t nrows, std::size_t dim, bool l2norm,
             IoType io) {
  dst.assign(nrows * dim, 0.0f);
  std::vector<double> row(dim);
  for (std::size_t r = 0; r < nrows; ++r) {
    bool ok = false;
    while (!ok) {
      double sum = 0;
      for (std::size_t i = 0; i < dim; ++i) {
        row[i] = rng.normal();
        sum += row[i] * row[i];
      }
      const double factor = l2norm ? rng.uniform(0.5, 3.0) : 1.0 / std::sqrt(sum);
      ok = sum > 0;
      for (std::size_t i = 0; i < dim && ok; ++i) {
        const float x = round_to_io(static_cast<float>(row[i] * factor), io);
        dst[r * dim + i] = x;
        ok = x != 0.0f;
      }
    }
  }
}

}  // namespace

double gdn_softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

double gdn_fused_g(double a, double a_log, double dt_bias) {
  return -std::exp(a_log) * gdn_softplus(a + dt_bias);
}

double gdn_fused_beta(double b) { return 1.0 / (1.0 + std::exp(-b)); }

namespace {

// The sequential recurrence for one (sequence, value head), writing its outputs and states.
void reference_head(const GdnProblem& p, std::size_t b, std::size_t vh, GdnReference& ref) {
  const std::size_t K = std::size_t(p.k), HK = std::size_t(p.hk), HV = std::size_t(p.hv),
                    DK = std::size_t(p.dk), DV = std::size_t(p.dv);
  const std::size_t kh = vh / (HV / HK);
  const std::size_t SS = DK * DV;  // elements of one state
  std::vector<double> S(SS);       // [dk][dv]
  std::vector<double> qd(DK), kd(DK), u(DV), acc(DV);
  if (p.state0_exact.empty()) {
    const float* s0 = p.state0.data() + (b * HV + vh) * SS;
    for (std::size_t e = 0; e < SS; ++e) S[e] = static_cast<double>(s0[e]);
  } else {
    const double* s0 = p.state0_exact.data() + (b * HV + vh) * SS;
    for (std::size_t e = 0; e < SS; ++e) S[e] = s0[e];
  }

  for (std::size_t t = 0; t < K; ++t) {
    const std::size_t row = b * K + t;
    load_row(p.q.data() + (row * HK + kh) * DK, DK, p.l2norm_qk, qd);
    load_row(p.k_in.data() + (row * HK + kh) * DK, DK, p.l2norm_qk, kd);
    const float* vt = p.v.data() + (row * HV + vh) * DV;
    const std::size_t gi = row * HV + vh;
    double g = 0, beta = 0;
    if (p.fused_gating) {
      g = gdn_fused_g(double(p.a[gi]), double(p.a_log[vh]), double(p.dt_bias[vh]));
      beta = gdn_fused_beta(double(p.b[gi]));
    } else {
      g = double(p.g[gi]);
      beta = double(p.beta[gi]);
    }

    // S <- exp(g) S
    const double decay = std::exp(g);
    for (double& s : S) s *= decay;
    // u = beta (v - S^T k)   (rows of S in the outer loop: contiguous inner loop)
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::size_t i = 0; i < DK; ++i)
      for (std::size_t j = 0; j < DV; ++j) acc[j] += S[i * DV + j] * kd[i];
    for (std::size_t j = 0; j < DV; ++j) u[j] = beta * (double(vt[j]) - acc[j]);
    std::copy(u.begin(), u.end(), ref.u.begin() + static_cast<std::ptrdiff_t>(gi * DV));
    ref.g[gi] = g;
    // S <- S + k u^T
    for (std::size_t i = 0; i < DK; ++i)
      for (std::size_t j = 0; j < DV; ++j) S[i * DV + j] += kd[i] * u[j];
    // o = S^T (scale q)
    double* o = ref.out.data() + (row * HV + vh) * DV;
    std::fill(o, o + DV, 0.0);
    for (std::size_t i = 0; i < DK; ++i) {
      const double sq = p.scale * qd[i];
      for (std::size_t j = 0; j < DV; ++j) o[j] += S[i * DV + j] * sq;
    }
    double* st = ref.states.data() + ((b * K + t) * HV + vh) * SS;
    for (std::size_t e = 0; e < SS; ++e) st[e] = S[e];
  }
}

}  // namespace

GdnReference gdn_reference(const GdnProblem& p) {
  validate(p);
  const std::size_t B = std::size_t(p.batch), K = std::size_t(p.k), HV = std::size_t(p.hv),
                    SS = std::size_t(p.dk) * std::size_t(p.dv);
  GdnReference ref;
  ref.out.assign(B * K * HV * std::size_t(p.dv), 0.0);
  ref.states.assign(B * K * HV * SS, 0.0);
  ref.u.assign(B * K * HV * std::size_t(p.dv), 0.0);
  ref.g.assign(B * K * HV, 0.0);
  const std::size_t key_elems = B * K * std::size_t(p.hk) * std::size_t(p.dk);
  ref.keys.assign(key_elems, 0.0);
  {
    std::vector<double> row(std::size_t(p.dk));
    for (std::size_t r = 0; r < key_elems; r += row.size()) {
      load_row(p.k_in.data() + r, row.size(), p.l2norm_qk, row);
      std::copy(row.begin(), row.end(), ref.keys.begin() + static_cast<std::ptrdiff_t>(r));
    }
  }
  // NOTE: heads are independent; spread them over the machine's cores (the GPU test machine
  // has 16), each head written by exactly one thread.
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t h = next++; h < B * HV; h = next++) reference_head(p, h / HV, h % HV, ref);
  };
  const std::size_t threads =
      std::min<std::size_t>(B * HV, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return ref;
}

GdnProblem make_random_problem(const GdnShape& shape, IoType io, std::uint64_t seed) {
  if (shape.batch <= 0 || shape.hk <= 0 || shape.hv <= 0 || shape.k <= 0 || shape.dk <= 0 ||
      shape.dv <= 0 || shape.hv % shape.hk != 0) {
    throw std::invalid_argument("make_random_problem: bad shape");
  }
  GdnProblem p;
  p.batch = shape.batch;
  p.hk = shape.hk;
  p.hv = shape.hv;
  p.k = shape.k;
  p.dk = shape.dk;
  p.dv = shape.dv;
  p.l2norm_qk = shape.l2norm_qk;
  p.fused_gating = shape.fused_gating;
  p.scale = static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape.dk))));

  const std::size_t rows = std::size_t(shape.batch) * std::size_t(shape.k);
  const std::size_t HV = std::size_t(shape.hv);
  Rng rng(seed);
  auto normal = [&rng] { return rng.normal(); };
  auto fill = [&rng](std::vector<float>& dst, std::size_t n, auto&& draw, IoType t) {
    dst.resize(n);
    for (float& x : dst) x = rng.nonzero(draw, t);
  };

  fill_qk(rng, p.q, rows * std::size_t(shape.hk), std::size_t(shape.dk), shape.l2norm_qk, io);
  fill_qk(rng, p.k_in, rows * std::size_t(shape.hk), std::size_t(shape.dk), shape.l2norm_qk, io);
  fill(p.v, rows * HV * std::size_t(shape.dv), normal, io);
  fill(
      p.g, rows * HV, [&rng] { return rng.uniform(-1.0, -0.01); }, IoType::f32);
  fill(
      p.beta, rows * HV, [&rng] { return rng.uniform(0.05, 0.95); }, IoType::f32);
  fill(p.a, rows * HV, normal, io);
  fill(p.b, rows * HV, normal, io);
  fill(
      p.a_log, HV, [&rng] { return rng.uniform(-1.0, 1.0); }, IoType::f32);
  fill(
      p.dt_bias, HV, [&rng] { return rng.uniform(-1.0, 1.0); }, IoType::f32);
  fill(
      p.state0, std::size_t(shape.batch) * HV * std::size_t(shape.dk) * std::size_t(shape.dv),
      [&rng] { return 0.5 * rng.normal(); }, IoType::f32);
  return p;
}

}  // namespace wyjit::test
