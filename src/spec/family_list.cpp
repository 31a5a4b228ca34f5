// SPDX-License-Identifier: Apache-2.0
// The list of families, derived from KernelSpec's alternatives: each spec type names its
// descriptor (Spec::family()).
#include <array>
#include <utility>

#include "spec/family.hpp"

namespace wyjit::detail {

namespace {

template <std::size_t... I>
std::array<const Family*, sizeof...(I)> list(std::index_sequence<I...>) {
  return {&std::variant_alternative_t<I, KernelSpec>::family()...};
}

}  // namespace

std::span<const Family* const> families() noexcept {
  static const auto kAll = list(std::make_index_sequence<std::variant_size_v<KernelSpec>>());
  return kAll;
}

const Family* find_family(std::string_view name) noexcept {
  for (const Family* f : families()) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

const Family& family_of(const KernelSpec& spec) noexcept {
  return std::visit([](const auto& s) -> const Family& { return s.family(); }, spec);
}

}  // namespace wyjit::detail
