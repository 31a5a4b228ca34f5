// SPDX-License-Identifier: Apache-2.0
// The standard variant matrix: what precompile --all and CI build.
#include <array>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

namespace {

constexpr std::array kIoTypes = {DType::f32, DType::f16, DType::bf16};
constexpr std::array kAddressings = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr int kMaxStandardK = 17;

// NOTE: -Wswitch flags a new Addressing here; add it to kAddressings as well, so that the
// standard matrix (and CI) covers it as soon as validate_spec accepts it.
[[maybe_unused]] constexpr bool listed(Addressing a) {
  switch (a) {
    case Addressing::strided:
    case Addressing::table:
    case Addressing::slot:
      return true;
  }
  return false;
}

bool accepted(const KernelSpec& spec) {
  try {
    validate_spec(spec);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::vector<KernelSpec> standard_matrix() {
  std::vector<KernelSpec> specs;
  for (const DType io : kIoTypes) {
    for (const Addressing addressing : kAddressings) {
      for (int k = 1; k <= kMaxStandardK; ++k) {
        const KernelSpec spec{
            .family = Family::gdn_verify,
            .k = k,
            .io = io,
            .state = DType::f32,
            .addressing = addressing,
            .layout = Layout::vk,
            .dk = 128,
            .dv = 128,
        };
        if (accepted(spec)) specs.push_back(spec);
      }
    }
  }
  return specs;
}

}  // namespace wyjit
