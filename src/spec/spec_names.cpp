// SPDX-License-Identifier: Apache-2.0
// Canonical names of specs, for every family from its field table: format_spec / parse_spec,
// and the field-level access (field_value, make_spec) the C API and the CLI use.
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

using detail::Family;

const char* to_string(DType t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < detail::kDTypeNames.size() ? detail::kDTypeNames[i] : "?";
}

const char* to_string(Addressing a) noexcept {
  const auto i = static_cast<std::size_t>(a);
  return i < detail::kAddressingNames.size() ? detail::kAddressingNames[i] : "?";
}

const char* to_string(Layout l) noexcept {
  const auto i = static_cast<std::size_t>(l);
  return i < detail::kLayoutNames.size() ? detail::kLayoutNames[i] : "?";
}

int dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
  }
  return 0;
}

namespace {

bool is_flag(const FieldInfo& f) { return f.kind == FieldKind::flag; }

}  // namespace

std::string format_spec(const KernelSpec& spec) {
  const Family& family = detail::family_of(spec);
  const auto fields = family.fields();
  std::string name(family.name());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    const int v = family.get(spec, i);
    if (is_flag(f)) {
      if (v != 0) (name += '.') += f.spelling;
      continue;
    }
    if (f.merged_spelling != nullptr && i + 1 < fields.size() && family.get(spec, i + 1) == v) {
      (name += '.') += f.merged_spelling + std::to_string(v);
      ++i;
      continue;
    }
    (name += '.') += f.spelling + detail::value_text(family, i, v);
  }
  return name;
}

namespace {

[[noreturn]] void reject_name(std::string_view name, std::string_view label, std::string_view got,
                              std::string_view allowed) {
  throw Error(ErrorCode::invalid_spec, "invalid variant name '" + std::string(name) +
                                           "': " + std::string(label) + " is '" + std::string(got) +
                                           "', allowed: " + std::string(allowed));
}

std::vector<std::string_view> split_dots(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// The decimal number after `prefix` in `part` (canonical: no sign, no leading zeros).
bool parse_prefixed_int(std::string_view part, std::string_view prefix, int& value) {
  if (!part.starts_with(prefix) || part.size() == prefix.size()) return false;
  const std::string_view digits = part.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// What a part of field `f` may look like, for messages: `k1..k32`, `io_f32, io_f16, io_bf16`.
std::string spelled_allowed(const FieldInfo& f, const FieldInfo* next) {
  const std::string p = f.spelling;
  std::string out;
  const auto add = [&](const std::string& item) {
    if (!out.empty()) out += ", ";
    out += item;
  };
  if (f.kind == FieldKind::choice) {
    for (const char* c : f.choices) add(p + c);
    return out;
  }
  if (f.allowed.empty()) {
    out = p + std::to_string(f.min) + ".." + p + std::to_string(f.max);
  } else {
    for (const int v : f.allowed) add(p + std::to_string(v));
  }
  if (f.merged_spelling != nullptr && next != nullptr) {
    out = std::string(f.merged_spelling) + "N (" + f.name + " = " + next->name + " = N) or " + p +
          "A." + next->spelling + "B";
  }
  return out;
}

std::string family_list() {
  std::string out;
  for (const Family* f : detail::families()) {
    if (!out.empty()) out += ", ";
    out += f->name();
  }
  return out;
}

}  // namespace

KernelSpec parse_spec(std::string_view name) {
  const std::vector<std::string_view> parts = split_dots(name);
  const Family* family = detail::find_family(parts[0]);
  if (family == nullptr) reject_name(name, "family", parts[0], family_list());
  KernelSpec spec = family->make();
  const auto fields = family->fields();
  const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };
  std::size_t at = 1;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    if (is_flag(f)) continue;
    const std::string_view p = part(at);
    const FieldInfo* next = i + 1 < fields.size() ? &fields[i + 1] : nullptr;
    int v = 0;
    if (f.kind == FieldKind::integer) {
      if (parse_prefixed_int(p, f.spelling, v)) {
        family->set(spec, i, v);
      } else if (f.merged_spelling != nullptr && next != nullptr &&
                 parse_prefixed_int(p, f.merged_spelling, v)) {
        family->set(spec, i, v);
        family->set(spec, i + 1, v);
        ++i;
      } else {
        reject_name(name, f.label, p, spelled_allowed(f, next));
      }
    } else {
      const std::string_view prefix = f.spelling;
      bool found = false;
      if (p.starts_with(prefix)) {
        for (std::size_t c = 0; c < f.choices.size() && !found; ++c) {
          if (p.substr(prefix.size()) == f.choices[c]) {
            family->set(spec, i, static_cast<int>(c));
            found = true;
          }
        }
      }
      if (!found) reject_name(name, f.label, p, spelled_allowed(f, next));
    }
    ++at;
  }
  std::string options;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!is_flag(fields[i])) continue;
    if (!options.empty()) options += ", ";
    options += fields[i].spelling;
    if (at < parts.size() && parts[at] == fields[i].spelling) {
      family->set(spec, i, 1);
      ++at;
    }
  }
  if (at < parts.size()) {
    reject_name(
        name, "option", parts[at],
        options.empty() ? std::string("none") : options + " (at most once each, in that order)");
  }
  validate_spec(spec);
  // NOTE: a name that parses but is not canonical (e.g. "dk128.dv128") would give two names
  // for one variant; refuse it so names are unique.
  const std::string canonical = format_spec(spec);
  if (canonical != name) reject_name(name, "spelling", name, "the canonical name " + canonical);
  return spec;
}

std::string_view family_name(const KernelSpec& spec) noexcept {
  return detail::family_of(spec).name();
}

std::vector<std::string_view> family_names() {
  std::vector<std::string_view> names;
  for (const Family* f : detail::families()) names.push_back(f->name());
  return names;
}

namespace {

const Family& family_named(std::string_view name) {
  const Family* f = detail::find_family(name);
  if (f == nullptr) {
    throw Error(ErrorCode::invalid_spec,
                "family is '" + std::string(name) + "', allowed: " + family_list());
  }
  return *f;
}

int field_named(const Family& family, std::string_view field) {
  const int i = detail::field_index(family, field);
  if (i < 0) {
    std::string fields;
    for (const FieldInfo& f : family.fields()) {
      if (!fields.empty()) fields += ", ";
      fields += f.name;
    }
    throw Error(ErrorCode::invalid_spec, std::string(family.name()) + " has no field '" +
                                             std::string(field) + "'; its fields: " + fields);
  }
  return i;
}

}  // namespace

std::span<const FieldInfo> family_fields(std::string_view family) {
  return family_named(family).fields();
}

std::string field_value(const KernelSpec& spec, std::string_view field) {
  const Family& family = detail::family_of(spec);
  if (field == "family") return std::string(family.name());
  const auto i = static_cast<std::size_t>(field_named(family, field));
  return detail::value_text(family, i, family.get(spec, i));
}

KernelSpec make_spec(std::string_view family_text,
                     std::span<const std::pair<std::string, std::string>> fields) {
  const Family& family = family_named(family_text);
  std::vector<std::vector<detail::FieldValue>> values(family.fields().size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = {detail::FieldValue{family.fields()[i].default_value, -1}};
  }
  for (const auto& [field, text] : fields) {
    const auto i = static_cast<std::size_t>(field_named(family, field));
    values[i] = {detail::parse_value(family, i, text)};
  }
  KernelSpec spec = family.make();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i][0].same_as < 0) family.set(spec, i, values[i][0].value);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int other = values[i][0].same_as;
    if (other >= 0) family.set(spec, i, family.get(spec, static_cast<std::size_t>(other)));
  }
  validate_spec(spec);
  return spec;
}

}  // namespace wyjit
