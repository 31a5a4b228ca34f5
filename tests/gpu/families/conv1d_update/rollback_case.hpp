// SPDX-License-Identifier: Apache-2.0
// conv1d_update launches on random data, checked against the double-precision reference: one
// launch with padding everywhere, or a run of steps that accepts a random number of tokens
// after each launch and rolls back the way the variant's form prescribes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/support/checks.hpp"
#include "wyjit/conv1d_update.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::test {

struct Conv1dCase {
  Conv1dUpdateSpec spec;
  int batch = 1;
  int channels = 37;
  /// Padding after x and y rows, after each channel's state columns and between state tiles
  /// (poisoned, checked untouched). In a single launch with batch >= 3 it also pads sequence 1
  /// (null S_1, read slot -1, or window offset -1), skips a state of sequence 0 (null Hi_0,
  /// write slot -1 or, for a window, a write slot past the pool) where the addressing allows,
  /// and with batch >= 5 gives the window of sequence 3 an offset past its columns (padding).
  bool padded = false;
  std::uint64_t seed = 1;
  /// State tiles [columns][channels] (channels contiguous) instead of [channels][columns].
  bool channels_contiguous = false;
  /// The kernel the launches take (args.path: WYJIT_CONV1D_PATH_*).
  std::int32_t path = WYJIT_CONV1D_PATH_AUTOMATIC;
};

/// One launch: y, every state written (bit for bit: a state holds inputs), and every element
/// of the state pool and of y that must stay untouched.
std::vector<CheckedTensor> run_conv1d_case(const Conv1dCase& c);

/// `steps` launches on fresh inputs. After each, every sequence accepts a random count a of its
/// tokens (1..K for intermediate, 0..K for window) and the engine-side rollback is done: the
/// next read is Hi_{a-1} (slot and table addressing: a new read tile; strided: Hi_{a-1} copied
/// over S_b) or the window offset becomes a. Checks every step's y against the reference run on
/// the accepted history, and the state the next launch reads against replaying the accepted
/// tokens one at a time through the reference.
std::vector<CheckedTensor> run_conv1d_steps(const Conv1dCase& c, int steps);

std::string describe(const Conv1dCase& c);

}  // namespace wyjit::test
