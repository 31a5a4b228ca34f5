// SPDX-License-Identifier: Apache-2.0
/// @file conv1d_update.hpp
/// @brief The conv1d_update family: its spec and its typed, checked launch.
///
/// Variant names: `conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]`, e.g.
/// `conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu`.
///
/// ## The math
///
/// Per sequence b and channel c, the conv state h holds the W-1 previous inputs, oldest first.
/// With the K new inputs x_0..x_{K-1} of the launch, the window is
///
///     z = [h_0, .., h_{W-2}, x_0, .., x_{K-1}]                     (W-1+K values)
///     y_t = silu(bias[c] + sum_{w<W} weight[c][w] * z[t+w])         t = 0..K-1
///
/// so z[t..t+W-1] are the last W inputs ending at x_t, and weight[c][W-1] multiplies x_t.
/// Bias and SiLU (silu(v) = v / (1 + e^-v)) are variant options. Arithmetic is fp32; y is
/// rounded once to the io dtype. The state after token t is z[t+1..t+W-1] (its last W-1 inputs).
///
/// ## Data
///
/// - x, y: element (b, t, c) at `(b*K + t) * x_stride + c` (`y_stride` for y), io dtype.
/// - weight: `[channels][W]` contiguous, the variant's weight dtype (io or f32); bias:
///   `[channels]`, same dtype.
/// - A state tile is one sequence's conv state in the io dtype: `state_cols` columns of every
///   channel, column j of channel c at `c*state_channel_stride + j*state_col_stride`. Two shapes:
///   `[channels][state_cols]` (state_col_stride = 1, state_channel_stride >= state_cols: a
///   channel's columns are contiguous) or `[state_cols][channels]` (state_channel_stride = 1,
///   state_col_stride >= channels: a column of all channels is contiguous, as in vLLM's conv
///   state). Elements the launch does not write are never touched.
///
/// NOTE (performance): the window form reads W-1 of the W-1+K columns. In `[channels][cols]`
/// tiles those are a few bytes of every channel's row, so DRAM moves about the whole window;
/// `[cols][channels]` tiles read exactly W-1 contiguous rows.
///
/// ## Rollback form `intermediate`
///
/// The state is columns [0, W-1) of a tile (state_cols >= W-1). The launch reads S_b and
/// writes the state after token t to Hi_t(b) for t = 0..K-2 and the final state (after token
/// K-1) over S_b. To keep a accepted tokens (1 <= a <= K) the engine takes the state after token
/// a-1: Hi_{a-1}(b), or S_b when a = K (with slot addressing: the next read slot is the write
/// slot of token a-1, so nothing is copied).
///
/// ## Rollback form `window`
///
/// A tile holds a window of state_cols >= W-1+K columns. With
/// `off = window_offset[b]`, the launch reads the history h from columns [off, off+W-1) of the
/// read tile, and writes all of z to columns [0, W-1+K) of the write tile (the same tile with
/// strided and table addressing: in place). To keep a tokens of this launch (0 <= a <= K) the
/// engine passes `window_offset[b] = a` to the next launch: columns [a, a+W-1) of z are exactly
/// the W-1 inputs ending at x_{a-1} (a = 0: the history this launch read), i.e. the state that
/// replaying the a accepted tokens one by one would leave. Rejected drafts cost nothing.
/// Since state_cols is an argument, a buffer made for the largest K serves every K: the offset a
/// of one launch is valid for the next whatever its K. Before the first launch the engine puts
/// the history in columns [0, W-1) and passes offset 0. An offset outside
/// [0, state_cols - (W-1)] marks a padded sequence: nothing of it is written (its x rows and
/// the weights may still be read, in bounds; docs/hostile-input.md).
///
/// ## Addressing of the state tiles (args.states, wyjit/state_refs.h)
///
/// The intermediate form writes K tiles a sequence (write t: the state after token t; with
/// strided and table addressing the last one, the final state, goes over S_b, the others to
/// Hi_t(b)); the window form writes one (the window; over S_b with strided and table
/// addressing). A table of either form is best kept at a fixed address for CUDA graphs by a
/// TableStager made for K (intermediate) or 1 (window).
///
/// A padded sequence's y rows are not written. Tiles written by one sequence must not be read
/// or written by another in the same launch.
#pragma once

#include <cuda.h>

#include <compare>

#include "wyjit/conv1d_update.h"
#include "wyjit/types.hpp"

namespace wyjit {

class Kernel;
namespace detail {
class Family;
}  // namespace detail

/// How a conv1d_update variant lets the engine roll back to the last accepted token.
enum class Rollback {
  intermediate,  ///< writes the conv state after every token (t = 0..K-2) plus the final one
  window,        ///< keeps the last W-1+K inputs; the next launch reads from a per-sequence offset
};

WYJIT_API const char* to_string(Rollback r) noexcept;

/// A conv1d_update variant: every compile-time choice. The conv state is stored in the io dtype.
struct Conv1dUpdateSpec {
  int k = 4;                  ///< tokens per sequence, 1..32
  DType io = DType::bf16;     ///< x, y and the conv state
  int width = 4;              ///< filter width W, 2..8
  DType weight = DType::f32;  ///< weight and bias dtype: the io dtype or f32
  Rollback rollback = Rollback::intermediate;
  Addressing addressing = Addressing::strided;
  bool bias = false;  ///< add a per-channel bias
  bool silu = false;  ///< apply SiLU to the output

  friend auto operator<=>(const Conv1dUpdateSpec&, const Conv1dUpdateSpec&) = default;
  /// The family's descriptor (library-internal: not exported).
  static const detail::Family& family() noexcept;
};

/// The launch arguments (wyjit/conv1d_update.h): the same struct as C's.
using Conv1dUpdateArgs = ::wyjit_conv1d_update_args;

/// Checks `args` against `spec` and the data contract; throws Error(invalid_argument) naming
/// the argument and its value. Touches no device memory and no driver.
WYJIT_API void check_conv1d_update_args(const Conv1dUpdateSpec& spec, const Conv1dUpdateArgs& args);

/// Checks, then launches on `stream` (the wide or the narrow kernel, as args.path and the size
/// of the launch say). Allocates nothing and never synchronises, so it can be captured in a
/// CUDA graph. The kernel must come from Jit::kernel for a conv1d_update spec.
WYJIT_API void launch_conv1d_update(const Kernel& kernel, const Conv1dUpdateArgs& args,
                                    CUstream stream);

}  // namespace wyjit
