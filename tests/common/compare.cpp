// SPDX-License-Identifier: Apache-2.0
#include "common/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace wyjit::test {
namespace {

constexpr double kTiny = 1e-30;

template <class T>
Comparison compare_impl(std::span<const double> reference, std::span<const T> actual) {
  if (reference.size() != actual.size()) {
    throw std::invalid_argument("compare: reference has " + std::to_string(reference.size()) +
                                " elements, actual has " + std::to_string(actual.size()));
  }
  ComparisonAccumulator acc;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    acc.add(reference[i], static_cast<double>(actual[i]));
  }
  return acc.finish();
}

}  // namespace

void ComparisonAccumulator::add(double r, double a) {
  const std::size_t i = c_.count++;
  if (rule_ == NonFinite::match && !std::isfinite(r) && !std::isfinite(a)) {
    ++c_.nonfinite;
    return;
  }
  if (!std::isfinite(r) || !std::isfinite(a)) {
    ++c_.nan_count;
    if (!have_bad_) {
      have_bad_ = true;
      c_.worst_index = i;
      c_.worst_ref = r;
      c_.worst_actual = a;
    }
    return;
  }
  c_.max_abs_ref = std::max(c_.max_abs_ref, std::fabs(r));
  const double err = std::fabs(a - r);
  if (i == 0 && !have_bad_) {
    c_.worst_ref = r;
    c_.worst_actual = a;
  }
  if (err > c_.max_abs_err) {
    c_.max_abs_err = err;
    if (!have_bad_) {
      c_.worst_index = i;
      c_.worst_ref = r;
      c_.worst_actual = a;
    }
  }
}

Comparison ComparisonAccumulator::finish() const {
  Comparison c = c_;
  c.rel_err = c.max_abs_err / std::max(c.max_abs_ref, kTiny);
  return c;
}

Comparison count_comparison(std::size_t wrong) {
  Comparison c;
  c.count = wrong;
  c.max_abs_err = static_cast<double>(wrong);
  c.max_abs_ref = 1;
  c.rel_err = static_cast<double>(wrong);
  return c;
}

bool Comparison::passed(double tol) const { return nan_count == 0 && rel_err <= tol; }

std::string Comparison::describe(std::string_view what) const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%.*s: rel_err=%.3e max_abs_err=%.3e max_abs_ref=%.3e worst[%zu] ref=%.9g "
                "got=%.9g nan=%zu n=%zu",
                static_cast<int>(std::min<std::size_t>(what.size(), 200)), what.data(), rel_err,
                max_abs_err, max_abs_ref, worst_index, worst_ref, worst_actual, nan_count, count);
  return nonfinite == 0 ? std::string(buf) : buf + (" nonfinite=" + std::to_string(nonfinite));
}

Comparison compare(std::span<const double> reference, std::span<const double> actual) {
  return compare_impl(reference, actual);
}

Comparison compare(std::span<const double> reference, std::span<const float> actual) {
  return compare_impl(reference, actual);
}

}  // namespace wyjit::test
