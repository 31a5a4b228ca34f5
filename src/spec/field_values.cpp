// SPDX-License-Identifier: Apache-2.0
#include "spec/field_values.hpp"

#include <algorithm>
#include <charconv>

#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace {

// Why `text` is not a value of `f`, as a CLI message ends: "must be in 2..8".
std::string reason(const FieldInfo& f) {
  switch (f.kind) {
    case FieldKind::integer:
      return f.allowed.empty() ? "must be in " + allowed_text(f)
                               : "must be one of " + allowed_text(f);
    case FieldKind::choice:
      return "expected one of " + allowed_text(f) +
             (f.same_as == nullptr
                  ? ""
                  : std::string(", or ") + f.same_as + " (the " + f.same_as + " field's value)");
    case FieldKind::flag:
      return "expected on or off";
  }
  return "not a value";
}

[[noreturn]] void bad_value(const Family& family, const FieldInfo& f, std::string_view text,
                            const std::string& why) {
  throw FieldValueError(std::string(family.name()) + " field " + f.name + " (" + f.label + "): '" +
                            std::string(text) + "' is not a value: " + why,
                        std::string(text), why);
}

[[noreturn]] void bad_value(const Family& family, const FieldInfo& f, std::string_view text) {
  bad_value(family, f, text, reason(f));
}

bool parse_int(std::string_view text, int& out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool in_range(const FieldInfo& f, int v) {
  if (!f.allowed.empty())
    return std::find(f.allowed.begin(), f.allowed.end(), v) != f.allowed.end();
  return v >= f.min && v <= f.max;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

}  // namespace

int field_index(const Family& family, std::string_view name) noexcept {
  const auto fields = family.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (name == fields[i].name) return static_cast<int>(i);
  }
  return -1;
}

std::string value_text(const Family& family, std::size_t field, int value) {
  const FieldInfo& f = family.fields()[field];
  switch (f.kind) {
    case FieldKind::integer:
      return std::to_string(value);
    case FieldKind::choice:
      if (value >= 0 && static_cast<std::size_t>(value) < f.choices.size()) {
        return f.choices[static_cast<std::size_t>(value)];
      }
      return std::to_string(value);
    case FieldKind::flag:
      return value == 0 ? "off" : value == 1 ? "on" : std::to_string(value);
  }
  return std::to_string(value);
}

std::string allowed_text(const FieldInfo& f) {
  std::string out;
  const auto add = [&](std::string_view item) {
    if (!out.empty()) out += ", ";
    out += item;
  };
  switch (f.kind) {
    case FieldKind::integer:
      if (f.allowed.empty()) return std::to_string(f.min) + ".." + std::to_string(f.max);
      for (const int v : f.allowed) add(std::to_string(v));
      return out;
    case FieldKind::choice:
      for (const char* c : f.choices) add(c);
      return out;
    case FieldKind::flag:
      return "on, off";
  }
  return out;
}

FieldValue parse_value(const Family& family, std::size_t field, std::string_view text) {
  const FieldInfo& f = family.fields()[field];
  FieldValue v;
  switch (f.kind) {
    case FieldKind::integer:
      if (!parse_int(text, v.value)) bad_value(family, f, text);
      return v;
    case FieldKind::choice: {
      for (std::size_t i = 0; i < f.choices.size(); ++i) {
        if (text == f.choices[i]) {
          v.value = static_cast<int>(i);
          return v;
        }
      }
      if (f.same_as != nullptr && text == f.same_as) {
        v.same_as = field_index(family, f.same_as);
        return v;
      }
      bad_value(family, f, text);
    }
    case FieldKind::flag:
      if (text == "on" || text == "off") {
        v.value = text == "on" ? 1 : 0;
        return v;
      }
      bad_value(family, f, text);
  }
  bad_value(family, f, text);
}

std::vector<FieldValue> parse_value_list(const Family& family, std::size_t field,
                                         std::string_view text) {
  const FieldInfo& f = family.fields()[field];
  std::vector<FieldValue> out;
  const auto add = [&](const FieldValue& v) {
    if (f.kind == FieldKind::integer && !in_range(f, v.value)) {
      bad_value(family, f, std::to_string(v.value));
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  for (const std::string_view item : split(text, ',')) {
    const std::size_t dash = item.find('-', 1);
    if (f.kind == FieldKind::integer && dash != std::string_view::npos) {
      const FieldValue lo = parse_value(family, field, item.substr(0, dash));
      const FieldValue hi = parse_value(family, field, item.substr(dash + 1));
      if (lo.value > hi.value) bad_value(family, f, item, "a range must run low-high");
      for (int x = lo.value; x <= hi.value; ++x) add(FieldValue{x, -1});
    } else {
      add(parse_value(family, field, item));
    }
  }
  if (f.kind == FieldKind::integer) {
    std::sort(out.begin(), out.end(),
              [](const FieldValue& a, const FieldValue& b) { return a.value < b.value; });
  }
  return out;
}

std::vector<FieldValue> standard_values(const Family& family, std::size_t field) {
  const FieldInfo& f = family.fields()[field];
  if (f.standard == nullptr) return {FieldValue{f.default_value, -1}};
  return parse_value_list(family, field, f.standard);
}

std::vector<KernelSpec> product(const Family& family,
                                const std::vector<std::vector<FieldValue>>& values) {
  const std::size_t n = values.size();
  std::vector<KernelSpec> specs;
  if (n == 0 ||
      std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) {
    return specs;
  }
  // NOTE: an odometer over the fields: field 1 turns slowest, then 2, ..., n-1, and field 0 (K)
  // fastest, so the specs come in name order with K innermost.
  std::vector<std::size_t> at(n, 0);
  while (true) {
    KernelSpec spec = family.make();
    for (std::size_t i = 0; i < n; ++i) {
      const FieldValue& v = values[i][at[i]];
      if (v.same_as < 0) family.set(spec, i, v.value);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const FieldValue& v = values[i][at[i]];
      if (v.same_as >= 0) {
        family.set(spec, i, family.get(spec, static_cast<std::size_t>(v.same_as)));
      }
    }
    try {
      validate_spec(spec);
      specs.push_back(spec);
    } catch (const Error&) {
      // Left out: not a variant this build supports.
    }
    bool advanced = false;
    for (std::size_t step = 0; step < n && !advanced; ++step) {
      const std::size_t i = step == 0 ? 0 : n - step;  // fastest first: 0, n-1, ..., 1
      if (++at[i] < values[i].size()) {
        advanced = true;
      } else {
        at[i] = 0;
      }
    }
    if (!advanced) return specs;
  }
}

}  // namespace wyjit::detail
