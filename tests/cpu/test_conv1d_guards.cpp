// SPDX-License-Identifier: Apache-2.0
// Every conv1d_update launch guard fires with the argument's name and value, before any driver
// call (these run on machines with no GPU and no driver).
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>

#include "guard_test_support.hpp"
#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

using namespace wyjit;

namespace {

using test::fake;

Conv1dUpdateSpec conv(int k, Rollback rollback, Addressing addressing = Addressing::strided) {
  return Conv1dUpdateSpec{
      .k = k, .rollback = rollback, .addressing = addressing, .bias = true, .silu = true};
}

// batch 3, 8192 channels, W = 4: a state tile is 8192 * state_cols elements.
Conv1dUpdateArgs valid_args(const Conv1dUpdateSpec& spec, int batch = 3) {
  Conv1dUpdateArgs a;
  a.batch = batch;
  a.channels = 8192;
  a.k = spec.k;
  a.width = spec.width;
  a.x = fake(0x10000);
  a.y = fake(0x20000);
  a.x_stride = 8192;
  a.y_stride = 8192;
  a.weight = fake(0x30000);
  a.bias = fake(0x40000);
  a.state_cols = spec.rollback == Rollback::window ? spec.width - 1 + spec.k : spec.width - 1;
  a.state_channel_stride = a.state_cols;  // [channels][state_cols]
  a.state_col_stride = 1;
  const std::int64_t tile = 8192 * a.state_cols;
  test::fake_state_addressing(a.states, tile, batch, spec.k,
                              spec.rollback == Rollback::window ? 1 : spec.k);
  a.window_offset = fake<const std::int32_t>(0xa0000);
  return a;
}

std::string guard_message(const Conv1dUpdateSpec& spec,
                          const std::function<void(Conv1dUpdateArgs&)>& edit) {
  return test::guard_message_of(valid_args(spec), edit, [&](const Conv1dUpdateArgs& a) {
    check_conv1d_update_args(spec, a);
  });
}

}  // namespace

TEST_CASE("conv1d_update: valid arguments pass in every form and addressing mode",
          "[launch][conv1d]") {
  for (const Rollback rollback : {Rollback::intermediate, Rollback::window}) {
    for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
      for (const int k : {1, 4, 32}) {
        const Conv1dUpdateSpec spec = conv(k, rollback, addressing);
        INFO(format_spec(spec));
        CHECK(guard_message(spec, [](Conv1dUpdateArgs&) {}) == "accepted");
      }
    }
  }
}

TEST_CASE("conv1d_update launch guards name the argument and its value", "[launch][conv1d]") {
  const Conv1dUpdateSpec spec = conv(4, Rollback::intermediate);
  const auto msg = [&](const std::function<void(Conv1dUpdateArgs&)>& edit) {
    return guard_message(spec, edit);
  };
  CHECK_THAT(msg([](auto& a) { a.k = 5; }),
             Catch::StartsWith("launch_conv1d_update(conv1d_update.k4.io_bf16.w4.wt_f32."
                               "intermediate.strided.bias.silu): args.k is 5, must be 4"));
  CHECK_THAT(msg([](auto& a) { a.width = 3; }), Catch::Contains("args.width is 3, must be 4"));
  CHECK_THAT(msg([](auto& a) { a.batch = 0; }), Catch::Contains("args.batch is 0"));
  CHECK_THAT(msg([](auto& a) { a.channels = -1; }), Catch::Contains("args.channels is -1"));
  CHECK_THAT(msg([](auto& a) { a.batch = 1'000'000'000; }), Catch::Contains("grid limit"));
  CHECK_THAT(msg([](auto& a) { a.x = nullptr; }), Catch::Contains("args.x is null"));
  CHECK_THAT(msg([](auto& a) { a.y = nullptr; }), Catch::Contains("args.y is null"));
  CHECK_THAT(msg([](auto& a) { a.weight = nullptr; }), Catch::Contains("args.weight is null"));
  CHECK_THAT(msg([](auto& a) { a.bias = nullptr; }), Catch::Contains("args.bias is null"));
  CHECK_THAT(msg([](auto& a) { a.x = fake(0x10001); }),
             Catch::Contains("args.x = 0x10001 is not aligned to 2 bytes (element alignment)"));
  CHECK_THAT(msg([](auto& a) { a.weight = fake(0x30002); }),
             Catch::Contains("args.weight = 0x30002 is not aligned to 4 bytes"));
  CHECK_THAT(msg([](auto& a) { a.x_stride = 8191; }),
             Catch::Contains("args.x_stride is 8191, must be >= 8192 (channels)"));
  CHECK_THAT(msg([](auto& a) { a.y_stride = 100; }), Catch::Contains("args.y_stride is 100"));
  CHECK_THAT(msg([](auto& a) { a.state_cols = 2; }),
             Catch::Contains("args.state_cols is 2, must be >= 3"));
  CHECK_THAT(
      msg([](auto& a) { a.state_channel_stride = 2; }),
      Catch::Contains("args.state_channel_stride is 2, must be >= 3 ([channels][state_cols]"));
  CHECK_THAT(msg([](auto& a) { a.state_col_stride = 2; }),
             Catch::Contains("args.state_channel_stride is 3 and args.state_col_stride is 2: one "
                             "of them must be 1"));
  CHECK_THAT(msg([](auto& a) { a.state_col_stride = 0; }),
             Catch::Contains("args.state_col_stride is 0"));
  // [state_cols][channels] tiles: channels contiguous, a column at least `channels` apart.
  const auto column_major = [](Conv1dUpdateArgs& a) {
    a.state_channel_stride = 1;
    a.state_col_stride = 8192;
  };
  CHECK(msg(column_major) == "accepted");
  CHECK_THAT(
      msg([&](auto& a) {
        column_major(a);
        a.state_col_stride = 8191;
      }),
      Catch::Contains("args.state_col_stride is 8191, must be >= 8192 ([state_cols][channels]"));
  CHECK_THAT(msg([&](auto& a) {
               column_major(a);
               a.state_col_stride = 8200;  // the tile now spans 3 * 8200 elements
             }),
             Catch::Contains("args.states.state_seq_stride is 24576, must be >= 24600"));
  CHECK_THAT(msg([](auto& a) { a.states.state = nullptr; }),
             Catch::Contains("args.states.state is null"));
  CHECK_THAT(msg([](auto& a) { a.states.state = fake(0x1000001); }),
             Catch::Contains("args.states.state = 0x1000001 is not aligned to 2 bytes"));
  CHECK_THAT(msg([](auto& a) { a.states.state_seq_stride = 1000; }),
             Catch::Contains("args.states.state_seq_stride is 1000, must be >= 24576"));
  CHECK_THAT(msg([](auto& a) { a.states.inter = nullptr; }),
             Catch::Contains("args.states.inter is null"));
  CHECK_THAT(msg([](auto& a) { a.states.inter_seq_stride = -3; }),
             Catch::Contains("args.states.inter_seq_stride is -3, must be >= 0"));
  CHECK_THAT(msg([](auto& a) { a.states.inter_tok_stride = 1000; }),
             Catch::Contains("args.states.inter_tok_stride is 1000, must be >= 24576"));
  CHECK_THAT(msg([](auto& a) { a.states.inter_seq_stride = 24576; }),
             Catch::Contains("args.states.inter_seq_stride is 24576, must be >= 73728"));
  // Token-major intermediate states are fine when they do not overlap.
  CHECK(msg([](auto& a) {
          a.states.inter_seq_stride = 24576;
          a.states.inter_tok_stride = 3 * 24576;
        }) == "accepted");
  // No bias option: the bias pointer is not read.
  Conv1dUpdateSpec no_bias = spec;
  no_bias.bias = false;
  CHECK(guard_message(no_bias, [](auto& a) { a.bias = nullptr; }) == "accepted");
  // A gdn_verify kernel is refused.
  Conv1dUpdateArgs a = valid_args(spec);
  CHECK_THROWS_WITH(launch_conv1d_update(Kernel(GdnVerifySpec{}), a, nullptr),
                    Catch::Contains("the kernel is a gdn_verify variant, not conv1d_update"));
}

TEST_CASE("conv1d_update: K = 1 and the window form need no intermediate states",
          "[launch][conv1d]") {
  const auto no_inter = [](Conv1dUpdateArgs& a) {
    a.states.inter = nullptr;
    a.states.inter_seq_stride = 0;
    a.states.inter_tok_stride = 0;
  };
  CHECK(guard_message(conv(1, Rollback::intermediate), no_inter) == "accepted");
  CHECK(guard_message(conv(8, Rollback::window), no_inter) == "accepted");
  Conv1dUpdateArgs a = valid_args(conv(4, Rollback::intermediate), 1);
  a.states.state_seq_stride = 0;
  CHECK_NOTHROW(check_conv1d_update_args(conv(4, Rollback::intermediate), a));
}

TEST_CASE("conv1d_update: the window form needs W-1+K columns and the offsets",
          "[launch][conv1d]") {
  const Conv1dUpdateSpec spec = conv(8, Rollback::window);
  CHECK_THAT(guard_message(spec, [](auto& a) { a.state_cols = 10; }),
             Catch::Contains("args.state_cols is 10, must be >= 11 (W-1+K"));
  CHECK(guard_message(spec, [](auto& a) {
          a.state_cols = 40;  // room for K up to 37: offsets carry over between launches
          a.state_channel_stride = 40;
          a.states.state_seq_stride = 8192 * 40;
        }) == "accepted");
  CHECK_THAT(guard_message(spec, [](auto& a) { a.window_offset = nullptr; }),
             Catch::Contains("args.window_offset is null"));
  CHECK_THAT(
      guard_message(spec, [](auto& a) { a.window_offset = fake<const std::int32_t>(0xa0002); }),
      Catch::Contains("args.window_offset = 0xa0002 is not aligned to 4 bytes"));
  CHECK(guard_message(conv(8, Rollback::intermediate),
                      [](auto& a) { a.window_offset = nullptr; }) == "accepted");
}

TEST_CASE("conv1d_update: the kernel path is one of the three", "[launch][conv1d]") {
  const Conv1dUpdateSpec spec = conv(4, Rollback::intermediate);
  for (const std::int32_t path :
       {WYJIT_CONV1D_PATH_AUTOMATIC, WYJIT_CONV1D_PATH_WIDE, WYJIT_CONV1D_PATH_NARROW}) {
    CHECK(guard_message(spec, [&](auto& a) { a.path = path; }) == "accepted");
  }
  CHECK_THAT(guard_message(spec, [](auto& a) { a.path = 7; }),
             Catch::Contains("args.path is 7: use WYJIT_CONV1D_PATH_AUTOMATIC (0), _WIDE (1) or "
                             "_NARROW (2)"));
  CHECK_THAT(guard_message(spec, [](auto& a) { a.path = -1; }), Catch::Contains("args.path is -1"));
}

TEST_CASE("conv1d_update table and slot guards", "[launch][conv1d]") {
  const Conv1dUpdateSpec table = conv(4, Rollback::intermediate, Addressing::table);
  CHECK_THAT(guard_message(table, [](auto& a) { a.states.tables = nullptr; }),
             Catch::Contains("args.states.tables is null: stage the pointer tables"));
  CHECK_THAT(guard_message(table, [](auto& a) { a.states.tables = fake<void* const>(0x70004); }),
             Catch::Contains("args.states.tables = 0x70004 is not aligned to 8 bytes"));
  CHECK_THAT(guard_message(table, [](auto& a) { a.states.slab_stride = 2; }),
             Catch::Contains("args.states.slab_stride is 2, must be >= 3"));
  CHECK(guard_message(table, [](auto& a) { a.states.state = nullptr; }) == "accepted");
  const Conv1dUpdateSpec table_window = conv(4, Rollback::window, Addressing::table);
  CHECK(guard_message(table_window, [](auto& a) { a.states.slab_stride = 0; }) == "accepted");

  const Conv1dUpdateSpec slot = conv(4, Rollback::intermediate, Addressing::slot);
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.state = nullptr; }),
             Catch::Contains("args.states.state is null"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.read_slot = nullptr; }),
             Catch::Contains("args.states.read_slot is null"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.write_slot = nullptr; }),
             Catch::Contains("args.states.write_slot is null"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.write_slot_stride = 3; }),
             Catch::Contains("args.states.write_slot_stride is 3, must be >= 4"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.num_slots = 0; }),
             Catch::Contains("args.states.num_slots is 0"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.slot_stride = 5; }),
             Catch::Contains("args.states.slot_stride is 5, must be >= 24576"));
  const Conv1dUpdateSpec slot_window = conv(4, Rollback::window, Addressing::slot);
  CHECK(guard_message(slot_window, [](auto& a) { a.states.write_slot_stride = 1; }) == "accepted");
  CHECK_THAT(guard_message(slot_window, [](auto& a) { a.states.write_slot_stride = 0; }),
             Catch::Contains("args.states.write_slot_stride is 0, must be >= 1"));
}

TEST_CASE("conv1d_update launch refuses a kernel with no handle after the guards pass",
          "[launch][conv1d]") {
  const Conv1dUpdateSpec spec = conv(4, Rollback::window);
  const Kernel kernel(spec);
  CHECK_THROWS_WITH(launch_conv1d_update(kernel, valid_args(spec), nullptr),
                    Catch::Contains("no function handle for its '"));
  // The plan picks one of the two kernels: each names itself when its handle is missing.
  Conv1dUpdateArgs wide = valid_args(spec);
  wide.path = WYJIT_CONV1D_PATH_WIDE;
  CHECK_THROWS_WITH(launch_conv1d_update(kernel, wide, nullptr),
                    Catch::Contains("no function handle for its 'wide' kernel"));
  Conv1dUpdateArgs narrow = valid_args(spec);
  narrow.path = WYJIT_CONV1D_PATH_NARROW;
  CHECK_THROWS_WITH(launch_conv1d_update(kernel, narrow, nullptr),
                    Catch::Contains("no function handle for its 'narrow' kernel"));
  Conv1dUpdateArgs bad = valid_args(spec);
  bad.width = 5;
  CHECK_THROWS_WITH(launch_conv1d_update(kernel, bad, nullptr), Catch::Contains("args.width is 5"));
}
