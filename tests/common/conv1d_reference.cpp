// SPDX-License-Identifier: Apache-2.0
#include "common/conv1d_reference.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>

namespace wyjit::test {

namespace {

void check_size(const std::vector<float>& vec, std::size_t expected, const char* name) {
  if (vec.size() != expected) {
    throw std::invalid_argument("conv1d_reference: " + std::string(name) + " has " +
                                std::to_string(vec.size()) + " elements, expected " +
                                std::to_string(expected));
  }
}

// Uniform and normal variates from raw 64-bit draws (no std:: distributions: their output
// differs between standard libraries).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  double uniform01() {  // (0, 1)
    return (static_cast<double>(gen_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }
  double normal() {  // Box-Muller
    return std::sqrt(-2.0 * std::log(uniform01())) * std::cos(2.0 * std::numbers::pi * uniform01());
  }

 private:
  std::mt19937_64 gen_;
};

// A value rounded to `t` that is not zero (so that a kernel reading zeros is never right).
template <typename Draw>
float nonzero(Draw draw, IoType t) {
  while (true) {
    const float v = round_to_io(static_cast<float>(draw()), t);
    if (v != 0.0f) return v;
  }
}

}  // namespace

double conv1d_silu(double v) { return v / (1.0 + std::exp(-v)); }

Conv1dReference conv1d_reference(const Conv1dProblem& p) {
  if (p.batch <= 0 || p.channels <= 0 || p.k <= 0 || p.width <= 1) {
    throw std::invalid_argument(
        "conv1d_reference: batch, channels, k must be positive and width at least 2");
  }
  const std::size_t B = std::size_t(p.batch), C = std::size_t(p.channels), K = std::size_t(p.k),
                    W = std::size_t(p.width), H = W - 1;
  check_size(p.x, B * K * C, "x");
  check_size(p.weight, C * W, "weight");
  if (p.bias) check_size(p.bias_values, C, "bias_values");
  check_size(p.state0, B * C * H, "state0");

  Conv1dReference r;
  r.y.resize(B * K * C);
  r.states.resize(B * K * C * H);
  r.window.resize(B * C * (H + K));
  std::vector<float> z(H + K);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t j = 0; j < H; ++j) z[j] = p.state0[(b * C + c) * H + j];
      for (std::size_t t = 0; t < K; ++t) z[H + t] = p.x[(b * K + t) * C + c];
      for (std::size_t t = 0; t < K; ++t) {
        double acc = p.bias ? double(p.bias_values[c]) : 0.0;
        for (std::size_t w = 0; w < W; ++w) acc += double(p.weight[c * W + w]) * double(z[t + w]);
        r.y[(b * K + t) * C + c] = p.silu ? conv1d_silu(acc) : acc;
        for (std::size_t j = 0; j < H; ++j) r.states[((b * K + t) * C + c) * H + j] = z[t + 1 + j];
      }
      for (std::size_t j = 0; j < H + K; ++j) r.window[(b * C + c) * (H + K) + j] = z[j];
    }
  }
  return r;
}

Conv1dProblem make_random_conv1d_problem(const Conv1dShape& s, IoType io, IoType weight,
                                         std::uint64_t seed) {
  Rng rng(seed);
  Conv1dProblem p;
  p.batch = s.batch;
  p.channels = s.channels;
  p.k = s.k;
  p.width = s.width;
  p.bias = s.bias;
  p.silu = s.silu;
  const std::size_t C = std::size_t(s.channels);
  const auto normal = [&rng] { return rng.normal(); };
  p.x.resize(std::size_t(s.batch) * s.k * C);
  for (float& v : p.x) v = nonzero(normal, io);
  p.weight.resize(C * s.width);
  for (float& v : p.weight) v = nonzero([&rng] { return rng.uniform(-0.6, 0.6); }, weight);
  p.bias_values.resize(C);
  for (float& v : p.bias_values) v = nonzero([&rng] { return rng.uniform(-0.5, 0.5); }, weight);
  p.state0.resize(std::size_t(s.batch) * C * (s.width - 1));
  for (float& v : p.state0) v = nonzero(normal, io);
  return p;
}

}  // namespace wyjit::test
