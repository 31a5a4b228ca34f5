// SPDX-License-Identifier: Apache-2.0
/// @file compare.hpp
/// @brief Element-wise comparison of a kernel result against the double-precision reference.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace wyjit::test {

/// Summary of one comparison. Errors are taken over the finite elements only; any non-finite
/// element (in either span) is counted in nan_count and fails the comparison.
struct Comparison {
  double max_abs_err = 0;  ///< max |actual - reference| over finite pairs
  double max_abs_ref = 0;  ///< max |reference| over finite reference values
  double rel_err = 0;      ///< max_abs_err / max(max_abs_ref, tiny)
  /// First non-finite index if nan_count > 0, else the index of the largest error.
  std::size_t worst_index = 0;
  std::size_t nan_count = 0;  ///< elements where actual or reference is NaN or inf (NonFinite::
                              ///< match: where only one of them is)
  std::size_t nonfinite = 0;  ///< NonFinite::match: elements where both are NaN or inf
  std::size_t count = 0;      ///< elements compared
  double worst_ref = 0;       ///< reference[worst_index] (0 when count == 0)
  double worst_actual = 0;    ///< actual[worst_index] (0 when count == 0)

  /// True when nan_count == 0 and rel_err <= tol.
  bool passed(double tol) const;
  /// One line: `what: rel_err=.. max_abs_err=.. max_abs_ref=.. worst[i] ref=.. got=.. nan=.. n=..`
  /// (then `nonfinite=..` where some pairs were both non-finite).
  std::string describe(std::string_view what) const;
};

/// What a comparison makes of non-finite values (NaN, +-inf).
enum class NonFinite {
  fail,   ///< any non-finite value, on either side, fails
  match,  ///< a pair both non-finite matches (whatever their values); one side only fails
};

/// Builds a Comparison one pair at a time (for tensors too large to copy into vectors).
class ComparisonAccumulator {
 public:
  explicit ComparisonAccumulator(NonFinite rule = NonFinite::fail) : rule_(rule) {}
  void add(double reference, double actual);
  Comparison finish() const;

 private:
  NonFinite rule_;
  Comparison c_;
  bool have_bad_ = false;
};

/// A count of elements that should not have changed but did, as a Comparison that passes with
/// tolerance 0 only when the count is 0 (so it reports beside the numeric checks).
Comparison count_comparison(std::size_t wrong);

/// Compares `actual` against `reference`; throws std::invalid_argument when sizes differ.
Comparison compare(std::span<const double> reference, std::span<const double> actual);
/// Same, for an fp32 result (e.g. copied back from the GPU or unpacked with unpack_io).
Comparison compare(std::span<const double> reference, std::span<const float> actual);

}  // namespace wyjit::test
