// SPDX-License-Identifier: Apache-2.0
#include "common/gdn_replay_reference.hpp"

#include <algorithm>
#include <cmath>

namespace wyjit::test {

bool replay_folds(const ReplayCursor& c, int K, int L) { return c.len + 2 * K > L; }

ReplayCursor replay_commit(const ReplayCursor& c, int accepted, int K, int L) {
  if (accepted < 0) return c;
  const int a = std::min(accepted, K);
  if (replay_folds(c, K, L)) return {(c.base + c.len) & (L - 1), a};
  return {c.base, c.len + a};
}

std::size_t ReplayLogLayout::floats() const {
  return std::size_t(L) *
         (std::size_t(hk) * std::size_t(dk) + std::size_t(hv) * std::size_t(dv) + std::size_t(hv));
}

std::size_t ReplayLogLayout::k(int pos, int head) const {
  return (std::size_t(pos) * std::size_t(hk) + std::size_t(head)) * std::size_t(dk);
}

std::size_t ReplayLogLayout::u(int pos, int vh) const {
  return std::size_t(L) * std::size_t(hk) * std::size_t(dk) +
         (std::size_t(pos) * std::size_t(hv) + std::size_t(vh)) * std::size_t(dv);
}

std::size_t ReplayLogLayout::g(int pos, int vh) const {
  return std::size_t(L) * (std::size_t(hk) * std::size_t(dk) + std::size_t(hv) * std::size_t(dv)) +
         std::size_t(pos) * std::size_t(hv) + std::size_t(vh);
}

double replay_g_cur(const float* tile, const ReplayLogLayout& log, const ReplayCursor& c, int vh) {
  return c.len > 0 ? double(tile[log.g(log.position(c, c.len - 1), vh)]) : 0.0;
}

std::vector<double> replay_current_state(const double* s0, const float* tile,
                                         const ReplayLogLayout& log, const ReplayCursor& c) {
  const std::size_t DK = std::size_t(log.dk), DV = std::size_t(log.dv);
  const std::size_t SS = DK * DV;
  const int group = log.hv / log.hk;
  std::vector<double> s(s0, s0 + std::size_t(log.hv) * SS);
  for (int vh = 0; vh < log.hv; ++vh) {
    double* head = s.data() + std::size_t(vh) * SS;
    const double g_cur = replay_g_cur(tile, log, c, vh);
    const double decay = std::exp(g_cur);
    for (std::size_t e = 0; e < SS; ++e) head[e] *= decay;
    for (int j = 0; j < c.len; ++j) {
      const int pos = log.position(c, j);
      // NOTE: the exponent of a difference, as the kernels take it: G falls without bound.
      const double w = std::exp(g_cur - double(tile[log.g(pos, vh)]));
      const float* k = tile + log.k(pos, vh / group);
      const float* u = tile + log.u(pos, vh);
      for (std::size_t i = 0; i < DK; ++i) {
        const double wk = w * double(k[i]);
        for (std::size_t jj = 0; jj < DV; ++jj) head[i * DV + jj] += wk * double(u[jj]);
      }
    }
  }
  return s;
}

}  // namespace wyjit::test
