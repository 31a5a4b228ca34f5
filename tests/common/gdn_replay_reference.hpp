// SPDX-License-Identifier: Apache-2.0
/// @file gdn_replay_reference.hpp
/// @brief Replay mode on the host, in double (DESIGN.md "Replay mode", wyjit/gdn_replay.h): the
///        cursor rules (the fold, the commit), where the fields of a log tile lie, and the
///        current state S_cur of a sequence from its checkpoint and its live log. The tokens'
///        recurrence on top of S_cur is gdn_reference (state0_exact = S_cur).
#pragma once

#include <cstddef>
#include <vector>

namespace wyjit::test {

/// A sequence's cursor: the live log is entries base .. base+len-1 (mod L).
struct ReplayCursor {
  int base = 0;
  int len = 0;
  friend bool operator==(const ReplayCursor&, const ReplayCursor&) = default;
};

/// Whether a verify at `c` folds (len + 2K > L): it writes S_cur as the new checkpoint and
/// measures its entries' G from it.
bool replay_folds(const ReplayCursor& c, int K, int L);

/// The cursor after a commit of `accepted` tokens of a step whose verify read `c`: negative
/// (padding) leaves it; more than K counts as K; after a fold the log restarts at the step's
/// entries (base += len, len = accepted), else it grows by them.
ReplayCursor replay_commit(const ReplayCursor& c, int accepted, int K, int L);

/// Where the fields of one log tile lie, in floats from its start: entry j's k [HK][dk], then
/// every entry's u [HV][dv], then every entry's G [HV].
struct ReplayLogLayout {
  int L = 0, hk = 0, hv = 0, dk = 0, dv = 0;

  std::size_t floats() const;
  std::size_t k(int pos, int head) const;  ///< first of dk floats
  std::size_t u(int pos, int vh) const;    ///< first of dv floats
  std::size_t g(int pos, int vh) const;
  /// Position of live entry j (0: the oldest) of `c`.
  int position(const ReplayCursor& c, int j) const { return (c.base + j) & (L - 1); }
};

/// G_cur of value head `vh`: G of the last live entry, 0 when the log is empty.
double replay_g_cur(const float* tile, const ReplayLogLayout& log, const ReplayCursor& c, int vh);

/// S_cur = e^{G_cur} S0 + sum_{j live} e^{G_cur - G_j} k_j u_j^T of one sequence, [HV][dk][dv],
/// from its checkpoint `s0` ([HV][dk][dv], i over dk at i*dv + j) and its log `tile` (the
/// fields of live entries only are read).
std::vector<double> replay_current_state(const double* s0, const float* tile,
                                         const ReplayLogLayout& log, const ReplayCursor& c);

}  // namespace wyjit::test
