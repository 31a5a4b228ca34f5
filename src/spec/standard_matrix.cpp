// SPDX-License-Identifier: Apache-2.0
// The standard variant matrix: what precompile --all and CI build.
#include <array>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

namespace {

constexpr std::array kIoTypes = {DType::f32, DType::f16, DType::bf16};
// NOTE: conv1d_update in bf16 only, as the shipped checkpoints (Qwen3-Next, Qwen3.5) run it:
// with every io dtype the matrix had 459 variants and `wyjit precompile --all --arch sm_90`
// took 62.6 s on 2 cores, past issue 4's 60 s; with bf16 only, 255 variants in 41.5 s
// (docs/cli.md has the measurements). Other dtypes: `--family conv1d_update --io ...`.
constexpr std::array kConvIoTypes = {DType::bf16};
constexpr std::array kAddressings = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr std::array kRollbacks = {Rollback::intermediate, Rollback::window};
constexpr int kMaxStandardK = 17;

// NOTE: -Wswitch flags a new Family, Addressing or Rollback here; add it to the matrix (or to
// the lists above) as well, so that the standard matrix (and CI) covers it as soon as
// validate_spec accepts it.
[[maybe_unused]] constexpr bool listed(Family f) {
  switch (f) {
    case Family::gdn_verify:
    case Family::conv1d_update:
      return true;
  }
  return false;
}

[[maybe_unused]] constexpr bool listed(Addressing a) {
  switch (a) {
    case Addressing::strided:
    case Addressing::table:
    case Addressing::slot:
      return true;
  }
  return false;
}

[[maybe_unused]] constexpr bool listed(Rollback r) {
  switch (r) {
    case Rollback::intermediate:
    case Rollback::window:
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

// gdn_verify as current engines run it: state f32, layout vk, dk = dv = 128.
void append_gdn_verify(std::vector<KernelSpec>& specs) {
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
}

// conv1d_update as Qwen3-Next and Qwen3.5 ship it: W = 4, weights in the io dtype, SiLU, and
// no bias (their GDN layers build the conv as nn.Conv1d(..., bias=False); engines pass a null
// bias), in both rollback forms.
void append_conv1d_update(std::vector<KernelSpec>& specs) {
  for (const DType io : kConvIoTypes) {
    for (const Rollback rollback : kRollbacks) {
      for (const Addressing addressing : kAddressings) {
        for (int k = 1; k <= kMaxStandardK; ++k) {
          const KernelSpec spec{
              .family = Family::conv1d_update,
              .k = k,
              .io = io,
              .addressing = addressing,
              .width = 4,
              .weight = io,
              .bias = false,
              .silu = true,
              .rollback = rollback,
          };
          if (accepted(spec)) specs.push_back(spec);
        }
      }
    }
  }
}

}  // namespace

std::vector<KernelSpec> standard_matrix() {
  std::vector<KernelSpec> specs;
  append_gdn_verify(specs);
  append_conv1d_update(specs);
  return specs;
}

}  // namespace wyjit
