// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/number_hazard.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace wyjit::test::conformance {

namespace {

std::string number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

std::string NumberHazard::describe() const {
  return input + (row ? " row * " : " = ") + number(value) + (every_token ? " at every token" : "");
}

NumberHazard hazard_element(std::string input, double value, bool every_token) {
  return {.input = std::move(input),
          .row = false,
          .value = value,
          .every_token = every_token,
          .conditioned = std::isfinite(value)};
}

NumberHazard hazard_row(std::string input, double factor) {
  return {.input = std::move(input), .row = true, .value = factor, .conditioned = true};
}

NonFinite nonfinite_rule(const std::optional<NumberHazard>& hazard) {
  return hazard ? NonFinite::match : NonFinite::fail;
}

double hazard_tolerance(const std::optional<NumberHazard>& hazard, double tolerance) {
  return hazard && !hazard->conditioned ? std::numeric_limits<double>::infinity() : tolerance;
}

}  // namespace wyjit::test::conformance
