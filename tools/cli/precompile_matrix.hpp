// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`'s command line and the variant matrix it selects: --all, or selectors over
// the families' fields (each one not given takes the standard matrix's values for its family).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::cli {

/// One field selector as given: `--set FIELD=VALUES`, or its spelling `--FIELD VALUES`
/// (`--FIELD` alone for a flag: on).
struct FieldSelector {
  std::string option;  ///< as given, for messages: `--rollback`, `--set rollback`
  std::string field;   ///< `rollback`
  std::string values;  ///< `window`, `1-17,32`, `on`
};

struct PrecompileOptions {
  std::vector<Target> targets;
  std::string cache_dir;
  int jobs = 0;
  bool json = false;

  bool all = false;
  /// The families to build (`--family`, else those the selectors of fields only some families
  /// have name, else every family). Never empty after parse_precompile_options.
  std::vector<std::string> families;
  std::vector<FieldSelector> selectors;

  /// `--model config.json`: the variants that model's GDN layers need (precompile_model.hpp),
  /// the selectors narrowing or extending what the model leaves open; empty: none.
  std::string model;
  /// `--tp LIST`: the tensor-parallel degrees the model must split into (default: 1).
  std::vector<int> tps;
  /// `--dry-run`: print the variants and compile nothing.
  bool dry_run = false;
};

/// Parses `precompile`'s arguments (not --help). Throws UsageError naming the option and the
/// value it refused: an unknown option or field, a bad value, --all with a selector, no --arch,
/// a selector of a field no family of --family has.
PrecompileOptions parse_precompile_options(std::span<const std::string> args);

/// The variants `opt` selects, family by family in the standard matrix's order, each once,
/// those validate_spec refuses left out.
std::vector<KernelSpec> selected_specs(const PrecompileOptions& opt);

/// The selector part of `precompile --help`, from the families' field tables.
std::string selector_help();

}  // namespace wyjit::cli
