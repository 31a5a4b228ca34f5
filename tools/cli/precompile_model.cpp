// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile --model`: a GDN model's config -> the variants its layers need.
#include "cli/precompile_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "wyjit/error.hpp"

namespace wyjit::cli {

namespace {

using detail::Family;
using detail::FieldValue;
using detail::ModelFieldValue;

constexpr const char* kCommand = "precompile";

const char* dtype_name(DType t) { return to_string(t); }

// The value of `s` for the field, resolved: one value, or -1 when it names several.
int single_value(const std::vector<FieldValue>& given, const std::vector<ModelFieldValue>& model,
                 const Family& family) {
  if (given.size() != 1) return -1;
  if (given[0].same_as < 0) return given[0].value;
  // `--weight io`: the value the model fixes for that other field, if it fixes one.
  const std::string_view other = family.fields()[static_cast<std::size_t>(given[0].same_as)].name;
  for (const ModelFieldValue& m : model) {
    if (m.field == other) return m.value;
  }
  return -1;
}

// The variants of one family: standard values, then the model's, then the selectors'.
std::vector<KernelSpec> family_specs(const Family& family, const PrecompileOptions& opt,
                                     const std::vector<ModelFieldValue>& model) {
  std::vector<std::vector<FieldValue>> values;
  for (std::size_t i = 0; i < family.fields().size(); ++i) {
    values.push_back(detail::standard_values(family, i));
  }
  for (const ModelFieldValue& m : model) {
    const int i = detail::field_index(family, m.field);
    if (i < 0) {
      throw Error(ErrorCode::internal,
                  fmt::format("{}'s model values name no field '{}'", family.name(), m.field));
    }
    values[static_cast<std::size_t>(i)] = {FieldValue{.value = m.value}};
  }
  for (const FieldSelector& s : opt.selectors) {
    const int i = detail::field_index(family, s.field);
    if (i < 0) continue;
    const auto at = static_cast<std::size_t>(i);
    const std::vector<FieldValue> given =
        detail::parse_value_list(family, at, s.values.empty() ? "on" : s.values);
    for (const ModelFieldValue& m : model) {
      if (m.field != s.field || !m.from_config) continue;
      if (single_value(given, model, family) != m.value) {
        throw UsageError(kCommand,
                         fmt::format("{}{} contradicts the model: {} makes {}'s {} {}; drop {}",
                                     s.option, s.values.empty() ? "" : " " + s.values, m.source,
                                     family.name(), family.fields()[at].label,
                                     detail::value_text(family, at, m.value), s.option));
      }
    }
    values[at] = given;
  }
  return detail::product(family, values);
}

std::string state_text(const detail::GdnModel& m) {
  return m.state_dtype ? m.state_dtype->source()
                       : "no mamba_ssm_dtype (state: the standard matrix's f32, or --state)";
}

}  // namespace

bool parse_model_option(ArgReader& reader, PrecompileOptions& opt) {
  std::string value;
  if (reader.option("--model", value)) {
    if (value.empty()) throw UsageError(kCommand, "bad value '' for --model: empty path");
    opt.model = value;
    return true;
  }
  if (reader.option("--tp", value)) {
    for (const std::string& item : split_list(kCommand, "--tp", value)) {
      const int tp = parse_int(kCommand, "--tp", item, 1, 1024);
      if (std::find(opt.tps.begin(), opt.tps.end(), tp) == opt.tps.end()) opt.tps.push_back(tp);
    }
    return true;
  }
  if (reader.flag("--dry-run")) {
    opt.dry_run = true;
    return true;
  }
  return false;
}

void check_model_options(const PrecompileOptions& opt) {
  if (opt.model.empty() && !opt.tps.empty()) {
    throw UsageError(kCommand, "--tp splits a model's heads: give --model config.json too");
  }
}

ModelPlan plan_model(const PrecompileOptions& opt) {
  if (opt.all) {
    throw UsageError(kCommand,
                     "--all is the standard matrix and --model a model's variants: "
                     "give one of them");
  }
  ModelPlan plan;
  try {
    plan.model = detail::read_gdn_model(opt.model);
  } catch (const Error& e) {
    throw UsageError(kCommand, fmt::format("--model: {}", e.what()));
  }
  for (const int tp : opt.tps.empty() ? std::vector<int>{1} : opt.tps) {
    try {
      plan.shards.push_back(detail::shard_gdn_model(plan.model, tp));
    } catch (const Error& e) {
      throw UsageError(kCommand, fmt::format("--tp {}: {}", tp, e.what()));
    }
  }
  std::set<KernelSpec> seen;
  std::vector<std::string> used;
  for (const std::string& name : opt.families) {
    const Family& family = *detail::find_family(name);
    const std::vector<ModelFieldValue> model = family.model_values(plan.model);
    if (model.empty()) continue;  // the family has no part in a GDN model
    used.push_back(name);
    for (const KernelSpec& spec : family_specs(family, opt, model)) {
      if (seen.insert(spec).second) plan.specs.push_back(spec);
    }
  }
  if (used.empty()) {
    std::string families;
    for (const std::string& f : opt.families) families += (families.empty() ? "" : ",") + f;
    throw UsageError(kCommand, fmt::format("--model: no family of {} has a part in a GDN model's "
                                           "layers",
                                           families));
  }
  return plan;
}

void print_model_plan(const ModelPlan& plan) {
  const detail::GdnModel& m = plan.model;
  std::string layers;
  if (m.gdn_layers && m.layers) {
    layers = fmt::format(": {} GDN layers of {}", *m.gdn_layers, *m.layers);
  } else if (m.gdn_layers) {
    layers = fmt::format(": {} GDN layers", *m.gdn_layers);
  }
  fmt::print("model {} ({}){}\n", m.model_type.empty() ? "?" : m.model_type, m.path, layers);
  fmt::print("  {}, {}, {}, {}, {}, {}, {}\n", m.num_key_heads.source(), m.num_value_heads.source(),
             m.key_head_dim.source(), m.value_head_dim.source(), m.conv_kernel.source(),
             m.dtype.source(), state_text(m));
  for (const detail::GdnShard& s : plan.shards) {
    fmt::print("  tp {}: {} key heads, {} value heads, {} conv channels per rank\n", s.tp,
               s.num_key_heads, s.num_value_heads, s.conv_channels);
  }
  fmt::print("{} variants (head counts are launch arguments: every tp above runs the same)\n",
             plan.specs.size());
}

nlohmann::ordered_json model_plan_json(const ModelPlan& plan) {
  const detail::GdnModel& m = plan.model;
  nlohmann::ordered_json doc;
  doc["path"] = m.path;
  doc["model_type"] = m.model_type;
  doc["layers"] = m.layers ? nlohmann::ordered_json(*m.layers) : nlohmann::ordered_json();
  doc["gdn_layers"] =
      m.gdn_layers ? nlohmann::ordered_json(*m.gdn_layers) : nlohmann::ordered_json();
  doc["num_key_heads"] = m.num_key_heads.value;
  doc["num_value_heads"] = m.num_value_heads.value;
  doc["key_head_dim"] = m.key_head_dim.value;
  doc["value_head_dim"] = m.value_head_dim.value;
  doc["conv_kernel"] = m.conv_kernel.value;
  doc["dtype"] = dtype_name(m.dtype.value);
  doc["state_dtype"] =
      m.state_dtype ? nlohmann::ordered_json(dtype_name(m.state_dtype->value)) : nullptr;
  doc["shards"] = nlohmann::ordered_json::array();
  for (const detail::GdnShard& s : plan.shards) {
    doc["shards"].push_back({{"tp", s.tp},
                             {"num_key_heads", s.num_key_heads},
                             {"num_value_heads", s.num_value_heads},
                             {"conv_channels", s.conv_channels}});
  }
  return doc;
}

}  // namespace wyjit::cli
