// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/gdn_common/gdn_number_hazards.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace wyjit::test::conformance {

std::vector<NumberHazard> gdn_number_hazards(const GdnShape& shape, IoType io) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<NumberHazard> list;
  // `conditioned`: the results are finite (or non-finite only where a NaN or an infinity of
  // the float64 recurrence is) and as well-conditioned as any, so they compare within tolerance.
  const auto add = [&](const char* input, double value, bool conditioned,
                       bool every_token = false) {
    NumberHazard h = hazard_element(input, value, every_token);
    h.conditioned = conditioned;
    list.push_back(h);
  };
  for (const char* input : {"q", "k_in", "v"}) {
    for (const double x : {kNaN, kInf, -kInf}) add(input, x, false);
  }
  if (shape.fused_gating) {
    add("a", kNaN, false);
    add("a", kInf, true);   // g = -inf: the state decays to exactly 0
    add("a", -kInf, true);  // g = 0
    if (io != IoType::f16) add("a", 1e30, true);
    add("a", kInf, true, /*every_token=*/true);
    add("b", kNaN, false);
    add("b", kInf, true);   // beta = 1
    add("b", -kInf, true);  // beta = 0
  } else {
    add("g", kNaN, false);
    add("g", kInf, false);
    add("g", -kInf, true);
    add("g", -1e30, true);
    add("g", 0.0, true);
    add("g", -kInf, true, /*every_token=*/true);
    add("g", -1e30, true, /*every_token=*/true);
    for (const double x : {kNaN, kInf, -kInf}) add("beta", x, false);
    add("beta", -3.0, true);
    add("beta", 7.0, true);
  }
  if (shape.l2norm_qk) {
    for (const char* input : {"q", "k_in"}) {
      list.push_back(hazard_row(input, 0.0));
      if (io != IoType::f16) list.push_back(hazard_row(input, 1e20));
    }
  }
  return list;
}

void apply_number_hazard(const NumberHazard& h, GdnProblem& p, IoType io) {
  const std::size_t K = static_cast<std::size_t>(p.k);
  const std::size_t HK = static_cast<std::size_t>(p.hk), HV = static_cast<std::size_t>(p.hv);
  const std::size_t DK = static_cast<std::size_t>(p.dk), DV = static_cast<std::size_t>(p.dv);
  const std::size_t b = static_cast<std::size_t>(p.batch / 2);
  const float value = static_cast<float>(h.value);
  const auto refuse = [&](const std::string& why) {
    throw std::logic_error("number hazard " + h.describe() + ": " + why);
  };
  const bool qk = h.input == "q" || h.input == "k_in";
  if (h.row && !qk) refuse("rows are q or k rows");
  if ((h.input == "a" || h.input == "b") != p.fused_gating &&
      (h.input == "a" || h.input == "b" || h.input == "g" || h.input == "beta")) {
    refuse(p.fused_gating ? "the launch computes g and beta" : "the launch reads g and beta");
  }
  for (std::size_t t = h.every_token ? 0 : K / 2; t < (h.every_token ? K : K / 2 + 1); ++t) {
    const std::size_t row = b * K + t;
    if (qk) {
      std::vector<float>& x = h.input == "q" ? p.q : p.k_in;
      const std::size_t first = (row * HK + HK - 1) * DK;
      if (h.row) {
        for (std::size_t i = 0; i < DK; ++i) {
          x[first + i] = round_to_io(static_cast<float>(x[first + i] * h.value), io);
        }
      } else {
        x[first + DK / 3] = round_to_io(value, io);
      }
    } else if (h.input == "v") {
      p.v[(row * HV + HV - 1) * DV + DV / 3] = round_to_io(value, io);
    } else if (h.input == "g") {
      p.g[row * HV + HV - 1] = value;
    } else if (h.input == "beta") {
      p.beta[row * HV + HV - 1] = value;
    } else if (h.input == "a") {
      p.a[row * HV + HV - 1] = round_to_io(value, io);
    } else if (h.input == "b") {
      p.b[row * HV + HV - 1] = round_to_io(value, io);
    } else {
      refuse("a GDN launch has no such input");
    }
  }
}

}  // namespace wyjit::test::conformance
