// SPDX-License-Identifier: Apache-2.0
// Field values as text, for any family: one value (`4`, `bf16`, `on`) or a list (`1-17,32`,
// `f32,bf16`, `on,off`), as make_spec, the standard matrix and the CLI's selectors spell them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spec/family.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

/// A value that is not one of a field's: Error(invalid_spec) that also says which item of the
/// text and why, so that the CLI can name its own option.
class FieldValueError : public Error {
 public:
  FieldValueError(const std::string& message, std::string item, std::string reason)
      : Error(ErrorCode::invalid_spec, message),
        item_(std::move(item)),
        reason_(std::move(reason)) {}
  const std::string& item() const noexcept { return item_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string item_;
  std::string reason_;
};

/// A field's value, or (a choice only) "the value of choice field `same_as`".
struct FieldValue {
  int value = 0;
  int same_as = -1;  ///< index of another field of the family, or -1
  friend bool operator==(const FieldValue&, const FieldValue&) = default;
};

/// The index of field `name` in `family`, or -1.
int field_index(const Family& family, std::string_view name) noexcept;

/// `value` of field `field` (an index) of `family` as text: a number, a choice, `on`/`off`.
std::string value_text(const Family& family, std::size_t field, int value);

/// What values the field accepts, as text, for messages: `1..32`, `64, 128, 256`, `f32, f16,
/// bf16`, `on, off`.
std::string allowed_text(const FieldInfo& field);

/// One value of field `field`. Throws FieldValueError naming the field, the text and what is
/// allowed. A number is checked for its syntax only (validate_spec checks its range).
FieldValue parse_value(const Family& family, std::size_t field, std::string_view text);

/// A comma-separated list of values (integers also as ranges `lo-hi`), duplicates dropped,
/// integers sorted, choices in the order given; each checked as parse_value does plus the
/// field's range. Throws FieldValueError.
std::vector<FieldValue> parse_value_list(const Family& family, std::size_t field,
                                         std::string_view text);

/// The standard matrix's values of a field (its FieldInfo::standard, else its default).
std::vector<FieldValue> standard_values(const Family& family, std::size_t field);

/// Every spec of `family` with field i taking each of values[i] (values.size() == the number of
/// fields), as the name reads with the first field varying fastest; `same_as` values resolved;
/// those validate_spec refuses are left out.
std::vector<KernelSpec> product(const Family& family,
                                const std::vector<std::vector<FieldValue>>& values);

}  // namespace wyjit::detail
