// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`: which variants. Parses the command line and turns --all or the selectors
// into specs, family by family, from the families' field tables.
#include "cli/precompile_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "cli/precompile_model.hpp"
#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "wyjit/error.hpp"

namespace wyjit::cli {

namespace {

using detail::Family;
using detail::FieldValue;

constexpr const char* kCommand = "precompile";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// The families (in the standard order) that have field `field`.
std::vector<std::string> families_with(const std::string& field) {
  std::vector<std::string> out;
  for (const Family* f : detail::families()) {
    if (detail::field_index(*f, field) >= 0) out.emplace_back(f->name());
  }
  return out;
}

std::string selector_text(const FieldSelector& s) {
  return s.values.empty() ? s.option : s.option + " " + s.values;
}

// The values of `s` for field `i` of `family`: UsageError naming the option on a bad one.
std::vector<FieldValue> selector_values(const Family& family, std::size_t i,
                                        const FieldSelector& s) {
  try {
    return detail::parse_value_list(family, i, s.values.empty() ? "on" : s.values);
  } catch (const detail::FieldValueError& e) {
    throw UsageError(kCommand,
                     fmt::format("bad value '{}' for {}: {}", e.item(), s.option, e.reason()));
  }
}

// NOTE: every selector must name a field of a family that is built; a selector no family takes
// would otherwise be dropped without a word.
void resolve_families(PrecompileOptions& opt) {
  std::vector<std::string> all;
  for (const Family* f : detail::families()) all.emplace_back(f->name());
  for (const FieldSelector& s : opt.selectors) {
    if (families_with(s.field).empty()) {
      throw UsageError(kCommand, fmt::format("{}: no family has a field '{}'", s.option, s.field));
    }
  }
  if (!opt.families.empty()) {
    for (const FieldSelector& s : opt.selectors) {
      const std::vector<std::string> have = families_with(s.field);
      const bool built = std::any_of(have.begin(), have.end(), [&](const std::string& f) {
        return std::find(opt.families.begin(), opt.families.end(), f) != opt.families.end();
      });
      if (built) continue;
      throw UsageError(
          kCommand,
          fmt::format("{} selects {} variants, but --family is {}: add {} to "
                      "--family, or drop {}",
                      selector_text(s), join(have), join(opt.families), join(have), s.option));
    }
    return;
  }
  // A selector of a field only some families have limits the matrix to those families.
  std::set<std::string> named;
  for (const FieldSelector& s : opt.selectors) {
    const std::vector<std::string> have = families_with(s.field);
    if (have.size() < all.size()) named.insert(have.begin(), have.end());
  }
  for (const std::string& f : all) {
    if (named.empty() || named.count(f) != 0) opt.families.push_back(f);
  }
}

std::vector<std::string> parse_family_list(const std::string& text) {
  std::vector<std::string> out;
  std::vector<std::string> known;
  for (const Family* f : detail::families()) known.emplace_back(f->name());
  for (const std::string& item : split_list(kCommand, "--family", text)) {
    if (std::find(known.begin(), known.end(), item) == known.end()) {
      std::string allowed;
      for (const std::string& k : known) allowed += (allowed.empty() ? "" : ", ") + k;
      throw UsageError(
          kCommand, fmt::format("bad value '{}' for --family: expected one of {}", item, allowed));
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return out;
}

bool is_field(const std::string& name) { return !families_with(name).empty(); }

bool is_flag_everywhere(const std::string& field) {
  for (const Family* f : detail::families()) {
    const int i = detail::field_index(*f, field);
    if (i >= 0 && f->fields()[static_cast<std::size_t>(i)].kind != FieldKind::flag) return false;
  }
  return true;
}

}  // namespace

PrecompileOptions parse_precompile_options(std::span<const std::string> args) {
  const std::string cmd = kCommand;
  ArgReader reader(cmd, args);
  PrecompileOptions opt;
  bool custom = false;
  std::string value;
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
    if (parse_model_option(reader, opt)) continue;
    custom = true;
    if (reader.option("--family", value)) {
      opt.families = parse_family_list(value);
      continue;
    }
    if (reader.option("--set", value)) {
      const std::size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UsageError(cmd,
                         fmt::format("bad value '{}' for --set: expected FIELD=VALUES", value));
      }
      const std::string field = value.substr(0, eq);
      opt.selectors.push_back({"--set " + field, field, value.substr(eq + 1)});
      continue;
    }
    // `--FIELD VALUES` spells `--set FIELD=VALUES`; a flag field may stand alone (on).
    const std::string& next = reader.peek();
    const std::string name = next.starts_with("--") ? next.substr(2, next.find('=') - 2) : "";
    if (!name.empty() && is_field(name)) {
      const std::string option = "--" + name;
      const bool bare_flag = next.find('=') == std::string::npos && is_flag_everywhere(name) &&
                             !reader.next_is_value();
      if (bare_flag) {
        reader.flag(option);
        opt.selectors.push_back({option, name, ""});
      } else if (reader.option(option, value)) {
        opt.selectors.push_back({option, name, value});
      } else {
        // NOTE: `--FIELD=` is neither form and consumes nothing: without this refusal the loop
        // would read it forever.
        throw UsageError(cmd, fmt::format("bad value '' for {}: expected VALUES", option));
      }
      continue;
    }
    reader.reject();
  }
  if (opt.all && custom) {
    throw UsageError(cmd, "--all is the standard matrix: drop it, or drop the selectors");
  }
  if (opt.targets.empty()) throw UsageError(cmd, "missing --arch (e.g. --arch sm_90)");
  if (opt.jobs == 0) opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Every value is checked now, before anything is compiled or written.
  for (const FieldSelector& s : opt.selectors) {
    for (const Family* f : detail::families()) {
      const int i = detail::field_index(*f, s.field);
      if (i >= 0) selector_values(*f, static_cast<std::size_t>(i), s);
    }
  }
  if (!opt.all) resolve_families(opt);
  return opt;
}

std::vector<KernelSpec> selected_specs(const PrecompileOptions& opt) {
  if (opt.all) return standard_matrix();
  std::vector<KernelSpec> specs;
  for (const std::string& name : opt.families) {
    const Family& family = *detail::find_family(name);
    std::vector<std::vector<FieldValue>> values;
    for (std::size_t i = 0; i < family.fields().size(); ++i) {
      values.push_back(detail::standard_values(family, i));
    }
    for (const FieldSelector& s : opt.selectors) {
      const int i = detail::field_index(family, s.field);
      if (i >= 0) {
        values[static_cast<std::size_t>(i)] =
            selector_values(family, static_cast<std::size_t>(i), s);
      }
    }
    const std::vector<KernelSpec> part = detail::product(family, values);
    specs.insert(specs.end(), part.begin(), part.end());
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

// The standard values of a field as --set spells them, consecutive numbers as ranges (1-17).
std::string standard_text(const Family& f, std::size_t i) {
  std::vector<std::string> items;
  const std::vector<FieldValue> values = detail::standard_values(f, i);
  for (std::size_t at = 0; at < values.size(); ++at) {
    const FieldValue& v = values[at];
    if (v.same_as >= 0) {
      items.emplace_back(f.fields()[static_cast<std::size_t>(v.same_as)].name);
      continue;
    }
    std::size_t end = at;
    while (f.fields()[i].kind == FieldKind::integer && end + 1 < values.size() &&
           values[end + 1].same_as < 0 && values[end + 1].value == values[end].value + 1) {
      ++end;
    }
    items.push_back(end > at + 1 ? fmt::format("{}-{}", v.value, values[end].value)
                                 : detail::value_text(f, i, v.value));
    if (end == at + 1) items.push_back(detail::value_text(f, i, values[end].value));
    at = end;
  }
  return join(items);
}

std::string selector_help() {
  std::string out;
  for (const Family* f : detail::families()) {
    out += fmt::format("{}:\n", f->name());
    for (std::size_t i = 0; i < f->fields().size(); ++i) {
      const FieldInfo& field = f->fields()[i];
      out += fmt::format("  --{:<17} {}\n  {:<19} {}; standard: {}\n", field.name, field.doc, "",
                         detail::allowed_text(field), standard_text(*f, i));
    }
  }
  return out;
}

}  // namespace wyjit::cli
