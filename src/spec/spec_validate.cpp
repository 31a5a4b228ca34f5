// SPDX-License-Identifier: Apache-2.0
// What this build supports: validate_spec, every field on its own (its FieldInfo), then the
// family's checks across fields.
#include <algorithm>
#include <string>

#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

namespace detail {

void reject(const KernelSpec& spec, std::string_view label, std::string_view got,
            std::string_view allowed) {
  throw Error(ErrorCode::invalid_spec, "invalid spec " + format_spec(spec) + ": " +
                                           std::string(label) + " is " + std::string(got) +
                                           ", allowed: " + std::string(allowed));
}

}  // namespace detail

// NOTE: the checks pass plain values and build a message only on failure: validate_spec runs on
// every Jit::kernel call, and a passing check must cost no string (nor allocation).
void validate_spec(const KernelSpec& spec) {
  const detail::Family& family = detail::family_of(spec);
  const auto fields = family.fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldInfo& f = fields[i];
    const int v = family.get(spec, i);
    bool ok = false;
    switch (f.kind) {
      case FieldKind::integer:
        ok = f.allowed.empty()
                 ? v >= f.min && v <= f.max
                 : std::find(f.allowed.begin(), f.allowed.end(), v) != f.allowed.end();
        break;
      case FieldKind::choice:
        ok = v >= 0 && static_cast<std::size_t>(v) < f.choices.size();
        break;
      case FieldKind::flag:
        ok = v == 0 || v == 1;
        break;
    }
    if (!ok) detail::reject(spec, f.label, std::to_string(v), detail::allowed_text(f));
  }
  family.check(spec);
}

std::vector<KernelSpec> standard_matrix() {
  std::vector<KernelSpec> specs;
  for (const detail::Family* family : detail::families()) {
    std::vector<std::vector<detail::FieldValue>> values;
    for (std::size_t i = 0; i < family->fields().size(); ++i) {
      values.push_back(detail::standard_values(*family, i));
    }
    const std::vector<KernelSpec> part = detail::product(*family, values);
    specs.insert(specs.end(), part.begin(), part.end());
  }
  return specs;
}

}  // namespace wyjit
