// SPDX-License-Identifier: Apache-2.0
// TableStager::stage's argument checks, without a GPU: null entries are padding anywhere in
// the batch (a null S_b skips the sequence, a null write tile skips that tile), null arrays and a
// batch outside 1..max_batch are refused naming the argument.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/table_stager.hpp"

using namespace wyjit;

namespace {

void* fake(std::uintptr_t slab, std::uintptr_t b) {
  return reinterpret_cast<void*>(0x100000 * (slab + 1) + 0x1000 * (b + 1));
}

struct Tables {
  std::vector<void*> states;
  std::vector<std::vector<void*>> inter;  // [K-1][batch]
  std::vector<void* const*> rows;

  Tables(int k, int batch) : states(static_cast<std::size_t>(batch)) {
    for (int b = 0; b < batch; ++b) states[b] = fake(0, b);
    for (int t = 0; t + 1 < k; ++t) {
      inter.emplace_back(static_cast<std::size_t>(batch));
      for (int b = 0; b < batch; ++b) inter.back()[b] = fake(1 + t, b);
    }
    for (const auto& row : inter) rows.push_back(row.data());
  }
  void* const* const* inter_rows() const { return rows.empty() ? nullptr : rows.data(); }
};

ErrorCode code_of(int k, int max_batch, void* const* states, void* const* const* inter, int batch) {
  try {
    TableStager::check_stage(k, max_batch, states, inter, batch);
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("check_stage accepted the arguments");
  return ErrorCode::internal;
}

}  // namespace

TEST_CASE("table stager: full, short and padded batches pass the checks", "[launch][stager]") {
  Tables tables(4, 5);
  CHECK_NOTHROW(TableStager::check_stage(4, 5, tables.states.data(), tables.inter_rows(), 5));
  CHECK_NOTHROW(TableStager::check_stage(4, 8, tables.states.data(), tables.inter_rows(), 5));
  // A padded sequence in the middle, its intermediate states left as they were (ignored).
  tables.states[2] = nullptr;
  CHECK_NOTHROW(TableStager::check_stage(4, 5, tables.states.data(), tables.inter_rows(), 5));
  // A skipped intermediate state of a live sequence, and a padded sequence with null entries.
  tables.inter[0][1] = nullptr;
  tables.inter[1][2] = nullptr;
  tables.inter[2][4] = nullptr;
  CHECK_NOTHROW(TableStager::check_stage(4, 5, tables.states.data(), tables.inter_rows(), 5));
  // Every sequence padded: a graph replayed with nothing to do this step.
  for (void*& s : tables.states) s = nullptr;
  CHECK_NOTHROW(TableStager::check_stage(4, 5, tables.states.data(), tables.inter_rows(), 5));
  // K == 1: no intermediate states, inter may be null.
  Tables k1(1, 3);
  CHECK_NOTHROW(TableStager::check_stage(1, 3, k1.states.data(), nullptr, 3));
}

TEST_CASE("table stager: null arrays and bad batches are refused naming the argument",
          "[launch][stager]") {
  Tables tables(3, 4);
  const auto message = [&](void* const* states, void* const* const* inter, int batch) {
    try {
      TableStager::check_stage(3, 4, states, inter, batch);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(message(nullptr, tables.inter_rows(), 4),
             Catch::StartsWith("TableStager::stage(writes 3, max_batch 4): states is null") &&
                 Catch::Contains("a null entry pads that sequence"));
  CHECK_THAT(message(tables.states.data(), nullptr, 4),
             Catch::Contains("inter is null (want writes-1 = 2 arrays"));
  tables.rows[1] = nullptr;
  CHECK_THAT(message(tables.states.data(), tables.inter_rows(), 4),
             Catch::Contains("inter[1] is null (want an array of batch pointers"));
  tables.rows[1] = tables.inter[1].data();
  CHECK_THAT(message(tables.states.data(), tables.inter_rows(), 5),
             Catch::Contains("batch is 5, must be 1..max_batch (4)"));
  CHECK_THAT(message(tables.states.data(), tables.inter_rows(), 0),
             Catch::Contains("batch is 0, must be 1..max_batch (4)"));
  CHECK_THAT(message(tables.states.data(), tables.inter_rows(), -3),
             Catch::Contains("batch is -3"));
  CHECK(code_of(3, 4, nullptr, tables.inter_rows(), 4) == ErrorCode::invalid_argument);
  CHECK(code_of(3, 4, tables.states.data(), tables.inter_rows(), 9) == ErrorCode::invalid_argument);
}
