// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`: which variants. Parses the command line and turns --all or the selectors
// into specs, family by family.
#include "cli/precompile_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cli/cli.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kCommand = "precompile";

std::vector<WeightChoice> parse_weight_list(const std::string& text) {
  std::vector<WeightChoice> out;
  for (const std::string& item : split_list(kCommand, "--weight", text)) {
    WeightChoice choice = WeightChoice::io;
    if (item == "io") {
      choice = WeightChoice::io;
    } else if (item == "f32") {
      choice = WeightChoice::f32;
    } else {
      throw UsageError(kCommand, fmt::format("bad value '{}' for --weight: expected io (the io "
                                             "dtype) or f32",
                                             item));
    }
    if (std::find(out.begin(), out.end(), choice) == out.end()) out.push_back(choice);
  }
  return out;
}

std::string family_names(const std::vector<Family>& families) {
  std::string out;
  for (const Family f : families) out += fmt::format("{}{}", out.empty() ? "" : ",", to_string(f));
  return out;
}

bool has(const std::vector<Family>& families, Family f) {
  return std::find(families.begin(), families.end(), f) != families.end();
}

// The families of the standard matrix, in its order.
std::vector<Family> standard_families(const std::vector<KernelSpec>& standard) {
  std::vector<Family> families;
  for (const KernelSpec& s : standard) {
    if (!has(families, s.family)) families.push_back(s.family);
  }
  return families;
}

// NOTE: every family-only selector must name a family that is built; a selector no family
// takes would otherwise be dropped without a word.
void resolve_families(PrecompileOptions& opt) {
  const std::vector<Family> standard = standard_families(standard_matrix());
  if (!opt.families.empty()) {
    for (const FamilySelector& s : opt.family_selectors) {
      if (has(opt.families, s.family)) continue;
      const std::string given = s.value.empty() ? s.flag : s.flag + " " + s.value;
      throw UsageError(kCommand,
                       fmt::format("{} selects {} variants, but --family is {}: add {} to "
                                   "--family, or drop {}",
                                   given, to_string(s.family), family_names(opt.families),
                                   to_string(s.family), s.flag));
    }
    return;
  }
  for (const Family f : standard) {
    const bool named = std::any_of(opt.family_selectors.begin(), opt.family_selectors.end(),
                                   [&](const FamilySelector& s) { return s.family == f; });
    if (named) opt.families.push_back(f);
  }
  if (opt.families.empty()) opt.families = standard;
}

// `given` when a selector gave values, else the distinct values of `field` in `standard`.
template <typename T, typename Field>
std::vector<T> values_or_standard(const std::vector<T>& given,
                                  const std::vector<KernelSpec>& standard, Field field) {
  if (!given.empty()) return given;
  std::vector<T> values;
  for (const KernelSpec& s : standard) {
    const T v = field(s);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

void append_gdn_verify(const PrecompileOptions& opt, const std::vector<KernelSpec>& standard,
                       std::vector<KernelSpec>& specs) {
  const auto ks = values_or_standard(opt.ks, standard, [](const KernelSpec& s) { return s.k; });
  const auto ios = values_or_standard(opt.ios, standard, [](const KernelSpec& s) { return s.io; });
  const auto states =
      values_or_standard(opt.states, standard, [](const KernelSpec& s) { return s.state; });
  const auto addressings = values_or_standard(opt.addressings, standard,
                                              [](const KernelSpec& s) { return s.addressing; });
  const auto layouts =
      values_or_standard(opt.layouts, standard, [](const KernelSpec& s) { return s.layout; });
  const auto dks = values_or_standard(opt.dks, standard, [](const KernelSpec& s) { return s.dk; });
  const auto dvs = values_or_standard(opt.dvs, standard, [](const KernelSpec& s) { return s.dv; });
  for (const DType io : ios) {
    for (const DType state : states) {
      for (const Addressing addressing : addressings) {
        for (const Layout layout : layouts) {
          for (const int dk : dks) {
            for (const int dv : dvs) {
              for (const int k : ks) {
                specs.push_back({.family = Family::gdn_verify,
                                 .k = k,
                                 .io = io,
                                 .state = state,
                                 .addressing = addressing,
                                 .layout = layout,
                                 .dk = dk,
                                 .dv = dv,
                                 .l2norm_qk = opt.l2norm,
                                 .fused_gating = opt.gating});
              }
            }
          }
        }
      }
    }
  }
}

void append_conv1d_update(const PrecompileOptions& opt, const std::vector<KernelSpec>& standard,
                          std::vector<KernelSpec>& specs) {
  const auto ks = values_or_standard(opt.ks, standard, [](const KernelSpec& s) { return s.k; });
  const auto ios = values_or_standard(opt.ios, standard, [](const KernelSpec& s) { return s.io; });
  const auto addressings = values_or_standard(opt.addressings, standard,
                                              [](const KernelSpec& s) { return s.addressing; });
  const auto widths =
      values_or_standard(opt.widths, standard, [](const KernelSpec& s) { return s.width; });
  const auto weights = values_or_standard(opt.weights, standard, [](const KernelSpec& s) {
    return s.weight == s.io ? WeightChoice::io : WeightChoice::f32;
  });
  const auto biases =
      values_or_standard(opt.biases, standard, [](const KernelSpec& s) { return s.bias; });
  const auto silus =
      values_or_standard(opt.silus, standard, [](const KernelSpec& s) { return s.silu; });
  const auto rollbacks =
      values_or_standard(opt.rollbacks, standard, [](const KernelSpec& s) { return s.rollback; });
  for (const DType io : ios) {
    for (const int width : widths) {
      for (const WeightChoice weight : weights) {
        for (const Rollback rollback : rollbacks) {
          for (const Addressing addressing : addressings) {
            for (const bool bias : biases) {
              for (const bool silu : silus) {
                for (const int k : ks) {
                  specs.push_back({.family = Family::conv1d_update,
                                   .k = k,
                                   .io = io,
                                   .addressing = addressing,
                                   .width = width,
                                   .weight = weight == WeightChoice::io ? io : DType::f32,
                                   .bias = bias,
                                   .silu = silu,
                                   .rollback = rollback});
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

PrecompileOptions parse_precompile_options(std::span<const std::string> args) {
  const std::string cmd = kCommand;
  ArgReader reader(cmd, args);
  PrecompileOptions opt;
  bool custom = false;
  std::string value;
  // A family-only selector: remembered with its value, checked against --family at the end.
  const auto only = [&](Family family, std::string_view flag, const std::string& given) {
    opt.family_selectors.push_back({std::string(flag), given, family});
  };
  while (!reader.done()) {
    if (reader.option("--arch", value)) {
      for (const std::string& item : split_list(cmd, "--arch", value)) {
        const Target t = parse_target(cmd, item);
        if (std::find(opt.targets.begin(), opt.targets.end(), t) == opt.targets.end()) {
          opt.targets.push_back(t);
        }
      }
      continue;
    }
    if (reader.option("--cache-dir", value)) {
      if (value.empty()) throw UsageError(cmd, "bad value '' for --cache-dir: empty path");
      opt.cache_dir = value;
      continue;
    }
    if (reader.option("--jobs", value, "-j")) {
      opt.jobs = parse_int(cmd, "--jobs", value, 1, 1024);
      continue;
    }
    if (reader.flag("--all")) {
      opt.all = true;
      continue;
    }
    if (reader.flag("--json")) {
      opt.json = true;
      continue;
    }
    custom = true;
    if (reader.option("--family", value)) {
      opt.families = parse_family_list(cmd, value);
    } else if (reader.option("--k", value)) {
      opt.ks = parse_k_list(cmd, value);
    } else if (reader.option("--io", value)) {
      opt.ios = parse_dtype_list(cmd, "--io", value);
    } else if (reader.option("--addressing", value)) {
      opt.addressings = parse_addressing_list(cmd, value);
    } else if (reader.option("--state", value)) {
      opt.states = parse_dtype_list(cmd, "--state", value);
      only(Family::gdn_verify, "--state", value);
    } else if (reader.option("--layout", value)) {
      opt.layouts = parse_layout_list(cmd, value);
      only(Family::gdn_verify, "--layout", value);
    } else if (reader.option("--dk", value)) {
      opt.dks = parse_dim_list(cmd, "--dk", value);
      only(Family::gdn_verify, "--dk", value);
    } else if (reader.option("--dv", value)) {
      opt.dvs = parse_dim_list(cmd, "--dv", value);
      only(Family::gdn_verify, "--dv", value);
    } else if (reader.flag("--l2norm")) {
      opt.l2norm = true;
      only(Family::gdn_verify, "--l2norm", "");
    } else if (reader.flag("--gating")) {
      opt.gating = true;
      only(Family::gdn_verify, "--gating", "");
    } else if (reader.option("--width", value)) {
      opt.widths = parse_width_list(cmd, value);
      only(Family::conv1d_update, "--width", value);
    } else if (reader.option("--weight", value)) {
      opt.weights = parse_weight_list(value);
      only(Family::conv1d_update, "--weight", value);
    } else if (reader.option("--bias", value)) {
      opt.biases = parse_switch_list(cmd, "--bias", value);
      only(Family::conv1d_update, "--bias", value);
    } else if (reader.option("--silu", value)) {
      opt.silus = parse_switch_list(cmd, "--silu", value);
      only(Family::conv1d_update, "--silu", value);
    } else if (reader.option("--rollback", value)) {
      opt.rollbacks = parse_rollback_list(cmd, value);
      only(Family::conv1d_update, "--rollback", value);
    } else {
      reader.reject();
    }
  }
  if (opt.all && custom) {
    throw UsageError(cmd, "--all is the standard matrix: drop it, or drop the selectors");
  }
  if (opt.targets.empty()) throw UsageError(cmd, "missing --arch (e.g. --arch sm_90)");
  if (opt.jobs == 0) opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!opt.all) resolve_families(opt);
  return opt;
}

std::vector<KernelSpec> selected_specs(const PrecompileOptions& opt) {
  const std::vector<KernelSpec> standard = standard_matrix();
  if (opt.all) return standard;
  std::vector<KernelSpec> specs;
  for (const Family family : opt.families) {
    std::vector<KernelSpec> family_standard;
    std::copy_if(standard.begin(), standard.end(), std::back_inserter(family_standard),
                 [&](const KernelSpec& s) { return s.family == family; });
    // NOTE: a family with no standard variant takes KernelSpec's defaults for what is not given.
    if (family_standard.empty()) family_standard.push_back(KernelSpec{.family = family});
    switch (family) {
      case Family::gdn_verify:
        append_gdn_verify(opt, family_standard, specs);
        break;
      case Family::conv1d_update:
        append_conv1d_update(opt, family_standard, specs);
        break;
    }
  }
  // NOTE: selector values can name one variant twice (`--io f32 --weight io,f32`); keep the
  // first, so that no variant is compiled or reported twice.
  std::vector<KernelSpec> unique;
  std::set<KernelSpec> seen;
  for (const KernelSpec& s : specs) {
    if (seen.insert(s).second) unique.push_back(s);
  }
  return unique;
}

}  // namespace wyjit::cli
