// SPDX-License-Identifier: Apache-2.0
// The table stager every family's table addressing reads through: what it stages, what it
// refuses (naming the argument, copying nothing), and that it refuses a capturing stream; the C
// API's stager is the same object.
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "gpu/support/device.hpp"
#include "wyjit/error.hpp"
#include "wyjit/table_stager.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::test {

TEST_CASE(
    "table stager: stages K slabs, nulls the tail, stages null entries (padding) anywhere, "
    "refuses null arrays naming them and copies nothing then, refuses a capturing stream",
    "[gpu][graph][stager]") {
  make_context_current();
  const Stream stream;
  constexpr int kK = 3;  // tiles a sequence writes: 3 slabs
  constexpr int kMaxBatch = 4;
  TableStager stager(kK, kMaxBatch);
  CHECK(stager.writes() == kK);
  CHECK(stager.max_batch() == kMaxBatch);
  CHECK(stager.slab_stride() == kMaxBatch);
  const auto fake = [](std::uintptr_t slab, std::uintptr_t b) {
    return reinterpret_cast<void*>(0x100000 * (slab + 1) + 0x1000 * (b + 1));
  };
  const auto download = [&] {
    std::vector<std::uintptr_t> host(kK * kMaxBatch, 1);
    REQUIRE(detail::driver().cuMemcpyDtoH(host.data(),
                                          reinterpret_cast<CUdeviceptr>(stager.device_tables()),
                                          host.size() * sizeof(void*)) == CUDA_SUCCESS);
    return host;
  };
  CHECK(download() == std::vector<std::uintptr_t>(kK * kMaxBatch, 0));  // null until staged

  std::vector<void*> states{fake(0, 0), fake(0, 1), fake(0, 2), fake(0, 3)};
  std::vector<void*> inter0{fake(1, 0), fake(1, 1), fake(1, 2), fake(1, 3)};
  std::vector<void*> inter1{fake(2, 0), fake(2, 1), fake(2, 2), fake(2, 3)};
  void* const* inter[] = {inter0.data(), inter1.data()};

  // What slab s entry b must hold after staging `batch` entries of states/inter0/inter1.
  const auto expect_staged = [&](int batch) {
    const std::vector<std::uintptr_t> got = download();
    const std::vector<void*>* slabs[] = {&states, &inter0, &inter1};
    for (int s = 0; s < kK; ++s) {
      for (int b = 0; b < kMaxBatch; ++b) {
        INFO("slab " << s << " entry " << b << " after staging batch " << batch);
        CHECK(got[s * kMaxBatch + b] ==
              (b < batch ? reinterpret_cast<std::uintptr_t>((*slabs[s])[b]) : 0));
      }
    }
  };
  stager.stage(states.data(), inter, kMaxBatch, stream.get());
  stream.synchronize();
  expect_staged(kMaxBatch);
  stager.stage(states.data(), inter, 2, stream.get());
  stream.synchronize();
  expect_staged(2);

  // Null entries are padding, staged as they are: a padded sequence in the middle, a skipped
  // intermediate state of another sequence.
  states[1] = nullptr;
  inter1[2] = nullptr;
  stager.stage(states.data(), inter, 3, stream.get());
  stream.synchronize();
  expect_staged(3);
  states[1] = fake(0, 1);
  inter1[2] = fake(2, 2);
  stager.stage(states.data(), inter, 2, stream.get());
  stream.synchronize();
  expect_staged(2);

  // Refusals: the message names the argument; nothing is copied.
  void* const* missing_row[] = {inter0.data(), nullptr};
  CHECK_THROWS_WITH(stager.stage(states.data(), missing_row, 3, stream.get()),
                    Catch::Contains("inter[1] is null"));
  CHECK_THROWS_WITH(stager.stage(states.data(), nullptr, 3, stream.get()),
                    Catch::Contains("inter is null"));
  CHECK_THROWS_WITH(stager.stage(states.data(), inter, 5, stream.get()),
                    Catch::Contains("batch is 5, must be 1..max_batch (4)"));
  CHECK_THROWS_WITH(stager.stage(states.data(), inter, 0, stream.get()),
                    Catch::Contains("batch is 0"));
  CHECK_THROWS_WITH(stager.stage(nullptr, inter, 1, stream.get()),
                    Catch::Contains("states is null"));
  std::optional<ErrorCode> code;
  try {
    stager.stage(states.data(), inter, 9, stream.get());
  } catch (const Error& e) {
    code = e.code();
  }
  CHECK(code == ErrorCode::invalid_argument);
  stream.synchronize();
  expect_staged(2);

  // During capture: refused, and the capture survives (nothing illegal was attempted).
  REQUIRE(detail::driver().cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) ==
          CUDA_SUCCESS);
  const std::string during =
      failure_of([&] { stager.stage(states.data(), inter, 4, stream.get()); });
  CUgraph graph = nullptr;
  const CUresult ended = detail::driver().cuStreamEndCapture(stream.get(), &graph);
  if (graph != nullptr) detail::driver().cuGraphDestroy(graph);
  CHECK_THAT(during, Catch::Contains("is being captured"));
  CHECK(ended == CUDA_SUCCESS);
  expect_staged(2);

  // The C API wraps the same object.
  wyjit_table_stager* c_stager = nullptr;
  REQUIRE(wyjit_table_stager_create(kK, kMaxBatch, &c_stager) == WYJIT_OK);
  CHECK(wyjit_table_stager_slab_stride(c_stager) == kMaxBatch);
  CHECK(wyjit_table_stager_tables(c_stager) != nullptr);
  CHECK(wyjit_table_stager_stage(c_stager, states.data(), missing_row, 4, stream.get()) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(wyjit_last_error(), Catch::Contains("inter[1] is null"));
  states[3] = nullptr;
  CHECK(wyjit_table_stager_stage(c_stager, states.data(), inter, 4, stream.get()) == WYJIT_OK);
  stream.synchronize();
  wyjit_table_stager_destroy(c_stager);
}

TEST_CASE(
    "table stager of one write (conv1d_update's window form): one slab, inter may be null, the "
    "tail nulled",
    "[gpu][graph][stager]") {
  make_context_current();
  const Stream stream;
  constexpr int kMaxBatch = 3;
  TableStager stager(1, kMaxBatch);
  CHECK(stager.writes() == 1);
  CHECK(stager.slab_stride() == kMaxBatch);
  const auto download = [&] {
    std::vector<std::uintptr_t> host(kMaxBatch, 1);
    REQUIRE(detail::driver().cuMemcpyDtoH(host.data(),
                                          reinterpret_cast<CUdeviceptr>(stager.device_tables()),
                                          host.size() * sizeof(void*)) == CUDA_SUCCESS);
    return host;
  };
  std::vector<void*> states{reinterpret_cast<void*>(0x1000), nullptr,
                            reinterpret_cast<void*>(0x3000)};
  stager.stage(states.data(), nullptr, kMaxBatch, stream.get());
  stream.synchronize();
  CHECK(download() == std::vector<std::uintptr_t>{0x1000, 0, 0x3000});
  stager.stage(states.data(), nullptr, 1, stream.get());
  stream.synchronize();
  CHECK(download() == std::vector<std::uintptr_t>{0x1000, 0, 0});
  CHECK_THROWS_WITH(stager.stage(nullptr, nullptr, 1, stream.get()),
                    Catch::Contains("states is null"));
  CHECK_THROWS_WITH(TableStager(0, 4), Catch::Contains("writes is 0, must be 1..32"));
  CHECK_THROWS_WITH(TableStager(1, 0), Catch::Contains("max_batch is 0, must be >= 1"));
}

}  // namespace wyjit::test
