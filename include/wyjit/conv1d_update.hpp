// SPDX-License-Identifier: Apache-2.0
/// @file conv1d_update.hpp
/// @brief Typed launch of the K-token causal depthwise conv1d update.
///
/// Variant names: `conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]`, e.g.
/// `conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu` (see wyjit/spec.hpp).
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
/// [0, state_cols - (W-1)] marks a padded sequence: nothing of it is read or written.
///
/// ## Addressing of the state tiles (one per variant, as for gdn_verify)
///
/// - strided: S_b = `state + b*state_seq_stride`; intermediate: Hi_t(b) = `inter +
///   b*inter_seq_stride + t*inter_tok_stride`, t = 0..K-2.
/// - table: device array `tables`: `tables[b]` is S_b (read, then the final state or the window
///   written there; null marks a padded sequence); intermediate: `tables[(1+t)*slab_stride + b]`
///   is Hi_t(b) (null skips that state). Keep the array at a fixed address for CUDA graphs, e.g.
///   a GdnTableStager (K slabs for intermediate, 1 for window).
/// - slot: `state` is a pool of `num_slots` tiles `slot_stride` elements apart. Sequence b reads
///   slot `read_slot[b]` (negative or >= num_slots: padding, nothing read or written) and writes
///   the state after token t (intermediate) or the window (window, t = 0) to slot
///   `write_slot[b*write_slot_stride + t]` (negative or >= num_slots: that state is skipped).
///
/// A padded sequence's y rows are not written. Tiles written by one sequence must not be read
/// or written by another in the same launch.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "wyjit/jit.hpp"

namespace wyjit {

/// Which of the kernel's two paths a launch takes. Both compute the same values bit for bit;
/// they differ in how the work is spread over threads.
enum class Conv1dPath : int {
  automatic = 0,  ///< narrow for launches with little work (a few sequences), else wide
  wide = 1,       ///< a thread owns 16 bytes of channels and walks a run of tokens
  narrow = 2,     ///< a thread owns 4 bytes of channels and one token: shortest latency
};

/// Arguments of one conv1d_update launch. Strides are in elements of the pointed-to type.
struct Conv1dUpdateArgs {
  int batch = 0;     ///< sequences
  int channels = 0;  ///< channels per token (any count, e.g. 8192)
  int k = 0;         ///< tokens per sequence: must equal the variant's K
  int width = 0;     ///< filter width: must equal the variant's W

  const void* x = nullptr;       ///< [batch*K, x_stride] io dtype
  void* y = nullptr;             ///< [batch*K, y_stride] io dtype
  std::int64_t x_stride = 0;     ///< >= channels
  std::int64_t y_stride = 0;     ///< >= channels
  const void* weight = nullptr;  ///< [channels][W] weight dtype
  const void* bias = nullptr;    ///< [channels] weight dtype (variant option `bias`)

  /// Columns of every state tile: >= W-1 (intermediate), >= W-1+K (window).
  std::int64_t state_cols = 0;
  /// Element (channel c, column j) of a tile is at c*state_channel_stride + j*state_col_stride:
  /// [channels][state_cols] has state_col_stride = 1 and state_channel_stride >= state_cols;
  /// [state_cols][channels] has state_channel_stride = 1 and state_col_stride >= channels.
  std::int64_t state_channel_stride = 0;
  std::int64_t state_col_stride = 0;

  /// Strided addressing: S_b = state + b*state_seq_stride (>= the elements a tile spans:
  /// channels*state_channel_stride or state_cols*state_col_stride).
  void* state = nullptr;
  std::int64_t state_seq_stride = 0;
  /// Strided, intermediate: Hi_t(b) = inter + b*inter_seq_stride + t*inter_tok_stride
  /// (unused when K == 1).
  void* inter = nullptr;
  std::int64_t inter_seq_stride = 0;
  std::int64_t inter_tok_stride = 0;

  /// Table addressing: tables[b] is S_b, tables[(1+t)*slab_stride + b] is Hi_t(b).
  void* const* tables = nullptr;
  std::int64_t slab_stride = 0;  ///< >= batch (intermediate with K > 1)

  /// Slot addressing: `state` is the pool.
  std::int64_t slot_stride = 0;  ///< >= the elements a tile spans
  std::int32_t num_slots = 0;
  const std::int32_t* read_slot = nullptr;   ///< [batch] int32, device memory
  const std::int32_t* write_slot = nullptr;  ///< [batch][write_slot_stride] int32, device memory
  std::int64_t write_slot_stride = 0;        ///< >= K (intermediate), >= 1 (window)

  /// Window form: [batch] int32, device memory: the first history column of each sequence.
  const std::int32_t* window_offset = nullptr;
  /// The kernel path; automatic unless measuring or testing one of them.
  Conv1dPath path = Conv1dPath::automatic;
};

/// Checks `args` against `spec` and the data contract; throws Error(invalid_argument) naming
/// the argument and its value. Touches no device memory and no driver.
void check_conv1d_update_args(const KernelSpec& spec, const Conv1dUpdateArgs& args);

/// Checks, then launches on `stream`. Allocates nothing and never synchronises, so it can be
/// captured in a CUDA graph. The kernel must come from Jit::kernel for a conv1d_update spec.
void launch_conv1d_update(const Kernel& kernel, const Conv1dUpdateArgs& args, CUstream stream);

}  // namespace wyjit
