// SPDX-License-Identifier: Apache-2.0
/// @file gdn_replay.hpp
/// @brief The gdn_replay family (replay-mode verify): its spec and its typed, checked launches
///        of its three kernels: verify, commit, materialize (wyjit/gdn_replay.h has the log,
///        cursor and step protocol).
///
/// Canonical names: `gdn_replay.kK.lL.io_T.st_T.addressing.layout.dD[.l2norm][.gating]`, e.g.
/// `gdn_replay.k4.l16.io_bf16.st_f32.strided.vk.d128.l2norm`: K tokens per verify, a log of L
/// entries (L >= 2K), the checkpoint stored in the state dtype.
///
/// The verify computes, for the K tokens of a sequence, the same outputs as gdn_verify would on
/// S_cur (DESIGN.md, "The math"), in fp32 from S0 and the fp32 log, and writes one log entry per
/// token instead of a state per token; a fold rounds S_cur once to the state dtype.
#pragma once

#include <cuda.h>

#include <compare>
#include <cstdint>

#include "wyjit/gdn_replay.h"
#include "wyjit/types.hpp"

namespace wyjit {

class Kernel;
namespace detail {
class Family;
}  // namespace detail

/// A gdn_replay variant: every compile-time choice.
struct GdnReplaySpec {
  int k = 4;                 ///< tokens verified per sequence and step, 1..16
  int log = 16;              ///< L, log entries per sequence: 8, 16, 32 or 64, >= 2K
  DType io = DType::bf16;    ///< q, k, v, out (and raw gating inputs)
  DType state = DType::f32;  ///< checkpoint storage (the log is fp32)
  Addressing addressing = Addressing::strided;
  Layout layout = Layout::vk;
  int dk = 128;               ///< key head dim: 64, 128 or 256
  int dv = 128;               ///< value head dim: 64, 128 or 256
  bool l2norm_qk = false;     ///< normalise q and k rows in the kernel
  bool fused_gating = false;  ///< compute g and beta from raw a, b, A_log, dt_bias

  friend auto operator<=>(const GdnReplaySpec&, const GdnReplaySpec&) = default;
  /// The family's descriptor (library-internal: not exported).
  static const detail::Family& family() noexcept;
};

/// The launch arguments (wyjit/gdn_replay.h): the same structs as C's.
using GdnReplayVerifyArgs = ::wyjit_gdn_replay_verify_args;
using GdnReplayCommitArgs = ::wyjit_gdn_replay_commit_args;
using GdnReplayMaterializeArgs = ::wyjit_gdn_replay_materialize_args;

/// Floats of one log tile (one sequence and layer) of `spec` with `num_k_heads` and
/// `num_v_heads`: L * (HK*dk + HV*dv + HV).
WYJIT_API std::int64_t gdn_replay_log_floats(const GdnReplaySpec& spec, int num_k_heads,
                                             int num_v_heads) noexcept;

/// Checks `args` against `spec` and the data contract; throws Error(invalid_argument) naming
/// the argument and its value. Touches no device memory and no driver.
WYJIT_API void check_gdn_replay_verify_args(const GdnReplaySpec& spec,
                                            const GdnReplayVerifyArgs& args);
WYJIT_API void check_gdn_replay_commit_args(const GdnReplaySpec& spec,
                                            const GdnReplayCommitArgs& args);
WYJIT_API void check_gdn_replay_materialize_args(const GdnReplaySpec& spec,
                                                 const GdnReplayMaterializeArgs& args);

/// Checks, then launches on `stream`. Allocates nothing and never synchronises, so a step can be
/// captured in a CUDA graph. The kernel must come from Jit::kernel for a gdn_replay spec.
WYJIT_API void launch_gdn_replay_verify(const Kernel& kernel, const GdnReplayVerifyArgs& args,
                                        CUstream stream);
WYJIT_API void launch_gdn_replay_commit(const Kernel& kernel, const GdnReplayCommitArgs& args,
                                        CUstream stream);
WYJIT_API void launch_gdn_replay_materialize(const Kernel& kernel,
                                             const GdnReplayMaterializeArgs& args, CUstream stream);

}  // namespace wyjit
