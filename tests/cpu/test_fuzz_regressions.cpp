// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets (fuzz/, docs/fuzzing.md) found, kept as tests so that every CPU test run
// checks it without a fuzzer (and CI's sanitizer tree reports any undefined behaviour on the way):
// launch checks that computed sizes past int64 from hostile strides and counts, and a CLI
// option that hung `wyjit precompile`.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "cli_test_support.hpp"
#include "guard_test_support.hpp"
#include "wyjit/wyjit.h"

namespace {

using wyjit::test::fake;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();

// The status of the check, with its message for the checks below.
struct Checked {
  wyjit_status status;
  std::string message;
};

// batch 3, HK 2, HV 4, dk = dv = 128, every pointer fake and aligned, strided tiles.
wyjit_gdn_verify_args gdn_verify_args(int k) {
  wyjit_gdn_verify_args a;
  wyjit_gdn_verify_args_init(&a);
  a.batch = 3;
  a.num_k_heads = 2;
  a.num_v_heads = 4;
  a.k = k;
  a.dk = a.dv = 128;
  a.scale = 0.125f;
  a.q = fake(0x10000);
  a.k_in = fake(0x20000);
  a.v = fake(0x30000);
  a.g = fake<const float>(0x40000);
  a.beta = fake<const float>(0x50000);
  a.out = fake(0x60000);
  a.qk_stride = 2 * 128;
  a.v_stride = a.o_stride = 4 * 128;
  a.gb_stride = 4;
  wyjit::test::fake_state_addressing(a.states, 4 * 128 * 128, 3, k, k);
  return a;
}

Checked check(const char* spec, const wyjit_gdn_verify_args& a) {
  const wyjit_status status = wyjit_check_gdn_verify(spec, &a);
  return {status, status == WYJIT_OK ? "" : wyjit_last_error()};
}

// batch 3, 96 channels, every pointer fake and aligned, [channels][state_cols] strided tiles.
wyjit_conv1d_update_args conv1d_args(int k, int width, bool window) {
  wyjit_conv1d_update_args a;
  wyjit_conv1d_update_args_init(&a);
  a.batch = 3;
  a.channels = 96;
  a.k = k;
  a.width = width;
  a.x = fake(0x10000);
  a.y = fake(0x20000);
  a.x_stride = a.y_stride = 96;
  a.weight = fake(0x30000);
  a.bias = fake(0x40000);
  a.state_cols = width - 1 + (window ? k : 0);
  a.state_channel_stride = a.state_cols;
  a.state_col_stride = 1;
  wyjit::test::fake_state_addressing(a.states, 96 * a.state_cols, 3, k, window ? 1 : k);
  a.window_offset = fake<const std::int32_t>(0x50000);
  return a;
}

Checked check(const char* spec, const wyjit_conv1d_update_args& a) {
  const wyjit_status status = wyjit_check_conv1d_update(spec, &a);
  return {status, status == WYJIT_OK ? "" : wyjit_last_error()};
}

constexpr const char* kVerifyK17 = "gdn_verify.k17.io_bf16.st_f32.strided.vk.d128";
constexpr const char* kConvIntermediate =
    "conv1d_update.k9.io_bf16.w4.wt_bf16.intermediate.strided.silu";
constexpr const char* kConvWindow = "conv1d_update.k4.io_bf16.w4.wt_bf16.window.strided.silu";

}  // namespace

TEST_CASE("fuzz: the helpers' arguments pass, so each case below changes one thing", "[fuzz]") {
  CHECK(check(kVerifyK17, gdn_verify_args(17)).message == "");
  CHECK(check(kConvIntermediate, conv1d_args(9, 4, false)).message == "");
  CHECK(check(kConvWindow, conv1d_args(4, 4, true)).message == "");
}

TEST_CASE("fuzz: intermediate states spanning beyond int64 are refused, not overflowed",
          "[fuzz][capi]") {
  // wyjit_fuzz_capi_check: inter_tok_stride * (K-1) overflowed in the overlap check.
  wyjit_gdn_verify_args a = gdn_verify_args(17);
  a.states.inter_seq_stride = 3761688987579986996;
  a.states.inter_tok_stride = 3761631588762255360;
  const Checked c = check(kVerifyK17, a);
  INFO(c.message);
  CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(c.message.find("args.states.inter_seq_stride is 3761688987579986996, must be >= "
                       "3761631588762255360 * 16, beyond int64") != std::string::npos);

  // Strides that fit still get the overlap check, with the span in the message.
  a.states.inter_tok_stride = 4 * 128 * 128;
  a.states.inter_seq_stride = 16 * a.states.inter_tok_stride - 4;
  const Checked overlap = check(kVerifyK17, a);
  INFO(overlap.message);
  CHECK(overlap.status == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(overlap.message.find("must be >= 1048576 (the intermediate states must not overlap") !=
        std::string::npos);
}

TEST_CASE("fuzz: conv1d tiles spanning beyond int64 are refused, not overflowed", "[fuzz][capi]") {
  SECTION("[state_cols][channels] tiles") {
    // wyjit_fuzz_capi_check: state_cols * state_col_stride overflowed.
    wyjit_conv1d_update_args a = conv1d_args(9, 4, false);
    a.state_channel_stride = 1;
    a.state_cols = 17169973579350017;
    a.state_col_stride = 432345564227764225;
    const Checked c = check(kConvIntermediate, a);
    INFO(c.message);
    CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
    CHECK(c.message.find("a tile spans args.state_cols * args.state_col_stride = "
                         "17169973579350017 * 432345564227764225 elements, beyond int64") !=
          std::string::npos);
  }
  SECTION("[channels][state_cols] tiles") {
    wyjit_conv1d_update_args a = conv1d_args(9, 4, false);
    a.state_channel_stride = kInt64Max;
    const Checked c = check(kConvIntermediate, a);
    INFO(c.message);
    CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
    CHECK(c.message.find("a tile spans args.channels * args.state_channel_stride = 96 * "
                         "9223372036854775807 elements, beyond int64") != std::string::npos);
  }
  SECTION("window tiles with a stride too long to stage in shared memory") {
    // 16 bytes a column: the shared-memory size of these rows was beyond int64 too.
    wyjit_conv1d_update_args a = conv1d_args(4, 4, true);
    for (const std::int64_t stride : {kInt64Max / 8, kInt64Max}) {
      a.state_channel_stride = stride;
      const Checked c = check(kConvWindow, a);
      INFO(c.message);
      CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
      CHECK(c.message.find("beyond int64") != std::string::npos);
    }
    a.state_channel_stride = std::numeric_limits<std::int64_t>::min();
    const Checked negative = check(kConvWindow, a);
    INFO(negative.message);
    CHECK(
        negative.message.find("args.state_channel_stride is -9223372036854775808, must be >= 7") !=
        std::string::npos);
  }
}

TEST_CASE("fuzz: conv1d's path choice with batch x words x K beyond int64", "[fuzz][capi]") {
  // wyjit_fuzz_capi_check: the automatic path multiplied batch, words of channels and K.
  wyjit_conv1d_update_args a = conv1d_args(9, 4, false);
  a.batch = kInt32Max;
  a.channels = kInt32Max;
  a.x_stride = a.y_stride = kInt32Max;
  const Checked c = check(kConvIntermediate, a);
  INFO(c.message);
  CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(c.message.find("beyond the grid limit") != std::string::npos);
}

TEST_CASE("fuzz: a GDN grid of batch x heads x blocks a head beyond int64", "[fuzz][capi]") {
  // wyjit_fuzz_capi_check: the grid-limit check multiplied batch, num_v_heads and the blocks of
  // a head in int64, which overflowed for int32-sized batch and head counts.
  wyjit_gdn_verify_args a = gdn_verify_args(17);
  a.batch = kInt32Max;
  a.num_v_heads = kInt32Max;
  a.num_k_heads = 1;
  const Checked c = check(kVerifyK17, a);
  INFO(c.message);
  CHECK(c.status == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(c.message.find("batch 2147483647 x num_v_heads 2147483647 needs 4611686014132420609 x") !=
        std::string::npos);
  CHECK(c.message.find("beyond the grid limit") != std::string::npos);
}

TEST_CASE("fuzz: precompile --FIELD= (no value) is a usage error, not a hang", "[fuzz][cli]") {
  // wyjit_fuzz_cli_args: `--FIELD=` matched neither form and the parser looped on it forever.
  using namespace wyjit::cli_test;
  for (const std::string option : {"--k", "--bias", "--rollback"}) {
    TempCacheDir cache;
    // NOTE: under `timeout`, so that the hang coming back fails the test instead of blocking it.
    const RunResult r =
        run_command("timeout 60 " + wyjit_command("") + " precompile --arch sm_90 " + option +
                    "= " + cache.arg() + " 2>&1");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("bad value '' for " + option + ": expected VALUES") != std::string::npos);
    CHECK(cache.empty());
  }
}
