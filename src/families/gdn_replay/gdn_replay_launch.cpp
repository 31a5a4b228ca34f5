// SPDX-License-Identifier: Apache-2.0
// gdn_replay's guards and launch plans, for its kernels (two verify forms, commit, materialize).
// Guards first, with the actual values; then one launch.
#include <cstdint>
#include <string>

#include "capi/capi_family.hpp"
#include "families/gdn_common/gdn_tokens.hpp"
#include "gdn_replay/gdn_replay_params.cuh"
#include "launch/guard.hpp"
#include "launch/launch.hpp"
#include "launch/state_refs_guard.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit {

namespace {

constexpr const char* kVerify = "launch_gdn_replay_verify";
constexpr const char* kCommit = "launch_gdn_replay_commit";
constexpr const char* kMaterialize = "launch_gdn_replay_materialize";
// The family's roles (gdn_replay_family.cpp).
constexpr int kVerifyRole = 0;
constexpr int kCommitRole = 1;
constexpr int kMaterializeRole = 2;
constexpr int kVerifyWyRole = 3;

// The kernel form of `path` for the variant's layout (kv: always WY).
int kernel_path(const GdnReplaySpec& s, int path) {
  return wyjit_kernels::gdn_replay_path(detail::kernel_layout_arg(s.layout), path);
}

int cols(const GdnReplaySpec& s, int path) {
  return wyjit_kernels::gdn_replay_block_cols(s.k, s.dk, s.dv, detail::kernel_layout_arg(s.layout),
                                              kernel_path(s, path));
}

// NOTE: measured on an H200 (docs/replay-performance.md; f32 checkpoint, HV = 32, the
// WY form's projections and dots on tensor cores): the WY form wins at every K from 256
// (sequence, value head) pairs on (N = 8: K = 2 14.1 against 17.3 us, K = 16 31.8 against 39.8;
// N = 128: K = 4 163 against 233, K = 16 426 against 495); in turn wins with 32 pairs (N = 1:
// 5.7 against 7.7 us at K = 2, 11.5 against 20.6 at K = 16). Between them nothing was measured.
int verify_path(const GdnReplaySpec& spec, const GdnReplayVerifyArgs& a) {
  switch (a.path) {
    case WYJIT_GDN_REPLAY_PATH_IN_TURN:
      return kernel_path(spec, wyjit_kernels::kReplayInTurn);
    case WYJIT_GDN_REPLAY_PATH_WY:
      return wyjit_kernels::kReplayWy;
    default:
      break;
  }
  const std::int64_t pairs = std::int64_t{a.batch} * a.num_v_heads;
  const bool wy = pairs >= 256;
  return kernel_path(spec, wy ? wyjit_kernels::kReplayWy : wyjit_kernels::kReplayInTurn);
}

// The checkpoints, the log tiles and the cursor: what verify and materialize both read.
template <class Args>
void check_replay_state(const detail::Guard& guard, const GdnReplaySpec& spec, const Args& a,
                        int checkpoint_writes) {
  const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
  detail::check_state_refs(guard, spec.addressing, a.states,
                           {
                               .batch = a.batch,
                               .writes = checkpoint_writes,
                               .tile = std::int64_t{a.num_v_heads} * a.dk * a.dv,
                               .tile_text = "num_v_heads*dk*dv",
                               .alignment = spec.layout == Layout::vk ? 4 * st : st,
                               .alignment_why = "vector loads",
                               .stride_multiple = 4,
                           });
  // NOTE: the log is read and written in place (no write slots): 16-byte copies of its rows.
  detail::check_state_refs(guard, spec.addressing, a.log,
                           {
                               .batch = a.batch,
                               .writes = 0,
                               .tile = gdn_replay_log_floats(spec, a.num_k_heads, a.num_v_heads),
                               .tile_text = "L*(num_k_heads*dk + num_v_heads*dv + num_v_heads)",
                               .alignment = 16,
                               .alignment_why = "16-byte copies of its rows",
                               .stride_multiple = 4,
                           },
                           WYJIT_STATE_REFS_NAME(log));
  guard.pointer("cursor", a.cursor, alignof(std::int32_t), "int32 elements");
  guard.at_least("cursor_stride", a.cursor_stride, 2, "base and len");
}

}  // namespace

std::int64_t gdn_replay_log_floats(const GdnReplaySpec& spec, int num_k_heads,
                                   int num_v_heads) noexcept {
  return wyjit_kernels::gdn_replay_log_floats(spec.log, spec.dk, spec.dv, num_k_heads, num_v_heads);
}

void check_gdn_replay_verify_args(const GdnReplaySpec& spec, const GdnReplayVerifyArgs& a) {
  const KernelSpec variant = spec;
  const detail::Guard guard(kVerify, variant);
  detail::check_gdn_tokens(
      guard,
      {.k = spec.k,
       .dk = spec.dk,
       .dv = spec.dv,
       .io = spec.io,
       .fused_gating = spec.fused_gating,
       .blocks_per_sequence_head = spec.dv / cols(spec, wyjit_kernels::kReplayInTurn)},
      a);
  if (a.path < WYJIT_GDN_REPLAY_PATH_AUTOMATIC || a.path > WYJIT_GDN_REPLAY_PATH_WY) {
    guard.fail("args.path is " + std::to_string(a.path) +
               ": use WYJIT_GDN_REPLAY_PATH_AUTOMATIC (0), _IN_TURN (1) or _WY (2)");
  }
  check_replay_state(guard, spec, a, 1);
}

void check_gdn_replay_commit_args(const GdnReplaySpec& spec, const GdnReplayCommitArgs& a) {
  const KernelSpec variant = spec;
  const detail::Guard guard(kCommit, variant);
  guard.equal("k", a.k, spec.k, "the variant's K");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.pointer("cursor", a.cursor, alignof(std::int32_t), "int32 elements");
  guard.at_least("cursor_stride", a.cursor_stride, 2, "base and len");
  guard.pointer("accepted", a.accepted, alignof(std::int32_t), "int32 elements");
}

void check_gdn_replay_materialize_args(const GdnReplaySpec& spec,
                                       const GdnReplayMaterializeArgs& a) {
  const KernelSpec variant = spec;
  const detail::Guard guard(kMaterialize, variant);
  guard.equal("dk", a.dk, spec.dk, "the variant's dk");
  guard.equal("dv", a.dv, spec.dv, "the variant's dv");
  guard.at_least("batch", a.batch, 1, "at least one sequence");
  guard.at_least("num_k_heads", a.num_k_heads, 1, "at least one key head");
  guard.at_least("num_v_heads", a.num_v_heads, 1, "at least one value head");
  if (a.num_v_heads % a.num_k_heads != 0) {
    guard.fail("args.num_v_heads is " + std::to_string(a.num_v_heads) +
               ", must be a multiple of args.num_k_heads = " + std::to_string(a.num_k_heads));
  }
  detail::check_gdn_grid(guard, a.batch, a.num_v_heads,
                         spec.dv / cols(spec, wyjit_kernels::kReplayInTurn));
  check_replay_state(guard, spec, a, 0);
  const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
  detail::check_state_refs(guard, spec.addressing, a.out,
                           {
                               .batch = a.batch,
                               .writes = 1,
                               .reads = false,
                               .tile = std::int64_t{a.num_v_heads} * a.dk * a.dv,
                               .tile_text = "num_v_heads*dk*dv",
                               .alignment = spec.layout == Layout::vk ? 4 * st : st,
                               .alignment_why = "vector stores",
                               .stride_multiple = 4,
                           },
                           WYJIT_STATE_REFS_NAME(out));
}

void launch_gdn_replay_verify(const Kernel& kernel, const GdnReplayVerifyArgs& a, CUstream stream) {
  const GdnReplaySpec& spec = detail::spec_of<GdnReplaySpec>(kernel, kVerify);
  check_gdn_replay_verify_args(spec, a);
  wyjit_kernels::GdnReplayParams params{
      .tokens = detail::kernel_tokens(a),
      .states = detail::kernel_state_refs(a.states),
      .log = detail::kernel_state_refs(a.log),
      .out = {},
      .cursor = a.cursor,
      .commit_cursor = nullptr,
      .accepted = nullptr,
      .cursor_stride = a.cursor_stride,
      .batch = a.batch,
      .v_heads = wyjit_kernels::make_fast_div(a.num_v_heads),
      .v_per_k = wyjit_kernels::make_fast_div(a.num_v_heads / a.num_k_heads),
  };
  const int layout = detail::kernel_layout_arg(spec.layout);
  const int path = verify_path(spec, a);
  const detail::LaunchPlan plan{
      .role = path == wyjit_kernels::kReplayWy ? kVerifyWyRole : kVerifyRole,
      .grid = static_cast<unsigned>(a.batch * a.num_v_heads * (spec.dv / cols(spec, path))),
      .block = static_cast<unsigned>(
          wyjit_kernels::gdn_replay_threads(spec.k, spec.dk, spec.dv, layout, path)),
      .smem_bytes = static_cast<unsigned>(wyjit_kernels::gdn_replay_verify_smem_bytes(
          spec.k, spec.log, spec.dk, spec.dv, layout, path)),
  };
  detail::launch_with(kernel, kVerify, plan, params, stream);
}

void launch_gdn_replay_commit(const Kernel& kernel, const GdnReplayCommitArgs& a, CUstream stream) {
  const GdnReplaySpec& spec = detail::spec_of<GdnReplaySpec>(kernel, kCommit);
  check_gdn_replay_commit_args(spec, a);
  wyjit_kernels::GdnReplayParams params{};
  params.commit_cursor = a.cursor;
  params.accepted = a.accepted;
  params.cursor_stride = a.cursor_stride;
  params.batch = a.batch;
  const int threads = wyjit_kernels::gdn_replay_commit_threads();
  const detail::LaunchPlan plan{
      .role = kCommitRole,
      .grid = static_cast<unsigned>((a.batch + threads - 1) / threads),
      .block = static_cast<unsigned>(threads),
      .smem_bytes = 0,
  };
  detail::launch_with(kernel, kCommit, plan, params, stream);
}

void launch_gdn_replay_materialize(const Kernel& kernel, const GdnReplayMaterializeArgs& a,
                                   CUstream stream) {
  const GdnReplaySpec& spec = detail::spec_of<GdnReplaySpec>(kernel, kMaterialize);
  check_gdn_replay_materialize_args(spec, a);
  wyjit_kernels::GdnReplayParams params{};
  params.tokens.num_k_heads = a.num_k_heads;
  params.tokens.num_v_heads = a.num_v_heads;
  params.states = detail::kernel_state_refs(a.states);
  params.log = detail::kernel_state_refs(a.log);
  params.out = detail::kernel_state_refs(a.out);
  params.cursor = a.cursor;
  params.cursor_stride = a.cursor_stride;
  params.batch = a.batch;
  params.v_heads = wyjit_kernels::make_fast_div(a.num_v_heads);
  params.v_per_k = wyjit_kernels::make_fast_div(a.num_v_heads / a.num_k_heads);
  const int layout = detail::kernel_layout_arg(spec.layout);
  const detail::LaunchPlan plan{
      .role = kMaterializeRole,
      .grid = static_cast<unsigned>(a.batch * a.num_v_heads *
                                    (spec.dv / cols(spec, wyjit_kernels::kReplayInTurn))),
      .block = static_cast<unsigned>(wyjit_kernels::gdn_threads()),
      .smem_bytes = static_cast<unsigned>(wyjit_kernels::gdn_replay_materialize_smem_bytes(
          spec.k, spec.log, spec.dk, spec.dv, layout)),
  };
  detail::launch_with(kernel, kMaterialize, plan, params, stream);
}

}  // namespace wyjit

WYJIT_C_LAUNCH(gdn_replay_verify, wyjit::GdnReplaySpec, wyjit_gdn_replay_verify_args,
               wyjit::check_gdn_replay_verify_args, wyjit::launch_gdn_replay_verify)
WYJIT_C_LAUNCH(gdn_replay_commit, wyjit::GdnReplaySpec, wyjit_gdn_replay_commit_args,
               wyjit::check_gdn_replay_commit_args, wyjit::launch_gdn_replay_commit)
WYJIT_C_LAUNCH(gdn_replay_materialize, wyjit::GdnReplaySpec, wyjit_gdn_replay_materialize_args,
               wyjit::check_gdn_replay_materialize_args, wyjit::launch_gdn_replay_materialize)
