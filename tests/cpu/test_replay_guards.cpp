// SPDX-License-Identifier: Apache-2.0
// gdn_replay's launch guards (verify, commit, materialize) fire with the argument's name and
// value, before any driver call, in C++ and through the C API.
#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "guard_test_support.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_replay.hpp"
#include "wyjit/wyjit.h"

using namespace wyjit;

namespace {

using test::fake;

constexpr int kBatch = 3;
constexpr int kHk = 16;
constexpr int kHv = 32;
constexpr std::int64_t kTile = std::int64_t{kHv} * 128 * 128;

// A log tile's references, valid in every mode: read (and updated) in place, no write slots.
void fake_log_refs(StateRefs& r, std::int64_t floats) {
  r.state = fake(0x2000000);
  r.state_seq_stride = floats;
  r.tables = fake<void* const>(0x71000);
  r.slab_stride = kBatch;
  r.slot_stride = floats;
  r.num_slots = 10;
  r.read_slot = fake<const std::int32_t>(0x81000);
}

GdnReplayVerifyArgs valid_verify(const GdnReplaySpec& spec) {
  GdnReplayVerifyArgs a;
  a.batch = kBatch;
  a.num_k_heads = kHk;
  a.num_v_heads = kHv;
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
  a.qk_stride = kHk * 128;
  a.v_stride = kHv * 128;
  a.gb_stride = kHv;
  a.o_stride = kHv * 128;
  test::fake_state_addressing(a.states, kTile, kBatch, 1, 1);
  fake_log_refs(a.log, gdn_replay_log_floats(spec, kHk, kHv));
  a.cursor = fake<const std::int32_t>(0xa0000);
  a.cursor_stride = 2;
  return a;
}

GdnReplayCommitArgs valid_commit(const GdnReplaySpec& spec) {
  GdnReplayCommitArgs a;
  a.batch = kBatch;
  a.k = spec.k;
  a.cursor = fake<std::int32_t>(0xa0000);
  a.cursor_stride = 2;
  a.accepted = fake<const std::int32_t>(0xb0000);
  return a;
}

GdnReplayMaterializeArgs valid_materialize(const GdnReplaySpec& spec) {
  GdnReplayMaterializeArgs a;
  a.batch = kBatch;
  a.num_k_heads = kHk;
  a.num_v_heads = kHv;
  a.dk = spec.dk;
  a.dv = spec.dv;
  test::fake_state_addressing(a.states, kTile, kBatch, 1, 1);
  fake_log_refs(a.log, gdn_replay_log_floats(spec, kHk, kHv));
  a.cursor = fake<const std::int32_t>(0xa0000);
  a.cursor_stride = 2;
  test::fake_state_addressing(a.out, kTile, kBatch, 1, 1);
  a.out.state = fake(0x3000000);
  a.out.read_slot = nullptr;  // write-only: no read slots
  return a;
}

std::string verify_message(const GdnReplaySpec& spec,
                           const std::function<void(GdnReplayVerifyArgs&)>& edit) {
  return test::guard_message_of(valid_verify(spec), edit, [&](const GdnReplayVerifyArgs& a) {
    check_gdn_replay_verify_args(spec, a);
  });
}

std::string commit_message(const GdnReplaySpec& spec,
                           const std::function<void(GdnReplayCommitArgs&)>& edit) {
  return test::guard_message_of(valid_commit(spec), edit, [&](const GdnReplayCommitArgs& a) {
    check_gdn_replay_commit_args(spec, a);
  });
}

std::string materialize_message(const GdnReplaySpec& spec,
                                const std::function<void(GdnReplayMaterializeArgs&)>& edit) {
  return test::guard_message_of(
      valid_materialize(spec), edit,
      [&](const GdnReplayMaterializeArgs& a) { check_gdn_replay_materialize_args(spec, a); });
}

}  // namespace

TEST_CASE("gdn_replay: the log tile is L entries of k, u and G", "[launch][replay]") {
  const GdnReplaySpec spec{.k = 4, .log = 16};
  CHECK(gdn_replay_log_floats(spec, kHk, kHv) == 16 * (kHk * 128 + kHv * 128 + kHv));
  CHECK(gdn_replay_log_floats(GdnReplaySpec{.k = 2, .log = 8, .dk = 64, .dv = 256}, 2, 8) ==
        8 * (2 * 64 + 8 * 256 + 8));
}

TEST_CASE("gdn_replay: valid arguments pass every guard in every addressing mode",
          "[launch][replay]") {
  for (const Addressing addressing : {Addressing::strided, Addressing::table, Addressing::slot}) {
    for (const Layout layout : {Layout::vk, Layout::kv}) {
      const GdnReplaySpec spec{.k = 4, .log = 16, .addressing = addressing, .layout = layout};
      INFO(static_cast<int>(addressing) << " " << static_cast<int>(layout));
      CHECK(verify_message(spec, [](auto&) {}) == "accepted");
      CHECK(commit_message(spec, [](auto&) {}) == "accepted");
      CHECK(materialize_message(spec, [](auto&) {}) == "accepted");
    }
  }
}

TEST_CASE("gdn_replay verify: guards name the argument and its value", "[launch][replay]") {
  const GdnReplaySpec spec{.k = 4, .log = 16};
  const auto msg = [&](const std::function<void(GdnReplayVerifyArgs&)>& edit) {
    return verify_message(spec, edit);
  };
  CHECK_THAT(msg([](auto& a) { a.k = 5; }), Catch::Contains("args.k is 5, must be 4"));
  CHECK_THAT(msg([](auto& a) { a.dk = 64; }), Catch::Contains("args.dk is 64, must be 128"));
  CHECK_THAT(msg([](auto& a) { a.batch = 0; }), Catch::Contains("args.batch is 0"));
  CHECK_THAT(msg([](auto& a) { a.num_k_heads = 12; }),
             Catch::Contains("num_v_heads is 32, must be a multiple of args.num_k_heads = 12"));
  CHECK_THAT(msg([](auto& a) { a.q = nullptr; }), Catch::Contains("args.q is null"));
  CHECK_THAT(msg([](auto& a) { a.out = nullptr; }), Catch::Contains("args.out is null"));
  CHECK_THAT(msg([](auto& a) { a.g = nullptr; }), Catch::Contains("args.g is null"));
  CHECK_THAT(msg([](auto& a) { a.qk_stride = 100; }), Catch::Contains("args.qk_stride is 100"));
  CHECK_THAT(msg([](auto& a) { a.states.state = nullptr; }),
             Catch::Contains("args.states.state is null"));
  CHECK_THAT(msg([](auto& a) { a.states.state_seq_stride = kTile - 4; }),
             Catch::Contains("args.states.state_seq_stride is " + std::to_string(kTile - 4)));
  CHECK_THAT(msg([](auto& a) { a.log.state = nullptr; }),
             Catch::Contains("args.log.state is null"));
  CHECK_THAT(msg([](auto& a) { a.log.state = fake(0x2000004); }),
             Catch::Contains("args.log.state"));
  const std::int64_t floats = gdn_replay_log_floats(spec, kHk, kHv);
  CHECK_THAT(msg([&](auto& a) { a.log.state_seq_stride = floats - 4; }),
             Catch::Contains("args.log.state_seq_stride is " + std::to_string(floats - 4)) &&
                 Catch::Contains("L*(num_k_heads*dk + num_v_heads*dv + num_v_heads)"));
  CHECK_THAT(msg([](auto& a) { a.cursor = nullptr; }), Catch::Contains("args.cursor is null"));
  CHECK_THAT(msg([](auto& a) { a.cursor = fake<const std::int32_t>(0xa0002); }),
             Catch::Contains("args.cursor"));
  CHECK_THAT(msg([](auto& a) { a.cursor_stride = 1; }),
             Catch::Contains("args.cursor_stride is 1, must be >= 2"));
  CHECK_THAT(msg([](auto& a) { a.path = 3; }),
             Catch::Contains("args.path is 3") && Catch::Contains("_IN_TURN (1) or _WY (2)"));
  CHECK_THAT(msg([](auto& a) { a.path = -1; }), Catch::Contains("args.path is -1"));
}

TEST_CASE("gdn_replay verify: the log's references are checked in each addressing mode",
          "[launch][replay]") {
  const GdnReplaySpec table{.k = 2, .log = 8, .addressing = Addressing::table};
  CHECK_THAT(verify_message(table, [](auto& a) { a.log.tables = nullptr; }),
             Catch::Contains("args.log.tables is null"));
  const GdnReplaySpec slot{.k = 2, .log = 8, .addressing = Addressing::slot};
  CHECK_THAT(verify_message(slot, [](auto& a) { a.log.read_slot = nullptr; }),
             Catch::Contains("args.log.read_slot is null"));
  CHECK_THAT(verify_message(slot, [](auto& a) { a.log.num_slots = 0; }),
             Catch::Contains("args.log.num_slots is 0"));
  // The log is updated in place: it needs no write slots.
  CHECK(verify_message(slot, [](auto& a) { a.log.write_slot = nullptr; }) == "accepted");
  // A fold writes the checkpoint to write_slot[b]: the checkpoint needs one.
  CHECK_THAT(verify_message(slot, [](auto& a) { a.states.write_slot = nullptr; }),
             Catch::Contains("args.states.write_slot is null"));
}

TEST_CASE("gdn_replay commit: guards name the argument and its value", "[launch][replay]") {
  const GdnReplaySpec spec{.k = 4, .log = 16};
  const auto msg = [&](const std::function<void(GdnReplayCommitArgs&)>& edit) {
    return commit_message(spec, edit);
  };
  CHECK_THAT(msg([](auto& a) { a.k = 3; }), Catch::Contains("args.k is 3, must be 4"));
  CHECK_THAT(msg([](auto& a) { a.batch = 0; }), Catch::Contains("args.batch is 0"));
  CHECK_THAT(msg([](auto& a) { a.cursor = nullptr; }), Catch::Contains("args.cursor is null"));
  CHECK_THAT(msg([](auto& a) { a.cursor_stride = 0; }),
             Catch::Contains("args.cursor_stride is 0, must be >= 2"));
  CHECK_THAT(msg([](auto& a) { a.accepted = nullptr; }), Catch::Contains("args.accepted is null"));
}

TEST_CASE("gdn_replay materialize: guards name the argument and its value", "[launch][replay]") {
  const GdnReplaySpec spec{.k = 4, .log = 16};
  const auto msg = [&](const std::function<void(GdnReplayMaterializeArgs&)>& edit) {
    return materialize_message(spec, edit);
  };
  CHECK_THAT(msg([](auto& a) { a.dv = 64; }), Catch::Contains("args.dv is 64, must be 128"));
  CHECK_THAT(msg([](auto& a) { a.num_v_heads = 0; }), Catch::Contains("args.num_v_heads is 0"));
  CHECK_THAT(msg([](auto& a) { a.num_k_heads = 5; }),
             Catch::Contains("num_v_heads is 32, must be a multiple of args.num_k_heads = 5"));
  CHECK_THAT(msg([](auto& a) { a.batch = 600'000'000; }), Catch::Contains("grid limit"));
  CHECK_THAT(msg([](auto& a) { a.out.state = nullptr; }),
             Catch::Contains("args.out.state is null"));
  CHECK_THAT(msg([](auto& a) { a.log.state = nullptr; }),
             Catch::Contains("args.log.state is null"));
  const GdnReplaySpec slot{.k = 4, .log = 16, .addressing = Addressing::slot};
  CHECK_THAT(materialize_message(slot, [](auto& a) { a.out.write_slot = nullptr; }),
             Catch::Contains("args.out.write_slot is null"));
  // Materialize writes nothing of the checkpoint: no write slots needed there.
  CHECK(materialize_message(slot, [](auto& a) { a.states.write_slot = nullptr; }) == "accepted");
}

TEST_CASE("gdn_replay: the C checks say what the C++ checks say", "[launch][replay][c_api]") {
  const GdnReplaySpec spec{.k = 4, .log = 16};
  const std::string name = "gdn_replay.k4.l16.io_bf16.st_f32.strided.vk.d128";
  GdnReplayVerifyArgs verify = valid_verify(spec);
  CHECK(wyjit_check_gdn_replay_verify(name.c_str(), &verify) == WYJIT_OK);
  verify.cursor_stride = 1;
  CHECK(wyjit_check_gdn_replay_verify(name.c_str(), &verify) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(wyjit_last_error()), Catch::Contains("args.cursor_stride is 1"));
  GdnReplayCommitArgs commit = valid_commit(spec);
  CHECK(wyjit_check_gdn_replay_commit(name.c_str(), &commit) == WYJIT_OK);
  commit.accepted = nullptr;
  CHECK(wyjit_check_gdn_replay_commit(name.c_str(), &commit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(wyjit_last_error()), Catch::Contains("args.accepted is null"));
  GdnReplayMaterializeArgs materialize = valid_materialize(spec);
  CHECK(wyjit_check_gdn_replay_materialize(name.c_str(), &materialize) == WYJIT_OK);
  // A variant of another family is refused by name.
  CHECK(wyjit_check_gdn_replay_verify("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", &verify) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
}
