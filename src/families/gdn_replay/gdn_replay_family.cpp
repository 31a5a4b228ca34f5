// SPDX-License-Identifier: Apache-2.0
// The gdn_replay family's descriptor: its fields (name grammar, ranges, standard matrix), its
// kernel source and its kernels (verify in turn, commit, materialize, verify in the WY form) with
// their shared memory.
#include <array>
#include <string>

#include "families/gdn_common/gdn_model_fields.hpp"
#include "families/gdn_common/gdn_tokens.hpp"
#include "gdn_replay/gdn_replay_params.cuh"
#include "spec/family.hpp"
#include "stamp/template_args.hpp"

namespace wyjit {

namespace {

using detail::field;
using detail::FieldDef;

constexpr std::array kHeadDims = {64, 128, 256};
constexpr std::array kLogSizes = {8, 16, 32, 64};
// Role order: the launches name the kernels by their index (gdn_replay_launch.cpp).
// NOTE: kv has only the WY form: both verify roles name the same instantiation there.
constexpr std::array<std::string_view, 4> kRoles = {"verify", "commit", "materialize", "verify_wy"};

// gdn_replay.kK.lL.io_T.st_T.addressing.layout.dD[.l2norm][.gating]
// NOTE: the standard matrix is what the shipped models run (bf16 io, f32 checkpoint, vk, d128,
// q/k normalised in the kernel), with and without fused gating, for logs of 16 and 32 entries;
// the K the rule L >= 2K allows.
constexpr std::array<FieldDef<GdnReplaySpec>, 10> kFields = {
    field<&GdnReplaySpec::k>({.name = "k",
                              .label = "K",
                              .kind = FieldKind::integer,
                              .spelling = "k",
                              .min = 1,
                              .max = 16,
                              .default_value = 4,
                              .standard = "1-16",
                              .doc = "tokens verified per sequence and step"}),
    field<&GdnReplaySpec::log>({.name = "log",
                                .label = "L",
                                .kind = FieldKind::integer,
                                .spelling = "l",
                                .allowed = kLogSizes,
                                .default_value = 16,
                                .standard = "16,32",
                                .doc = "log entries per sequence (at least 2K)"}),
    field<&GdnReplaySpec::io>({.name = "io",
                               .label = "io dtype",
                               .kind = FieldKind::choice,
                               .spelling = "io_",
                               .choices = detail::kDTypeNames,
                               .default_value = 2,
                               .doc = "dtype of q, k, v, out (and raw gates)"}),
    field<&GdnReplaySpec::state>({.name = "state",
                                  .label = "state dtype",
                                  .kind = FieldKind::choice,
                                  .spelling = "st_",
                                  .choices = detail::kDTypeNames,
                                  .default_value = 0,
                                  .doc = "dtype the checkpoint is stored in (the log is fp32)"}),
    field<&GdnReplaySpec::addressing>(
        {.name = "addressing",
         .label = "addressing",
         .kind = FieldKind::choice,
         .spelling = "",
         .choices = detail::kAddressingNames,
         .default_value = 0,
         .standard = "strided,table,slot",
         .doc = "how a launch finds each sequence's checkpoint and log"}),
    field<&GdnReplaySpec::layout>({.name = "layout",
                                   .label = "layout",
                                   .kind = FieldKind::choice,
                                   .spelling = "",
                                   .choices = detail::kLayoutNames,
                                   .default_value = 0,
                                   .doc = "vk: [dv][dk] per head (dk contiguous); kv: [dk][dv]"}),
    field<&GdnReplaySpec::dk>({.name = "dk",
                               .label = "dk",
                               .kind = FieldKind::integer,
                               .spelling = "dk",
                               .allowed = kHeadDims,
                               .default_value = 128,
                               .merged_spelling = "d",
                               .doc = "key head dim"}),
    field<&GdnReplaySpec::dv>({.name = "dv",
                               .label = "dv",
                               .kind = FieldKind::integer,
                               .spelling = "dv",
                               .allowed = kHeadDims,
                               .default_value = 128,
                               .doc = "value head dim"}),
    field<&GdnReplaySpec::l2norm_qk>({.name = "l2norm",
                                      .label = "l2norm",
                                      .kind = FieldKind::flag,
                                      .spelling = "l2norm",
                                      .standard = "on",
                                      .doc = "normalise q and k rows in the kernel"}),
    field<&GdnReplaySpec::fused_gating>({.name = "gating",
                                         .label = "gating",
                                         .kind = FieldKind::flag,
                                         .spelling = "gating",
                                         .standard = "off,on",
                                         .doc = "g and beta from raw a, b, A_log, dt_bias"}),
};

void check(const GdnReplaySpec& s) {
  if (s.log < 2 * s.k) {
    detail::reject(s, "L", std::to_string(s.log),
                   ">= 2K = " + std::to_string(2 * s.k) +
                       " (a verify writes its K entries past the live ones, and the fold rule "
                       "looks one step ahead)");
  }
}

// The verify form of a role's kernel (roles 0 and 3; commit and materialize take the in-turn
// configuration): kv has only the WY form.
int role_path(const GdnReplaySpec& s, std::size_t role) {
  return wyjit_kernels::gdn_replay_path(
      detail::kernel_layout_arg(s.layout),
      role == 3 ? wyjit_kernels::kReplayWy : wyjit_kernels::kReplayInTurn);
}

std::string name_expression(const GdnReplaySpec& s, std::size_t role) {
  using detail::kernel_bool;
  using detail::kernel_type;
  static constexpr std::array<const char*, 4> kKernels = {
      "wyjit_kernels::gdn_replay_verify_kernel", "wyjit_kernels::gdn_replay_commit_kernel",
      "wyjit_kernels::gdn_replay_materialize_kernel", "wyjit_kernels::gdn_replay_verify_kernel"};
  const int path = role_path(s, role);
  return detail::template_id(
      kKernels.at(role),
      {detail::template_id(
          "wyjit_kernels::GdnReplayConfig",
          {std::to_string(s.k), std::to_string(s.log), std::to_string(s.dk), std::to_string(s.dv),
           kernel_type(s.io), kernel_type(s.state), detail::kernel_layout(s.layout),
           detail::kernel_addressing(s.addressing), kernel_bool(s.l2norm_qk),
           kernel_bool(s.fused_gating), std::to_string(path)})});
}

int max_dynamic_smem(const GdnReplaySpec& s, std::size_t role) {
  const int layout = detail::kernel_layout_arg(s.layout);
  switch (role) {
    case 0:
    case 3:
      return wyjit_kernels::gdn_replay_verify_smem_bytes(s.k, s.log, s.dk, s.dv, layout,
                                                         role_path(s, role));
    case 2:
      return wyjit_kernels::gdn_replay_materialize_smem_bytes(s.k, s.log, s.dk, s.dv, layout);
    default:
      return 0;
  }
}

}  // namespace

const detail::Family& GdnReplaySpec::family() noexcept {
  static const detail::TypedFamily<GdnReplaySpec> kFamily({
      .name = "gdn_replay",
      .kernel_file = "gdn_replay/gdn_replay.cuh",
      .params_type = "wyjit_kernels::GdnReplayParams",
      .roles = kRoles,
      .fields = kFields,
      .check = check,
      .name_expression = name_expression,
      .max_dynamic_smem = max_dynamic_smem,
      .model_values = detail::gdn_model_values,
  });
  return kFamily;
}

}  // namespace wyjit
