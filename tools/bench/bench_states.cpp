// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_states.hpp"

#include "driver/driver_api.hpp"

namespace wyjit::bench {
namespace {

std::unique_ptr<Buffer> uploaded(const std::vector<std::int32_t>& values) {
  auto b = std::make_unique<Buffer>(values.size() * sizeof(std::int32_t));
  WYJIT_CU_CHECK(cuMemcpyHtoD(b->ptr, values.data(), values.size() * sizeof(std::int32_t)));
  // NOTE: from pageable memory the copy may return before its DMA lands, and the benchmarks
  // launch on a non-blocking stream, which does not wait for the legacy stream.
  WYJIT_CU_CHECK(cuStreamSynchronize(nullptr));
  return b;
}

}  // namespace

BenchStates::BenchStates(Addressing addressing, const StateShape& shape, CUstream stream)
    : addressing_(addressing), shape_(shape) {
  const auto batch = static_cast<std::size_t>(shape.batch);
  const std::size_t tile_bytes = shape.tile_elems * shape.elem_bytes;
  if (addressing == Addressing::slot) {
    const auto writes = static_cast<std::size_t>(shape.slot_writes);
    num_slots_ = static_cast<std::int32_t>(batch * (1 + writes));
    state_ = filled_buffer(static_cast<std::size_t>(num_slots_) * tile_bytes, shape.fill);
    std::vector<std::int32_t> read(batch), write(batch * writes);
    for (std::size_t b = 0; b < batch; ++b) {
      read[b] = static_cast<std::int32_t>(b);
      for (std::size_t t = 0; t < writes; ++t) {
        write[b * writes + t] = static_cast<std::int32_t>(batch + b * writes + t);
      }
    }
    read_slot_ = uploaded(read);
    write_slot_ = uploaded(write);
    return;
  }
  const auto inter_tiles = static_cast<std::size_t>(shape.inter_tiles);
  state_ = filled_buffer(batch * tile_bytes, shape.fill);
  if (inter_tiles > 0) inter_ = filled_buffer(batch * inter_tiles * tile_bytes, 0.0f);
  if (addressing != Addressing::table) return;

  stager_ = std::make_unique<TableStager>(shape.inter_tiles + 1, shape.batch);
  auto* const state = static_cast<char*>(state_->get());
  std::vector<void*> states(batch);
  std::vector<std::vector<void*>> inter(inter_tiles, std::vector<void*>(batch));
  std::vector<void* const*> inter_rows(inter_tiles);
  for (std::size_t b = 0; b < batch; ++b) {
    states[b] = state + b * tile_bytes;
    for (std::size_t t = 0; t < inter_tiles; ++t) {
      inter[t][b] = static_cast<char*>(inter_->get()) + (b * inter_tiles + t) * tile_bytes;
    }
  }
  for (std::size_t t = 0; t < inter_tiles; ++t) inter_rows[t] = inter[t].data();
  stager_->stage(states.data(), inter_rows.data(), shape.batch, stream);
  // NOTE: the host arrays die with this constructor; the copy must be done first.
  WYJIT_CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace wyjit::bench
