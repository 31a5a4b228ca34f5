// SPDX-License-Identifier: Apache-2.0
// The gdn_verify family's descriptor: its fields (name grammar, ranges, standard matrix), its
// kernel source, its one kernel and its shared memory.
#include <array>
#include <string>

#include "families/gdn_common/gdn_model_fields.hpp"
#include "families/gdn_common/gdn_tokens.hpp"
#include "gdn_verify/gdn_verify_params.cuh"
#include "spec/family.hpp"
#include "stamp/template_args.hpp"

namespace wyjit {

namespace {

using detail::field;
using detail::FieldDef;

constexpr std::array kHeadDims = {64, 128, 256};
constexpr std::array<std::string_view, 1> kRoles = {"verify"};

// gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]
// NOTE: the standard matrix normalises q and k in the kernel, as every shipped model's layers do
// (Qwen3-Next, Qwen3.5), with fused gating (SGLang's convention) and without (vLLM computes g
// and beta before its kernel); io in every dtype, f32 state, vk, d128.
constexpr std::array<FieldDef<GdnVerifySpec>, 9> kFields = {
    field<&GdnVerifySpec::k>({.name = "k",
                              .label = "K",
                              .kind = FieldKind::integer,
                              .spelling = "k",
                              .min = 1,
                              .max = 32,
                              .default_value = 4,
                              .standard = "1-17",
                              .doc = "tokens verified per sequence"}),
    field<&GdnVerifySpec::io>({.name = "io",
                               .label = "io dtype",
                               .kind = FieldKind::choice,
                               .spelling = "io_",
                               .choices = detail::kDTypeNames,
                               .default_value = 2,
                               .standard = "f32,f16,bf16",
                               .doc = "dtype of q, k, v, out (and raw gates)"}),
    field<&GdnVerifySpec::state>({.name = "state",
                                  .label = "state dtype",
                                  .kind = FieldKind::choice,
                                  .spelling = "st_",
                                  .choices = detail::kDTypeNames,
                                  .default_value = 0,
                                  .doc = "dtype the state is stored in (arithmetic is fp32)"}),
    field<&GdnVerifySpec::addressing>({.name = "addressing",
                                       .label = "addressing",
                                       .kind = FieldKind::choice,
                                       .spelling = "",
                                       .choices = detail::kAddressingNames,
                                       .default_value = 0,
                                       .standard = "strided,table,slot",
                                       .doc = "how a launch finds each sequence's states"}),
    field<&GdnVerifySpec::layout>({.name = "layout",
                                   .label = "layout",
                                   .kind = FieldKind::choice,
                                   .spelling = "",
                                   .choices = detail::kLayoutNames,
                                   .default_value = 0,
                                   .doc = "vk: [dv][dk] per head (dk contiguous); kv: [dk][dv]"}),
    field<&GdnVerifySpec::dk>({.name = "dk",
                               .label = "dk",
                               .kind = FieldKind::integer,
                               .spelling = "dk",
                               .allowed = kHeadDims,
                               .default_value = 128,
                               .merged_spelling = "d",
                               .doc = "key head dim"}),
    field<&GdnVerifySpec::dv>({.name = "dv",
                               .label = "dv",
                               .kind = FieldKind::integer,
                               .spelling = "dv",
                               .allowed = kHeadDims,
                               .default_value = 128,
                               .doc = "value head dim"}),
    field<&GdnVerifySpec::l2norm_qk>({.name = "l2norm",
                                      .label = "l2norm",
                                      .kind = FieldKind::flag,
                                      .spelling = "l2norm",
                                      .standard = "on",
                                      .doc = "normalise q and k rows in the kernel"}),
    field<&GdnVerifySpec::fused_gating>({.name = "gating",
                                         .label = "gating",
                                         .kind = FieldKind::flag,
                                         .spelling = "gating",
                                         .standard = "off,on",
                                         .doc = "g and beta from raw a, b, A_log, dt_bias"}),
};

// NOTE: every addressing mode, state dtype, layout and option is built and GPU-tested: the
// fields' own ranges are the whole check.
void check(const GdnVerifySpec&) {}

std::string name_expression(const GdnVerifySpec& s, std::size_t /*role*/) {
  using detail::kernel_bool;
  using detail::kernel_type;
  return detail::template_id(
      "wyjit_kernels::gdn_verify_kernel",
      {detail::template_id(
          "wyjit_kernels::GdnVerifyConfig",
          {std::to_string(s.k), std::to_string(s.dk), std::to_string(s.dv), kernel_type(s.io),
           kernel_type(s.state), detail::kernel_layout(s.layout),
           detail::kernel_addressing(s.addressing), kernel_bool(s.l2norm_qk),
           kernel_bool(s.fused_gating)})});
}

int max_dynamic_smem(const GdnVerifySpec& s, std::size_t /*role*/) {
  return wyjit_kernels::gdn_smem_bytes(s.k, s.dk, detail::kernel_layout_arg(s.layout));
}

}  // namespace

const detail::Family& GdnVerifySpec::family() noexcept {
  static const detail::TypedFamily<GdnVerifySpec> kFamily({
      .name = "gdn_verify",
      .kernel_file = "gdn_verify/gdn_verify.cuh",
      .params_type = "wyjit_kernels::GdnVerifyParams",
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
