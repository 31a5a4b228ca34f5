// SPDX-License-Identifier: Apache-2.0
#include "gpu/conformance/family_refs.hpp"

#include <stdexcept>
#include <utility>

namespace wyjit::test::conformance {

FamilyRefs::FamilyRefs(std::string name, Addressing addressing, int batch, const TileShape& shape,
                       bool padded, std::uint64_t salt)
    : name_(std::move(name)),
      shape_(shape),
      salt_(salt),
      binder_(addressing, batch, shape, padded, /*token_major=*/false) {}

std::vector<BufferSpec> FamilyRefs::buffers() const {
  std::vector<BufferSpec> list{
      {name_ + " pool", binder_.pool_elems() * io_size(shape_.type), shape_.type}};
  for (const StateBinder::Array& a : binder_.arrays()) {
    list.push_back({name_ + " " + a.name, a.bytes, IoType::f32});
  }
  return list;
}

void FamilyRefs::bind(StateRefs& refs, const std::vector<void*>& device, std::size_t first) {
  std::vector<void*> arrays;
  for (std::size_t i = 1; i < count(); ++i) arrays.push_back(device.at(first + i));
  binder_.bind(refs, device.at(first), arrays);
}

TilePlan FamilyRefs::plan(std::uint64_t seed, const Padding& padding, const TilePlan& rig_plan) {
  TilePlan plan = binder_.plan(seed ^ salt_, padding, arrays_);
  for (int b = 0; b < plan.batch; ++b) {
    if (plan.padded(b) != rig_plan.padded(b)) {
      throw std::logic_error(name_ + ": sequence " + std::to_string(b) +
                             (plan.padded(b) ? " is padding here, not in the rig's plan"
                                             : " is padding in the rig's plan, not here"));
    }
  }
  return plan;
}

void FamilyRefs::append_images(std::vector<std::uint8_t> pool,
                               std::vector<std::vector<std::uint8_t>>& images) const {
  if (pool.size() != binder_.pool_elems() * io_size(shape_.type)) {
    throw std::logic_error(name_ + ": a pool image of " + std::to_string(pool.size()) +
                           " bytes for " + std::to_string(binder_.pool_elems()) + " elements");
  }
  images.push_back(std::move(pool));
  for (const std::vector<std::uint8_t>& a : arrays_) images.push_back(a);
}

}  // namespace wyjit::test::conformance
