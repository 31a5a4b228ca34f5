// SPDX-License-Identifier: Apache-2.0
// CPU tests of the GPU-test support code: the sequential GDN reference, the random problem
// generator and the comparison helper (half conversions: test_half_types.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "common/compare.hpp"
#include "common/gdn_reference.hpp"
#include "common/half_types.hpp"

using namespace wyjit::test;

namespace {

/// Appends src[off, off+n) to dst.
template <class T>
void append(std::vector<T>& dst, const std::vector<T>& src, std::size_t off, std::size_t n) {
  const auto first = src.begin() + static_cast<std::ptrdiff_t>(off);
  dst.insert(dst.end(), first, first + static_cast<std::ptrdiff_t>(n));
}

/// Tokens [t0, t0+n) of every sequence of `p`, as a problem with K = n (state0 unchanged).
GdnProblem slice_tokens(const GdnProblem& p, int t0, int n) {
  GdnProblem s = p;
  s.k = n;
  auto slice = [&](const std::vector<float>& src, std::size_t per_row) {
    std::vector<float> dst;
    for (int b = 0; b < p.batch; ++b)
      append(dst, src, std::size_t(b * p.k + t0) * per_row, n * per_row);
    return dst;
  };
  const std::size_t qk_row = std::size_t(p.hk) * p.dk, v_row = std::size_t(p.hv) * p.dv;
  s.q = slice(p.q, qk_row);
  s.k_in = slice(p.k_in, qk_row);
  s.v = slice(p.v, v_row);
  s.g = slice(p.g, std::size_t(p.hv));
  s.beta = slice(p.beta, std::size_t(p.hv));
  s.a = slice(p.a, std::size_t(p.hv));
  s.b = slice(p.b, std::size_t(p.hv));
  return s;
}

/// Final states [batch][HV][dk][dv] of a reference run.
std::vector<double> final_states(const GdnProblem& p, const GdnReference& r) {
  const std::size_t per_seq = std::size_t(p.hv) * p.dk * p.dv;
  std::vector<double> out;
  for (int b = 0; b < p.batch; ++b)
    append(out, r.states, (std::size_t(b) * p.k + std::size_t(p.k - 1)) * per_seq, per_seq);
  return out;
}

/// The same rounded to fp32: what a next launch would read as its state0.
std::vector<float> final_states_f32(const GdnProblem& p, const GdnReference& r) {
  std::vector<float> out;
  for (double x : final_states(p, r)) out.push_back(static_cast<float>(x));
  return out;
}

/// State after token t of sequence b, head vh: [dk][dv] (t = -1 gives state0).
std::vector<double> state_at(const GdnProblem& p, const GdnReference& r, int b, int t, int vh) {
  const std::size_t ss = std::size_t(p.dk) * p.dv;
  std::vector<double> s(ss);
  for (std::size_t e = 0; e < ss; ++e) {
    s[e] = t < 0 ? double(p.state0[(std::size_t(b) * p.hv + vh) * ss + e])
                 : r.states[((std::size_t(b) * p.k + t) * p.hv + vh) * ss + e];
  }
  return s;
}

/// Row of q or k as double, L2-normalised exactly like the reference when `l2norm`.
std::vector<double> qk_row(const std::vector<float>& src, const GdnProblem& p, int b, int t, int kh,
                           bool l2norm) {
  std::vector<double> x(std::size_t(p.dk));
  double sum = 0;
  for (int i = 0; i < p.dk; ++i) {
    x[i] = double(src[((std::size_t(b) * p.k + t) * p.hk + kh) * p.dk + i]);
    sum += x[i] * x[i];
  }
  if (l2norm)
    for (double& e : x) e *= 1.0 / std::sqrt(sum + 1e-6);
  return x;
}

}  // namespace

TEST_CASE("reference matches a hand-computed two-token case", "[reference]") {
  GdnProblem p;
  p.k = 2;
  p.dk = p.dv = 2;
  p.scale = 0.5;
  p.state0 = {1, 2, 3, 4};  // S[i][j], i over dk
  p.q = {1, 1, 2, -1};
  p.k_in = {1, 0, 0.5f, 0.5f};
  p.v = {1, 1, 2, -1};
  p.g = {std::log(0.5f), 0.0f};
  p.beta = {0.5f, 1.0f};
  // Token 0: S = 0.5*S0 = [[.5,1],[1.5,2]]; S^T k = [.5,1]; u = .5*([1,1]-[.5,1]) = [.25,0];
  //          S = [[.75,1],[1.5,2]]; o = S^T (.5*[1,1]) = [1.125, 1.5].
  // Token 1: S^T k = .5*([.75,1]+[1.5,2]) = [1.125,1.5]; u = [2,-1]-[1.125,1.5] = [.875,-2.5];
  //          S += .5*[[.875,-2.5],[.875,-2.5]] = [[1.1875,-.25],[1.9375,.75]];
  //          o = S^T (.5*[2,-1]) = [1.1875-.96875, -.25-.375] = [.21875, -.625].
  const GdnReference r = gdn_reference(p);
  const std::vector<double> out{1.125, 1.5, 0.21875, -0.625};
  const std::vector<double> states{0.75, 1, 1.5, 2, 1.1875, -0.25, 1.9375, 0.75};
  REQUIRE(r.out.size() == out.size());
  REQUIRE(r.states.size() == states.size());
  // exp(float(log 0.5)) differs from 0.5 by ~1e-8 relative.
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(r.out[i] == Approx(out[i]).epsilon(1e-7));
  for (std::size_t i = 0; i < states.size(); ++i)
    CHECK(r.states[i] == Approx(states[i]).epsilon(1e-7));
}

TEST_CASE("reference with K=1 is one closed-form update", "[reference]") {
  const GdnProblem p = make_random_problem({2, 2, 2, 1, 5, 3}, IoType::f32, 11);
  const GdnReference r = gdn_reference(p);
  for (int b = 0; b < p.batch; ++b) {
    for (int vh = 0; vh < p.hv; ++vh) {
      const auto s0 = state_at(p, r, b, -1, vh), s1 = state_at(p, r, b, 0, vh);
      const auto q = qk_row(p.q, p, b, 0, vh, false), k = qk_row(p.k_in, p, b, 0, vh, false);
      const std::size_t gi = std::size_t(b) * p.hv + vh;
      const double d = std::exp(double(p.g[gi])), beta = double(p.beta[gi]);
      for (int j = 0; j < p.dv; ++j) {
        double sk = 0;
        for (int i = 0; i < p.dk; ++i) sk += s0[i * p.dv + j] * k[i];
        const double u = beta * (double(p.v[gi * p.dv + j]) - d * sk);
        double o = 0;
        for (int i = 0; i < p.dk; ++i) {
          const double s = d * s0[i * p.dv + j] + k[i] * u;
          CHECK(s1[i * p.dv + j] == Approx(s).epsilon(1e-12));
          o += s * p.scale * q[i];
        }
        CHECK(r.out[gi * p.dv + j] == Approx(o).epsilon(1e-12).margin(1e-14));
      }
    }
  }
}

TEST_CASE("reference composes over split token ranges", "[reference]") {
  const bool l2 = GENERATE(false, true);
  const bool fused = GENERATE(false, true);
  const GdnProblem p = make_random_problem({2, 1, 2, 5, 8, 6, l2, fused}, IoType::bf16, 21);
  const GdnReference full = gdn_reference(p);

  const GdnProblem first = slice_tokens(p, 0, 3);
  const GdnReference r1 = gdn_reference(first);
  GdnProblem second = slice_tokens(p, 3, 2);
  second.state0 = final_states_f32(first, r1);  // fp32 hand-off, as on the GPU
  const GdnReference r2 = gdn_reference(second);

  const Comparison c = compare(final_states(p, full), final_states(second, r2));
  INFO(c.describe("final state, split 3+2 vs 5"));
  CHECK(c.passed(1e-6));
  // Outputs of tokens 3, 4 of every sequence agree too.
  std::vector<double> tail;
  const std::size_t row = std::size_t(p.hv) * p.dv;
  for (int b = 0; b < p.batch; ++b) append(tail, full.out, (std::size_t(b) * 5 + 3) * row, 2 * row);
  const Comparison co = compare(tail, r2.out);
  INFO(co.describe("outputs of tokens 3..4"));
  CHECK(co.passed(1e-6));
}

TEST_CASE("reference output is S_t^T (scale q_t) of the returned states", "[reference]") {
  const bool l2 = GENERATE(false, true);
  const GdnProblem p = make_random_problem({2, 2, 4, 4, 6, 5, l2, false}, IoType::f16, 5);
  const GdnReference r = gdn_reference(p);
  std::vector<double> expect(r.out.size());
  for (int b = 0; b < p.batch; ++b)
    for (int t = 0; t < p.k; ++t)
      for (int vh = 0; vh < p.hv; ++vh) {
        const auto s = state_at(p, r, b, t, vh);
        const auto q = qk_row(p.q, p, b, t, vh / (p.hv / p.hk), l2);
        for (int j = 0; j < p.dv; ++j) {
          double o = 0;
          for (int i = 0; i < p.dk; ++i) o += s[i * p.dv + j] * (p.scale * q[i]);
          expect[((std::size_t(b) * p.k + t) * p.hv + vh) * p.dv + j] = o;
        }
      }
  const Comparison c = compare(expect, r.out);
  INFO(c.describe("out vs states"));
  CHECK(c.passed(1e-13));
}

TEST_CASE("GVA: value head vh reads key head vh / (HV/HK)", "[reference]") {
  const GdnProblem p = make_random_problem({1, 2, 4, 3, 4, 3}, IoType::f32, 9);
  // Key heads 0 and 1 differ (random), so a wrong mapping changes the result.
  REQUIRE(p.k_in[0] != p.k_in[std::size_t(p.dk)]);
  const GdnReference r = gdn_reference(p);
  auto single_head = [&](int vh, int kh) {
    GdnProblem s = p;
    s.hk = s.hv = 1;
    s.q = s.k_in = s.v = s.g = s.beta = std::vector<float>{};
    for (int t = 0; t < p.k; ++t) {
      const std::size_t qo = (std::size_t(t) * p.hk + kh) * p.dk;
      const std::size_t vo = (std::size_t(t) * p.hv + vh) * p.dv;
      append(s.q, p.q, qo, std::size_t(p.dk));
      append(s.k_in, p.k_in, qo, std::size_t(p.dk));
      append(s.v, p.v, vo, std::size_t(p.dv));
      append(s.g, p.g, std::size_t(t) * p.hv + vh, 1);
      append(s.beta, p.beta, std::size_t(t) * p.hv + vh, 1);
    }
    const std::size_t ss = std::size_t(p.dk) * p.dv;
    s.state0 = std::vector<float>{};
    append(s.state0, p.state0, std::size_t(vh) * ss, ss);
    return gdn_reference(s).out;  // [K][1][dv]
  };
  auto head_out = [&](int vh) {
    std::vector<double> o;
    for (int t = 0; t < p.k; ++t)
      for (int j = 0; j < p.dv; ++j) o.push_back(r.out[(std::size_t(t) * p.hv + vh) * p.dv + j]);
    return o;
  };
  for (int vh = 0; vh < 4; ++vh) CHECK(head_out(vh) == single_head(vh, vh / 2));
  CHECK(head_out(3) == single_head(3, 1));
  CHECK(head_out(3) != single_head(3, 0));
  CHECK(head_out(1) != single_head(1, 1));
}

TEST_CASE("fused gating equals precomputed g and beta", "[reference]") {
  CHECK(gdn_softplus(25.0) == 25.0);
  CHECK(gdn_softplus(0.0) == Approx(std::log(2.0)));
  CHECK(gdn_fused_beta(0.0) == 0.5);
  GdnProblem p = make_random_problem({2, 1, 3, 4, 6, 5, false, true}, IoType::bf16, 3);
  p.a[0] = 30.0f;  // exercises the softplus(x) = x branch
  GdnProblem pre = p;
  pre.fused_gating = false;
  for (std::size_t i = 0; i < p.a.size(); ++i) {
    const std::size_t vh = i % std::size_t(p.hv);
    pre.g[i] = static_cast<float>(gdn_fused_g(p.a[i], p.a_log[vh], p.dt_bias[vh]));
    pre.beta[i] = static_cast<float>(gdn_fused_beta(p.b[i]));
  }
  CHECK(pre.g[0] == Approx(-std::exp(double(p.a_log[0])) * (30.0 + double(p.dt_bias[0]))));
  const GdnReference rf = gdn_reference(p), rp = gdn_reference(pre);
  const Comparison c = compare(rp.out, rf.out), cs = compare(rp.states, rf.states);
  INFO(c.describe("fused vs precomputed out") << "\n" << cs.describe("states"));
  CHECK(c.passed(1e-6));
  CHECK(cs.passed(1e-6));
  // And the fused problem does not silently read g/beta.
  GdnProblem other = p;
  for (float& x : other.g) x = -5.0f;
  CHECK(gdn_reference(other).out == rf.out);
}

TEST_CASE("l2norm_qk equals pre-normalised input", "[reference]") {
  const GdnProblem p = make_random_problem({2, 2, 2, 3, 7, 4, true, false}, IoType::f32, 17);
  GdnProblem pre = p;
  pre.l2norm_qk = false;
  const std::size_t dk = std::size_t(p.dk);
  for (auto* vec : {&pre.q, &pre.k_in}) {
    for (std::size_t r0 = 0; r0 < vec->size(); r0 += dk) {
      double sum = 0;
      for (std::size_t i = 0; i < dk; ++i) sum += double((*vec)[r0 + i]) * double((*vec)[r0 + i]);
      for (std::size_t i = 0; i < dk; ++i)
        (*vec)[r0 + i] = static_cast<float>(double((*vec)[r0 + i]) / std::sqrt(sum + 1e-6));
    }
  }
  const GdnReference rn = gdn_reference(p), rp = gdn_reference(pre);
  const Comparison c = compare(rp.out, rn.out), cs = compare(rp.states, rn.states);
  INFO(c.describe("l2norm vs pre-normalised") << "\n" << cs.describe("states"));
  CHECK(c.passed(1e-6));
  CHECK(cs.passed(1e-6));
  GdnProblem raw = p;  // the flag matters: unnormalised rows give different outputs
  raw.l2norm_qk = false;
  CHECK_FALSE(compare(rn.out, gdn_reference(raw).out).passed(1e-3));
}

TEST_CASE("random problems are deterministic, nonzero, in range and io-exact", "[reference]") {
  const IoType io = GENERATE(IoType::f32, IoType::f16, IoType::bf16);
  const bool l2 = GENERATE(false, true);
  const GdnShape shape{2, 2, 4, 3, 16, 8, l2, true};
  const GdnProblem p = make_random_problem(shape, io, 1234);
  const GdnProblem again = make_random_problem(shape, io, 1234);
  CHECK(p.q == again.q);
  CHECK(p.state0 == again.state0);
  CHECK(p.v != make_random_problem(shape, io, 1235).v);
  CHECK(p.scale == double(static_cast<float>(1.0 / std::sqrt(16.0))));
  REQUIRE(p.q.size() == 2u * 3 * 2 * 16);
  REQUIRE(p.v.size() == 2u * 3 * 4 * 8);
  REQUIRE(p.state0.size() == 2u * 4 * 16 * 8);
  for (const auto* vec : {&p.q, &p.k_in, &p.v, &p.a, &p.b})
    for (float x : *vec) {
      REQUIRE(x != 0.0f);
      REQUIRE(round_to_io(x, io) == x);
    }
  for (const auto* vec : {&p.g, &p.beta, &p.a_log, &p.dt_bias, &p.state0})
    for (float x : *vec) REQUIRE(x != 0.0f);
  for (float x : p.g) REQUIRE((x >= -1.0f && x <= -0.01f));
  for (float x : p.beta) REQUIRE((x >= 0.05f && x <= 0.95f));
  for (float x : p.a_log) REQUIRE((x >= -1.0f && x <= 1.0f));
  for (std::size_t r0 = 0; r0 < p.k_in.size(); r0 += 16) {
    double sum = 0;
    for (std::size_t i = 0; i < 16; ++i) sum += double(p.k_in[r0 + i]) * double(p.k_in[r0 + i]);
    if (l2) {
      CHECK(std::sqrt(sum) > 0.1);
    } else {
      CHECK(std::sqrt(sum) == Approx(1.0).epsilon(io == IoType::f32 ? 1e-6 : 1e-2));
    }
  }
}

TEST_CASE("compare reports errors, non-finite values and the worst index", "[reference]") {
  const std::vector<double> ref{1.0, -4.0, 2.0};
  const Comparison same = compare(ref, ref);
  CHECK(same.passed(0.0));
  CHECK(same.count == 3);
  const std::vector<double> off{1.0, -4.0, 2.1};
  const Comparison c = compare(ref, off);
  CHECK(c.worst_index == 2);
  CHECK(c.max_abs_ref == 4.0);
  CHECK(c.max_abs_err == Approx(0.1));
  CHECK(c.rel_err == Approx(0.025));
  CHECK(c.passed(0.03));
  CHECK_FALSE(c.passed(0.02));
  CHECK(c.describe("out").find("worst[2]") != std::string::npos);
  const std::vector<float> bad{1.0f, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity()};
  const Comparison n = compare(ref, bad);
  CHECK(n.nan_count == 2);
  CHECK(n.worst_index == 1);
  CHECK_FALSE(n.passed(1e30));
  CHECK(n.describe("out").find("nan=2") != std::string::npos);
  CHECK(compare(std::vector<double>{}, std::vector<double>{}).passed(0.0));
  CHECK_THROWS_AS(compare(ref, std::vector<double>{1.0}), std::invalid_argument);
}

TEST_CASE("compare with NonFinite::match: non-finite exactly where the reference is",
          "[reference]") {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  ComparisonAccumulator m(NonFinite::match);
  m.add(1.0, 1.0);
  m.add(nan, inf);
  m.add(-inf, nan);
  m.add(2.0, 2.5);
  const Comparison ok = m.finish();
  CHECK(ok.count == 4);
  CHECK(ok.nonfinite == 2);
  CHECK(ok.nan_count == 0);
  CHECK(ok.rel_err == Approx(0.25));
  CHECK(ok.passed(0.25));
  CHECK(ok.describe("out").find("nonfinite=2") != std::string::npos);
  m.add(3.0, nan);
  m.add(inf, 4.0);
  const Comparison bad = m.finish();
  CHECK(bad.nan_count == 2);
  CHECK(bad.worst_index == 4);
  CHECK_FALSE(bad.passed(1e30));
  // The default rule fails on any non-finite value, matched or not.
  ComparisonAccumulator f;
  f.add(nan, nan);
  CHECK(f.finish().nan_count == 1);
  CHECK(f.finish().describe("out").find("nonfinite") == std::string::npos);
}

TEST_CASE("reference rejects inconsistent problems", "[reference]") {
  GdnProblem p = make_random_problem({1, 1, 2, 2, 4, 4}, IoType::f32, 1);
  GdnProblem bad_heads = p;
  bad_heads.hk = 3;
  CHECK_THROWS_AS(gdn_reference(bad_heads), std::invalid_argument);
  GdnProblem short_v = p;
  short_v.v.pop_back();
  CHECK_THROWS_AS(gdn_reference(short_v), std::invalid_argument);
  GdnProblem no_g = p;
  no_g.g.clear();
  CHECK_THROWS_AS(gdn_reference(no_g), std::invalid_argument);
  no_g.fused_gating = true;  // g is not needed then
  CHECK_NOTHROW(gdn_reference(no_g));
}
