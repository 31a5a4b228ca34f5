// SPDX-License-Identifier: Apache-2.0
// Every launch guard fires with the argument's name and value, before any driver call (these
// run on machines with no GPU and no driver).
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

GdnVerifyArgs valid_args(const GdnVerifySpec& spec, int batch = 3) {
  GdnVerifyArgs a;
  a.batch = batch;
  a.num_k_heads = 16;
  a.num_v_heads = 32;
  a.k = spec.k;
  a.dk = spec.dk;
  a.dv = spec.dv;
  a.scale = 0.088f;
  a.q = fake(0x10000);
  a.k_in = fake(0x20000);
  a.v = fake(0x30000);
  a.g = fake<const float>(0x40000);
  a.beta = fake<const float>(0x50000);
  a.out = fake(0x60000);
  a.qk_stride = 16 * 128 * 2;
  a.v_stride = 32 * 128 * 2;
  a.gb_stride = 32;
  a.o_stride = 32 * 128;
  const std::int64_t tile = 32 * 128 * 128;
  test::fake_state_addressing(a.states, tile, batch, spec.k, spec.k);
  return a;
}

std::string guard_message(const GdnVerifySpec& spec,
                          const std::function<void(GdnVerifyArgs&)>& edit) {
  return test::guard_message_of(valid_args(spec), edit,
                                [&](const GdnVerifyArgs& a) { check_gdn_verify_args(spec, a); });
}

}  // namespace

TEST_CASE("valid arguments pass the guards in every addressing mode", "[launch]") {
  for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
    const GdnVerifySpec spec{.k = 4, .addressing = addressing};
    CHECK(guard_message(spec, [](GdnVerifyArgs&) {}) == "accepted");
  }
}

TEST_CASE("launch guards name the argument and its value", "[launch]") {
  const GdnVerifySpec spec{.k = 4};
  const auto msg = [&](const std::function<void(GdnVerifyArgs&)>& edit) {
    return guard_message(spec, edit);
  };
  CHECK_THAT(msg([](auto& a) { a.k = 5; }), Catch::Contains("args.k is 5, must be 4"));
  CHECK_THAT(msg([](auto& a) { a.dk = 64; }), Catch::Contains("args.dk is 64, must be 128"));
  CHECK_THAT(msg([](auto& a) { a.dv = 256; }), Catch::Contains("args.dv is 256, must be 128"));
  CHECK_THAT(msg([](auto& a) { a.batch = 0; }), Catch::Contains("args.batch is 0"));
  CHECK_THAT(msg([](auto& a) { a.num_k_heads = 0; }), Catch::Contains("args.num_k_heads is 0"));
  CHECK_THAT(msg([](auto& a) { a.num_v_heads = 0; }), Catch::Contains("args.num_v_heads is 0"));
  CHECK_THAT(msg([](auto& a) { a.num_k_heads = 12; }),
             Catch::Contains("num_v_heads is 32, must be a multiple of args.num_k_heads = 12"));
  CHECK_THAT(msg([](auto& a) { a.scale = std::numeric_limits<float>::quiet_NaN(); }),
             Catch::Contains("args.scale"));
  CHECK_THAT(msg([](auto& a) { a.batch = 600'000'000; }), Catch::Contains("grid limit"));
  CHECK_THAT(msg([](auto& a) { a.q = nullptr; }), Catch::Contains("args.q is null"));
  CHECK_THAT(msg([](auto& a) { a.k_in = nullptr; }), Catch::Contains("args.k_in is null"));
  CHECK_THAT(msg([](auto& a) { a.v = nullptr; }), Catch::Contains("args.v is null"));
  CHECK_THAT(msg([](auto& a) { a.out = nullptr; }), Catch::Contains("args.out is null"));
  CHECK_THAT(msg([](auto& a) { a.g = nullptr; }), Catch::Contains("args.g is null"));
  CHECK_THAT(msg([](auto& a) { a.beta = nullptr; }), Catch::Contains("args.beta is null"));
  CHECK_THAT(msg([](auto& a) { a.states.state = nullptr; }),
             Catch::Contains("args.states.state is null"));
  CHECK_THAT(msg([](auto& a) { a.states.inter = nullptr; }),
             Catch::Contains("args.states.inter is null"));
  CHECK_THAT(msg([](auto& a) { a.q = fake(0x10002); }),
             Catch::Contains("args.q = 0x10002 is not aligned to 8 bytes"));
  CHECK_THAT(msg([](auto& a) { a.states.state = fake(0x1000008); }),
             Catch::Contains("args.states.state = 0x1000008 is not aligned to 16 bytes"));
  CHECK_THAT(msg([](auto& a) { a.qk_stride = 100; }),
             Catch::Contains("args.qk_stride is 100, must be >= 2048"));
  CHECK_THAT(msg([](auto& a) { a.qk_stride = 2050; }),
             Catch::Contains("args.qk_stride is 2050, must be a multiple of 4"));
  CHECK_THAT(msg([](auto& a) { a.v_stride = 4095; }), Catch::Contains("args.v_stride is 4095"));
  CHECK_THAT(msg([](auto& a) { a.o_stride = 12; }), Catch::Contains("args.o_stride is 12"));
  CHECK_THAT(msg([](auto& a) { a.gb_stride = 31; }), Catch::Contains("args.gb_stride is 31"));
  CHECK_THAT(msg([](auto& a) { a.states.state_seq_stride = 1000; }),
             Catch::Contains("args.states.state_seq_stride is 1000, must be >= 524288"));
  CHECK_THAT(msg([](auto& a) { a.states.inter_tok_stride = 1000; }),
             Catch::Contains("args.states.inter_tok_stride is 1000, must be >= 524288"));
  CHECK_THAT(msg([](auto& a) { a.states.inter_seq_stride = 524288; }),
             Catch::Contains("args.states.inter_seq_stride is 524288, must be >= 1572864"));
  // Token-major intermediate states are fine when they do not overlap.
  CHECK(msg([](auto& a) {
          a.states.inter_seq_stride = 524288;
          a.states.inter_tok_stride = 3 * 524288;
        }) == "accepted");
}

TEST_CASE("K = 1 needs no intermediate states; batch 1 needs no sequence stride", "[launch]") {
  const GdnVerifySpec spec{.k = 1};
  CHECK(guard_message(spec, [](auto& a) {
          a.states.inter = nullptr;
          a.states.inter_seq_stride = 0;
          a.states.inter_tok_stride = 0;
        }) == "accepted");
  GdnVerifyArgs a = valid_args(GdnVerifySpec{.k = 4}, 1);
  a.states.state_seq_stride = 0;
  CHECK_NOTHROW(check_gdn_verify_args(GdnVerifySpec{.k = 4}, a));
}

TEST_CASE("table and slot guards", "[launch]") {
  const GdnVerifySpec table{.k = 4, .addressing = Addressing::table};
  CHECK_THAT(guard_message(table, [](auto& a) { a.states.tables = nullptr; }),
             Catch::Contains("args.states.tables is null: stage the pointer tables first"));
  CHECK_THAT(guard_message(table, [](auto& a) { a.states.slab_stride = 2; }),
             Catch::Contains("args.states.slab_stride is 2, must be >= 3"));
  CHECK(guard_message(table, [](auto& a) { a.states.state = nullptr; }) == "accepted");
  const GdnVerifySpec slot{.k = 4, .addressing = Addressing::slot};
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.read_slot = nullptr; }),
             Catch::Contains("args.states.read_slot is null"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.write_slot = nullptr; }),
             Catch::Contains("args.states.write_slot is null"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.write_slot_stride = 3; }),
             Catch::Contains("args.states.write_slot_stride is 3, must be >= 4"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.num_slots = 0; }),
             Catch::Contains("args.states.num_slots is 0"));
  CHECK_THAT(guard_message(slot, [](auto& a) { a.states.slot_stride = 5; }),
             Catch::Contains("args.states.slot_stride is 5"));
}

TEST_CASE("fused gating needs a, b, A_log and dt_bias instead of g and beta", "[launch]") {
  const GdnVerifySpec spec{.k = 4, .fused_gating = true};
  const auto with_gating = [](GdnVerifyArgs& a) {
    a.g = nullptr;
    a.beta = nullptr;
    a.a = fake(0xa0000);
    a.b = fake(0xb0000);
    a.a_log = fake<const float>(0xc0000);
    a.dt_bias = fake<const float>(0xd0000);
  };
  CHECK(guard_message(spec, with_gating) == "accepted");
  CHECK_THAT(guard_message(spec,
                           [&](auto& a) {
                             with_gating(a);
                             a.a_log = nullptr;
                           }),
             Catch::Contains("args.a_log is null"));
}

TEST_CASE("launch refuses a kernel with no handle after the guards pass", "[launch]") {
  const GdnVerifySpec spec{.k = 4};
  const Kernel kernel(spec);
  CHECK_THROWS_WITH(launch_gdn_verify(kernel, valid_args(spec), nullptr),
                    Catch::Contains("no function handle for its 'verify' kernel"));
  GdnVerifyArgs bad = valid_args(spec);
  bad.k = 3;
  CHECK_THROWS_WITH(launch_gdn_verify(kernel, bad, nullptr), Catch::Contains("args.k is 3"));
  const Kernel other(Conv1dUpdateSpec{.k = 4});
  CHECK_THROWS_WITH(launch_gdn_verify(other, valid_args(spec), nullptr),
                    Catch::Contains("the kernel is a conv1d_update variant, not gdn_verify"));
}
