// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile --model config.json [--tp LIST]`: the variants a GDN model's layers need,
// from the fields the model fixes in each family (Family::model_values), the selectors given and
// the standard matrix's values for the rest; checked against each tensor-parallel degree.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "cli/cli.hpp"
#include "cli/precompile_matrix.hpp"
#include "spec/gdn_model.hpp"

namespace wyjit::cli {

/// Consumes `--model PATH`, `--tp LIST` or `--dry-run` when it is the next argument.
bool parse_model_option(ArgReader& reader, PrecompileOptions& opt);

struct ModelPlan {
  detail::GdnModel model;
  std::vector<detail::GdnShard> shards;  ///< one per --tp degree
  std::vector<KernelSpec> specs;         ///< family by family, each variant once
};

/// The plan for `opt.model`. Throws UsageError naming the file, the field and the value: a bad
/// config, a degree that does not divide the heads, a selector that contradicts a value the
/// config fixes, --all or --family of a family no model uses.
ModelPlan plan_model(const PrecompileOptions& opt);

/// Checks the options that only a model gives meaning to (--tp without --model).
void check_model_options(const PrecompileOptions& opt);

/// The model and each rank's shapes, for people (before the variants are compiled).
void print_model_plan(const ModelPlan& plan);

/// The same, for `--json`'s "model" member.
nlohmann::ordered_json model_plan_json(const ModelPlan& plan);

}  // namespace wyjit::cli
