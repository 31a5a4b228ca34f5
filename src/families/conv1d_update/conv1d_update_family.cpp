// SPDX-License-Identifier: Apache-2.0
// The conv1d_update family's descriptor: its fields (name grammar, ranges, standard matrix), its
// kernel source and its two kernels (wide and narrow).
#include <array>
#include <string>
#include <vector>

#include "conv1d_update/conv1d_update_params.cuh"
#include "spec/family.hpp"
#include "stamp/template_args.hpp"

namespace wyjit {

namespace {

using detail::field;
using detail::FieldDef;

constexpr std::array<const char*, 2> kRollbackNames = {"intermediate", "window"};
// Role order: the launch plan names the kernel by its index (conv1d_update_launch.cpp).
constexpr std::array<std::string_view, 2> kRoles = {"wide", "narrow"};

// conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]
// NOTE: the standard matrix is bf16 only, as the shipped checkpoints (Qwen3-Next, Qwen3.5) run
// it: with every io dtype `wyjit precompile --all --arch sm_90` took 62.6 s on 2 cores, past the
// 60 s asked of it (docs/cli.md). Weights in the io dtype, SiLU, no bias (their GDN layers build
// the conv as nn.Conv1d(..., bias=False)), both rollback forms.
constexpr std::array<FieldDef<Conv1dUpdateSpec>, 8> kFields = {
    field<&Conv1dUpdateSpec::k>({.name = "k",
                                 .label = "K",
                                 .kind = FieldKind::integer,
                                 .spelling = "k",
                                 .min = 1,
                                 .max = 32,
                                 .default_value = 4,
                                 .standard = "1-17",
                                 .doc = "tokens per sequence"}),
    field<&Conv1dUpdateSpec::io>({.name = "io",
                                  .label = "io dtype",
                                  .kind = FieldKind::choice,
                                  .spelling = "io_",
                                  .choices = detail::kDTypeNames,
                                  .default_value = 2,
                                  .standard = "bf16",
                                  .doc = "dtype of x, y and the conv state"}),
    field<&Conv1dUpdateSpec::width>({.name = "width",
                                     .label = "width",
                                     .kind = FieldKind::integer,
                                     .spelling = "w",
                                     .min = 2,
                                     .max = 8,
                                     .default_value = 4,
                                     .doc = "filter width W"}),
    field<&Conv1dUpdateSpec::weight>({.name = "weight",
                                      .label = "weight dtype",
                                      .kind = FieldKind::choice,
                                      .spelling = "wt_",
                                      .choices = detail::kDTypeNames,
                                      .default_value = 0,
                                      .standard = "io",
                                      .same_as = "io",
                                      .doc = "dtype of weight and bias: the io dtype or f32"}),
    field<&Conv1dUpdateSpec::rollback>({.name = "rollback",
                                        .label = "rollback",
                                        .kind = FieldKind::choice,
                                        .spelling = "",
                                        .choices = kRollbackNames,
                                        .default_value = 0,
                                        .standard = "intermediate,window",
                                        .doc = "intermediate: a state per token; window: W-1+K "
                                               "inputs read from an offset"}),
    field<&Conv1dUpdateSpec::addressing>({.name = "addressing",
                                          .label = "addressing",
                                          .kind = FieldKind::choice,
                                          .spelling = "",
                                          .choices = detail::kAddressingNames,
                                          .default_value = 0,
                                          .standard = "strided,table,slot",
                                          .doc = "how a launch finds each sequence's states"}),
    field<&Conv1dUpdateSpec::bias>({.name = "bias",
                                    .label = "bias",
                                    .kind = FieldKind::flag,
                                    .spelling = "bias",
                                    .doc = "add a per-channel bias"}),
    field<&Conv1dUpdateSpec::silu>({.name = "silu",
                                    .label = "silu",
                                    .kind = FieldKind::flag,
                                    .spelling = "silu",
                                    .default_value = 0,
                                    .standard = "on",
                                    .doc = "apply SiLU to the output"}),
};

void check(const Conv1dUpdateSpec& s) {
  if (s.weight != s.io && s.weight != DType::f32) {
    detail::reject(s, "weight", to_string(s.weight),
                   std::string(to_string(s.io)) + " (the io dtype) or f32");
  }
}

const char* rollback_arg(Rollback r) {
  return r == Rollback::window ? "wyjit_kernels::kRollbackWindow"
                               : "wyjit_kernels::kRollbackIntermediate";
}

std::string name_expression(const Conv1dUpdateSpec& s, std::size_t role) {
  using detail::kernel_bool;
  using detail::kernel_type;
  const std::string config =
      detail::template_id("wyjit_kernels::Conv1dUpdateConfig",
                          {std::to_string(s.k), std::to_string(s.width), kernel_type(s.io),
                           kernel_type(s.weight), detail::kernel_addressing(s.addressing),
                           rollback_arg(s.rollback), kernel_bool(s.bias), kernel_bool(s.silu)});
  return detail::template_id(role == 0 ? "wyjit_kernels::conv1d_update_wide_kernel"
                                       : "wyjit_kernels::conv1d_update_narrow_kernel",
                             {config});
}

// NOTE: the wide kernel's window tiles stay under the 48 KiB that needs no opt-in (the launch
// plan sizes them so); the narrow one has none.
int max_dynamic_smem(const Conv1dUpdateSpec&, std::size_t) { return 0; }

// A GDN model's short convolution over q, k and v: in the model's dtype with its weights (the
// checkpoint's conv1d.weight), of its kernel width, SiLU after it and no bias
// (nn.Conv1d(..., bias=False) in Qwen3-Next's and Qwen3.5's GDN layers).
std::vector<detail::ModelFieldValue> model_values(const detail::GdnModel& m) {
  return {
      {"io", static_cast<int>(m.dtype.value), m.dtype.source(), true},
      {"weight", static_cast<int>(m.dtype.value), m.dtype.source(), true},
      {"width", m.conv_kernel.value, m.conv_kernel.source(), true},
      {"bias", 0, "every GDN layer's convolution has no bias", false},
      {"silu", 1, "every GDN layer applies SiLU after its convolution", false},
  };
}

}  // namespace

const char* to_string(Rollback r) noexcept {
  const auto i = static_cast<std::size_t>(r);
  return i < kRollbackNames.size() ? kRollbackNames[i] : "?";
}

const detail::Family& Conv1dUpdateSpec::family() noexcept {
  static const detail::TypedFamily<Conv1dUpdateSpec> kFamily({
      .name = "conv1d_update",
      .kernel_file = "conv1d_update/conv1d_update.cuh",
      .params_type = "wyjit_kernels::Conv1dUpdateParams",
      .roles = kRoles,
      .fields = kFields,
      .check = check,
      .name_expression = name_expression,
      .max_dynamic_smem = max_dynamic_smem,
      .model_values = model_values,
  });
  return kFamily;
}

}  // namespace wyjit
