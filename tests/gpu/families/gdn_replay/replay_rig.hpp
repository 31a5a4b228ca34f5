// SPDX-License-Identifier: Apache-2.0
// A replay-mode run on the GPU next to its float64 reference: one layer's checkpoints and log, one
// cursor per sequence, steps of K random tokens with random acceptance, and after each step the
// outputs, the cursors and (on request) the materialized states compared with the sequential
// recurrence in double over the accepted tokens.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "common/gdn_reference.hpp"
#include "common/half_types.hpp"
#include "gpu/support/device.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::test {

struct ReplayShape {
  int batch = 3;
  int hk = 2;
  int hv = 4;
  /// Log-decay range of the random tokens: slow decays keep a long memory, which is what lets
  /// rounding errors of the log or the folds accumulate if they can.
  float g_lo = -0.1f;
  float g_hi = -0.001f;
  std::uint64_t seed = 1;
  /// The verify kernel (wyjit_gdn_replay_path): the tests force each form.
  std::int32_t path = WYJIT_GDN_REPLAY_PATH_AUTOMATIC;
};

/// Worst relative differences of one step.
struct ReplayErrors {
  double out = 0.0;    ///< max |o - o_ref| / max |o_ref| over the step's outputs
  double state = 0.0;  ///< the same for the materialized states (when materialized)
  bool folded = false;
};

class ReplayRig {
 public:
  /// A rig for `spec` (strided, table or slot addressing): checkpoints from a random prefill
  /// state, empty logs (len = 0), cursors at base = `base0`.
  ReplayRig(const GdnReplaySpec& spec, const ReplayShape& shape, int base0 = 0);

  /// One step: K random tokens per sequence (inputs rounded to the io dtype), the verify, the
  /// outputs checked, `accepted[b]` (1..K, or -1 for a padded sequence when the addressing has
  /// padding) committed, the cursors checked against the host's model; with `materialize` the
  /// states too.
  ReplayErrors step(const std::vector<int>& accepted, bool materialize);

  /// A random acceptance: each draft accepted with probability `p` until the first rejection.
  std::vector<int> random_accepted(double p);

  /// The device bytes of every buffer the verify may write (outputs, checkpoints, logs) and of
  /// the cursors, for bit-identity checks between addressing modes.
  std::vector<std::uint8_t> outputs() const;
  std::vector<std::uint8_t> checkpoints() const;
  std::vector<std::uint8_t> logs() const;
  int folds() const noexcept { return folds_; }

 private:
  void launch_verify(CUstream stream);
  void launch_commit(CUstream stream);
  std::vector<double> materialize_host();

  GdnReplaySpec spec_;
  ReplayShape shape_;
  Kernel kernel_;
  std::mt19937_64 rng_;
  Stream stream_;
  int rows_ = 0;
  std::int64_t tile_ = 0;      // checkpoint elements per sequence
  std::int64_t log_tile_ = 0;  // log floats per sequence
  // Device buffers.
  DeviceBuffer q_, k_, v_, g_, beta_, a_, b_, a_log_, dt_bias_, out_;
  DeviceBuffer state_, log_, cursor_, accepted_, slots_, tables_, log_tables_, mat_, mat_tables_;
  // Host model: the exact states, the cursors.
  std::vector<double> exact_;  // [batch][HV][dk][dv]
  std::vector<int> base_, len_;
  std::vector<bool> padded_;  // sequences whose checkpoint the addressing marks as padding
  int folds_ = 0;
  GdnProblem tokens_;  // the step's inputs, as the GPU reads them
};

}  // namespace wyjit::test
