// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: canonical variant names, the families' field tables and target names.
//
// Input: one mode byte, then
//   0  a variant name: whatever parses formats back to itself, validates, and is rebuilt from its
//      field values (make_spec); whatever does not parse is refused with invalid_spec, in C++ and
//      through the C API alike
//   1  a family byte, a field byte, then a value list as `--set` spells it (`1-17,32`): a list
//      that parses holds only values of the field, each once, and every variant of the product
//      with the other fields' standard values round-trips through its name
//   2  a family byte, then `field=value` lines: make_spec either refuses them with invalid_spec
//      or builds a valid variant holding exactly those values; wyjit_spec_build agrees
//   3  a target name (`sm_90a`): whatever parses prints back to itself
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_support.hpp"
#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

using wyjit::ErrorCode;
using wyjit::FieldInfo;
using wyjit::FieldKind;
using wyjit::KernelSpec;
using wyjit::detail::Family;
using wyjit::detail::FieldValue;

// NOTE: the product of a fuzzed list with the standard values of the other fields is built only
// up to this many variants, so that one input stays fast (a list may name all of K 1..64).
constexpr std::size_t kMaxProduct = 512;

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

// The C API's view of `name` (only for names without a NUL, which C cannot pass).
void check_c_api_name(const std::string& name, const KernelSpec* spec) {
  const wyjit_status status = wyjit_spec_validate(name.c_str());
  if (spec == nullptr) {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_ERROR_INVALID_SPEC, wyjit_status_name(status));
    WYJIT_FUZZ_REQUIRE(*wyjit_last_error() != '\0', "a refusal says why");
    return;
  }
  WYJIT_FUZZ_REQUIRE(status == WYJIT_OK, wyjit_last_error());
  // Text out: exactly length + 1 bytes fit; one byte less is refused and leaves the buffer as is.
  const std::string family(wyjit::family_name(*spec));
  std::size_t length = 0;
  WYJIT_FUZZ_REQUIRE(wyjit_spec_field(name.c_str(), "family", nullptr, 0, &length) == WYJIT_OK,
                     wyjit_last_error());
  WYJIT_FUZZ_REQUIRE(length == family.size(), name);
  std::string buffer(length + 1, '#');
  WYJIT_FUZZ_REQUIRE(wyjit_spec_field(name.c_str(), "family", buffer.data(), length, nullptr) ==
                         WYJIT_ERROR_INVALID_ARGUMENT,
                     name);
  WYJIT_FUZZ_REQUIRE(buffer == std::string(length + 1, '#'), "a refused buffer is untouched");
  WYJIT_FUZZ_REQUIRE(
      wyjit_spec_field(name.c_str(), "family", buffer.data(), length + 1, nullptr) == WYJIT_OK,
      wyjit_last_error());
  WYJIT_FUZZ_REQUIRE(buffer.c_str() == family, buffer);
}

void check_name(std::string_view name) {
  KernelSpec spec;
  try {
    spec = wyjit::parse_spec(name);
  } catch (const wyjit::Error& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == ErrorCode::invalid_spec, e.what());
    if (!has_nul(name)) check_c_api_name(std::string(name), nullptr);
    return;
  }
  const std::string canonical = wyjit::format_spec(spec);
  WYJIT_FUZZ_REQUIRE(canonical == name, canonical);
  wyjit::validate_spec(spec);  // NOTE: a throw here escapes: libFuzzer reports it as a crash
  // Rebuilt from its field values, through the family's field table.
  const std::string family(wyjit::family_name(spec));
  std::vector<std::pair<std::string, std::string>> fields;
  for (const FieldInfo& f : wyjit::family_fields(family)) {
    fields.emplace_back(f.name, wyjit::field_value(spec, f.name));
  }
  WYJIT_FUZZ_REQUIRE(wyjit::make_spec(family, fields) == spec, canonical);
  check_c_api_name(canonical, &spec);
}

// The value a FieldValue stands for in `spec` (same_as: the other field's).
int resolved(const Family& family, const KernelSpec& spec, const FieldValue& v) {
  return v.same_as >= 0 ? family.get(spec, static_cast<std::size_t>(v.same_as)) : v.value;
}

void check_value_list(const Family& family, std::size_t i, std::string_view text) {
  const FieldInfo& f = family.fields()[i];
  std::vector<FieldValue> values;
  try {
    values = wyjit::detail::parse_value_list(family, i, text);
  } catch (const wyjit::detail::FieldValueError& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == ErrorCode::invalid_spec, e.what());
    WYJIT_FUZZ_REQUIRE(!e.reason().empty(), e.what());
    return;
  }
  WYJIT_FUZZ_REQUIRE(!values.empty(), std::string(text));
  for (std::size_t at = 0; at < values.size(); ++at) {
    const FieldValue& v = values[at];
    WYJIT_FUZZ_REQUIRE(std::count(values.begin(), values.end(), v) == 1, "each value once");
    if (v.same_as >= 0) {
      WYJIT_FUZZ_REQUIRE(f.kind == FieldKind::choice && f.same_as != nullptr &&
                             v.same_as == wyjit::detail::field_index(family, f.same_as),
                         std::string(text));
      continue;
    }
    switch (f.kind) {
      case FieldKind::integer:
        WYJIT_FUZZ_REQUIRE(f.allowed.empty() ? v.value >= f.min && v.value <= f.max
                                             : std::find(f.allowed.begin(), f.allowed.end(),
                                                         v.value) != f.allowed.end(),
                           std::to_string(v.value));
        WYJIT_FUZZ_REQUIRE(at == 0 || values[at - 1].value < v.value, "integers ascend");
        break;
      case FieldKind::choice:
        WYJIT_FUZZ_REQUIRE(v.value >= 0 && static_cast<std::size_t>(v.value) < f.choices.size(),
                           std::to_string(v.value));
        break;
      case FieldKind::flag:
        WYJIT_FUZZ_REQUIRE(v.value == 0 || v.value == 1, std::to_string(v.value));
        break;
    }
    const std::string spelled = wyjit::detail::value_text(family, i, v.value);
    WYJIT_FUZZ_REQUIRE(wyjit::detail::parse_value(family, i, spelled) == v, spelled);
  }
  // The variants of that list with every other field at its standard values.
  std::vector<std::vector<FieldValue>> lists;
  std::size_t total = 1;
  for (std::size_t j = 0; j < family.fields().size(); ++j) {
    lists.push_back(j == i ? values : wyjit::detail::standard_values(family, j));
    total *= lists.back().size();
  }
  if (total > kMaxProduct) return;
  for (const KernelSpec& spec : wyjit::detail::product(family, lists)) {
    wyjit::validate_spec(spec);
    const std::string name = wyjit::format_spec(spec);
    WYJIT_FUZZ_REQUIRE(wyjit::parse_spec(name) == spec, name);
    const bool listed = std::any_of(values.begin(), values.end(), [&](const FieldValue& v) {
      return family.get(spec, i) == resolved(family, spec, v);
    });
    WYJIT_FUZZ_REQUIRE(listed, name + ": field " + f.name + " holds a value of the list");
  }
}

void check_make_spec(const Family& family, std::string_view text) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const std::string& line : wyjit::fuzz::split_at(text, '\n')) {
    const std::size_t eq = line.find('=');
    given.emplace_back(line.substr(0, eq), eq == std::string::npos ? "" : line.substr(eq + 1));
  }
  const std::string family_name(family.name());
  bool made = false;
  KernelSpec spec;
  try {
    spec = wyjit::make_spec(family_name, given);
    made = true;
  } catch (const wyjit::Error& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == ErrorCode::invalid_spec, e.what());
  }
  std::string name;
  if (made) {
    wyjit::validate_spec(spec);
    name = wyjit::format_spec(spec);
    WYJIT_FUZZ_REQUIRE(wyjit::parse_spec(name) == spec, name);
    // NOTE: a field given twice takes its last value, as make_spec documents nothing else.
    for (std::size_t g = 0; g < given.size(); ++g) {
      // NOTE: not a structured binding: clang 14 cannot capture one in a lambda.
      const std::string& field = given[g].first;
      const std::string& value = given[g].second;
      const bool later = std::any_of(given.begin() + static_cast<std::ptrdiff_t>(g) + 1,
                                     given.end(), [&](const auto& p) { return p.first == field; });
      if (later) continue;
      const auto i = static_cast<std::size_t>(wyjit::detail::field_index(family, field));
      const FieldValue v = wyjit::detail::parse_value(family, i, value);
      WYJIT_FUZZ_REQUIRE(family.get(spec, i) == resolved(family, spec, v), name + ": " + field);
    }
  }
  // The C API builds the same name, or refuses the same fields.
  const bool any_nul = std::any_of(given.begin(), given.end(), [](const auto& p) {
    return has_nul(p.first) || has_nul(p.second);
  });
  if (any_nul) return;
  std::vector<const char*> fields;
  std::vector<const char*> values;
  for (const auto& [field, value] : given) {
    fields.push_back(field.c_str());
    values.push_back(value.c_str());
  }
  std::string buffer(256, '\0');
  std::size_t length = 0;
  const wyjit_status status = wyjit_spec_build(family_name.c_str(), fields.data(), values.data(),
                                               given.size(), buffer.data(), buffer.size(), &length);
  if (!made) {
    WYJIT_FUZZ_REQUIRE(status == WYJIT_ERROR_INVALID_SPEC, wyjit_status_name(status));
    return;
  }
  WYJIT_FUZZ_REQUIRE(status == WYJIT_OK, wyjit_last_error());
  WYJIT_FUZZ_REQUIRE(buffer.substr(0, length) == name && buffer[length] == '\0', buffer);
}

void check_target(std::string_view text) {
  wyjit::Target target;
  try {
    target = wyjit::Target::parse(std::string(text));
  } catch (const wyjit::Error& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == ErrorCode::invalid_argument, e.what());
    return;
  }
  WYJIT_FUZZ_REQUIRE(target.name() == text, target.name());
  WYJIT_FUZZ_REQUIRE(target.arch >= 10, target.name());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  const auto families = wyjit::detail::families();
  switch (data[0] % 4) {
    case 0:
      check_name(wyjit::fuzz::as_text(rest));
      break;
    case 1: {
      if (rest.size() < 2) return 0;
      const Family& family = *families[rest[0] % families.size()];
      const std::size_t field = rest[1] % family.fields().size();
      check_value_list(family, field, wyjit::fuzz::as_text(rest.subspan(2)));
      break;
    }
    case 2:
      if (rest.empty()) return 0;
      check_make_spec(*families[rest[0] % families.size()], wyjit::fuzz::as_text(rest.subspan(1)));
      break;
    default:
      check_target(wyjit::fuzz::as_text(rest));
      break;
  }
  return 0;
}
