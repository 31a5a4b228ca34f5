// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`'s command line and the variant matrix it selects: --all, or family-aware
// selectors (each one not given takes the standard matrix's values for its family).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::cli {

/// The dtype of a conv1d_update variant's weights, relative to its io dtype.
enum class WeightChoice {
  io,   ///< the io dtype (`--weight io`)
  f32,  ///< fp32 whatever the io dtype (`--weight f32`)
};

/// A selector that applies to one family only, as given on the command line.
struct FamilySelector {
  std::string flag;   ///< e.g. `--rollback`
  std::string value;  ///< e.g. `window`; empty for a flag such as `--l2norm`
  Family family = Family::gdn_verify;
};

struct PrecompileOptions {
  std::vector<Target> targets;
  std::string cache_dir;
  int jobs = 0;
  bool json = false;

  bool all = false;
  /// The families to build: `--family`, else those the family-only selectors name, else every
  /// family of the standard matrix. Never empty after parse_precompile_options.
  std::vector<Family> families;
  // Every family. Empty: the standard matrix's values.
  std::vector<int> ks;
  std::vector<DType> ios;
  std::vector<Addressing> addressings;
  // gdn_verify only.
  std::vector<DType> states;
  std::vector<Layout> layouts;
  std::vector<int> dks;
  std::vector<int> dvs;
  bool l2norm = false;
  bool gating = false;
  // conv1d_update only.
  std::vector<int> widths;
  std::vector<WeightChoice> weights;
  std::vector<bool> biases;
  std::vector<bool> silus;
  std::vector<Rollback> rollbacks;

  std::vector<FamilySelector> family_selectors;
};

/// Parses `precompile`'s arguments (not --help). Throws UsageError naming the option and the
/// value it refused: an unknown option, a bad value, --all with a selector, no --arch, a
/// family-only selector for a family --family leaves out.
PrecompileOptions parse_precompile_options(std::span<const std::string> args);

/// The variants `opt` selects, family by family in the standard matrix's order, each once; not
/// yet validated.
std::vector<KernelSpec> selected_specs(const PrecompileOptions& opt);

}  // namespace wyjit::cli
