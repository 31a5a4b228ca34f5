// SPDX-License-Identifier: Apache-2.0
// conv1d_update on the CPU: variant names, stamped source, NVRTC compiles, and the
// double-precision reference against hand-computed cases.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "common/conv1d_reference.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

using namespace wyjit;

namespace {

std::string rejection(const std::string& name) {
  try {
    parse_spec(name);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_spec);
    return e.what();
  }
  FAIL("'" << name << "' was accepted");
  return {};
}

std::string validation(const Conv1dUpdateSpec& s) {
  try {
    validate_spec(s);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_spec);
    return e.what();
  }
  return "accepted";
}

Conv1dUpdateSpec conv(int k, DType io = DType::bf16) { return Conv1dUpdateSpec{.k = k, .io = io}; }

}  // namespace

TEST_CASE("conv1d_update names round-trip for every supported variant", "[spec][conv1d]") {
  int checked = 0;
  for (int k = 1; k <= 32; ++k) {
    for (DType io : {DType::f32, DType::f16, DType::bf16}) {
      for (int width = 2; width <= 8; ++width) {
        for (int weight_index = 0; weight_index < (io == DType::f32 ? 1 : 2); ++weight_index) {
          const DType weight = weight_index == 0 ? DType::f32 : io;
          for (Rollback rollback : {Rollback::intermediate, Rollback::window}) {
            for (Addressing addressing :
                 {Addressing::strided, Addressing::table, Addressing::slot}) {
              for (int options = 0; options < 4; ++options) {
                Conv1dUpdateSpec s = conv(k, io);
                s.addressing = addressing;
                s.width = width;
                s.weight = weight;
                s.bias = (options & 1) != 0;
                s.silu = (options & 2) != 0;
                s.rollback = rollback;
                const std::string name = format_spec(s);
                INFO(name);
                REQUIRE(parse_spec(name) == KernelSpec(s));
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  CHECK(checked == 32 * 5 * 7 * 2 * 3 * 4);
}

TEST_CASE("conv1d_update canonical names look the way the header says", "[spec][conv1d]") {
  Conv1dUpdateSpec s = conv(4);
  s.rollback = Rollback::window;
  s.bias = true;
  s.silu = true;
  CHECK(format_spec(s) == "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu");
  Conv1dUpdateSpec t = conv(17, DType::f16);
  t.width = 2;
  t.weight = DType::f16;
  t.addressing = Addressing::slot;
  CHECK(format_spec(t) == "conv1d_update.k17.io_f16.w2.wt_f16.intermediate.slot");
  CHECK(
      std::get<Conv1dUpdateSpec>(parse_spec("conv1d_update.k1.io_f32.w8.wt_f32.window.table.silu"))
          .width == 8);
  // gdn_verify names are unchanged by the other family's fields.
  CHECK(format_spec(KernelSpec{}) == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128");
}

TEST_CASE("bad conv1d_update names are rejected naming the field", "[spec][conv1d]") {
  const std::string good = "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided";
  CHECK_NOTHROW(parse_spec(good));
  CHECK_THAT(rejection("conv1d_updat.k4.io_bf16.w4.wt_f32.window.strided"),
             Catch::Contains("family") && Catch::Contains("conv1d_update"));
  CHECK_THAT(rejection("conv1d_update.k33.io_bf16.w4.wt_f32.window.strided"),
             Catch::Contains("K is 33"));
  CHECK_THAT(rejection("conv1d_update.k4.io_f64.w4.wt_f32.window.strided"),
             Catch::Contains("io dtype"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.x4.wt_f32.window.strided"),
             Catch::Contains("width is 'x4'") && Catch::Contains("w2..w8"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w1.wt_f32.window.strided"),
             Catch::Contains("width is 1") && Catch::Contains("2..8"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w9.wt_f32.window.strided"),
             Catch::Contains("width is 9"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w04.wt_f32.window.strided"),
             Catch::Contains("width"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w4.st_f32.window.strided"),
             Catch::Contains("weight dtype") && Catch::Contains("wt_f32"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w4.wt_f16.window.strided"),
             Catch::Contains("weight is f16") && Catch::Contains("bf16 (the io dtype) or f32"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w4.wt_f32.replay.strided"),
             Catch::Contains("rollback is 'replay'") && Catch::Contains("intermediate, window"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.w4.wt_f32.window.paged"),
             Catch::Contains("addressing") && Catch::Contains("slot"));
  CHECK_THAT(rejection(good + ".silu.bias"), Catch::Contains("option is 'bias'"));
  CHECK_THAT(rejection(good + ".bias.bias"), Catch::Contains("option"));
  CHECK_THAT(rejection(good + ".l2norm"), Catch::Contains("option") && Catch::Contains("silu"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16"), Catch::Contains("width"));
  // A gdn_verify name cannot carry conv options, nor the reverse.
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.silu"),
             Catch::Contains("option"));
  CHECK_THAT(rejection("conv1d_update.k4.io_bf16.st_f32.strided.vk.d128"),
             Catch::Contains("width"));
}

// NOTE: a family's spec holds only its own fields, so "a field the family does not use" cannot
// be set; what remains is each field's range and the family's rule across fields.
TEST_CASE("conv1d_update specs are checked field by field and across fields", "[spec][conv1d]") {
  const auto with = [](Conv1dUpdateSpec s, auto edit) {
    edit(s);
    return validation(s);
  };
  const Conv1dUpdateSpec c = conv(4);
  CHECK(validation(c) == "accepted");
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.k = 0; }), Catch::Contains("K is 0"));
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.width = 1; }), Catch::Contains("width is 1"));
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.width = 9; }), Catch::Contains("width is 9"));
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.weight = DType::f16; }),
             Catch::Contains("weight is f16"));
  CHECK(with(c, [](Conv1dUpdateSpec& s) { s.weight = DType::bf16; }) == "accepted");
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.rollback = static_cast<Rollback>(2); }),
             Catch::Contains("rollback is 2") && Catch::Contains("intermediate, window"));
  CHECK_THAT(with(c, [](Conv1dUpdateSpec& s) { s.addressing = static_cast<Addressing>(-1); }),
             Catch::Contains("addressing is -1"));
}

TEST_CASE("conv1d_update stamped source is self-contained and instantiates the spec",
          "[stamp][conv1d]") {
  Conv1dUpdateSpec spec = conv(5, DType::f16);
  spec.width = 3;
  spec.rollback = Rollback::window;
  spec.addressing = Addressing::table;
  spec.silu = true;
  const detail::StampedSource s = detail::stamp(spec);
  const std::string config =
      "wyjit_kernels::Conv1dUpdateConfig<5, 3, wyjit_kernels::Half, float, "
      "wyjit_kernels::kAddrTable, wyjit_kernels::kRollbackWindow, false, true> >";
  REQUIRE(s.name_expressions.size() == 2);
  CHECK(s.name_expressions[0] == "wyjit_kernels::conv1d_update_wide_kernel<" + config);
  CHECK(s.name_expressions[1] == "wyjit_kernels::conv1d_update_narrow_kernel<" + config);
  for (const std::string& name : s.name_expressions) {
    CHECK_THAT(s.text, Catch::Contains("template __global__ void " + name +
                                       "(const wyjit_kernels::Conv1dUpdateParams);"));
  }
  CHECK(s.program_name == "conv1d_update.k5.io_f16.w3.wt_f32.window.table.silu.cu");
  CHECK(s.text.find("#include") == std::string::npos);
  CHECK_THAT(s.text, Catch::Contains("// ---- kernel_src/common/types.cuh"));
  CHECK_THAT(s.text, Catch::Contains("// ---- kernel_src/common/state_refs.cuh"));
  CHECK(s.text.find("GdnVerifyParams") == std::string::npos);
  CHECK(s.text.find("struct Conv1dUpdateParams {") == s.text.rfind("struct Conv1dUpdateParams {"));
  CHECK(stamped_source(spec) == s.text);
}

TEST_CASE("NVRTC compiles a sample of conv1d_update variants without warnings", "[nvrtc][conv1d]") {
  const std::vector<int> supported = detail::nvrtc_supported_archs();
  int compiled = 0;
  for (const int k : {1, 4, 17, 32}) {
    for (const DType io : {DType::f32, DType::f16, DType::bf16}) {
      Conv1dUpdateSpec spec = conv(k, io);
      spec.width = k == 32 ? 8 : (k == 1 ? 2 : 4);
      spec.weight = k % 2 == 0 ? DType::f32 : io;
      spec.bias = k != 4;
      spec.silu = k != 17;
      spec.rollback =
          (k + static_cast<int>(io)) % 2 == 0 ? Rollback::window : Rollback::intermediate;
      spec.addressing = static_cast<Addressing>((k + static_cast<int>(io)) % 3);
      std::vector<Target> targets{Target{.arch = 90}};
      if (k == 4 && io == DType::bf16) {
        targets.push_back(Target{.arch = supported.front()});
        targets.push_back(Target{.arch = supported.back()});
        targets.push_back(Target{.arch = 80, .ptx = true});
      }
      const detail::StampedSource s = detail::stamp(spec);
      for (const Target& target : targets) {
        INFO(format_spec(spec) << " for " << target.name());
        const detail::NvrtcResult r = detail::nvrtc_compile(
            s.text, s.program_name, s.name_expressions, target, format_spec(spec));
        CHECK(r.log.empty());
        CHECK(r.binary.size() > 1000);
        REQUIRE(r.lowered_names.size() == 2);
        for (const std::string& lowered : r.lowered_names) {
          CHECK_THAT(lowered, Catch::StartsWith("_Z"));
        }
        ++compiled;
      }
    }
  }
  CHECK(compiled == 15);
}

// ---- the reference, against sums worked out by hand ----

TEST_CASE("conv1d reference: W=3, K=2, two channels, worked by hand", "[reference][conv1d]") {
  test::Conv1dProblem p;
  p.batch = 1;
  p.channels = 2;
  p.k = 2;
  p.width = 3;
  p.x = {3, 2,    // t = 0: channel 0, channel 1
         4, -2};  // t = 1
  p.weight = {1, 10, 100, 0.5f, -1, 2};
  p.state0 = {1, 2, -1, 0.5f};
  test::Conv1dReference r = test::conv1d_reference(p);
  // y_t[c] = sum_w weight[c][w] * z[t+w], z = state0 then x.
  CHECK(r.y == std::vector<double>{1 * 1 + 10 * 2 + 100 * 3, 0.5 * -1 + -1 * 0.5 + 2 * 2,
                                   1 * 2 + 10 * 3 + 100 * 4, 0.5 * 0.5 + -1 * 2 + 2 * -2});
  CHECK(r.y == std::vector<double>{321, 3, 432, -5.75});
  // States after t = 0 and t = 1, [t][c][j]; the window [c][j].
  CHECK(r.states == std::vector<float>{2, 3, 0.5f, 2, 3, 4, 2, -2});
  CHECK(r.window == std::vector<float>{1, 2, 3, 4, -1, 0.5f, 2, -2});

  p.bias = true;
  p.silu = true;
  p.bias_values = {0.5f, -1};
  r = test::conv1d_reference(p);
  CHECK(r.y[1] == Approx(2.0 / (1.0 + std::exp(-2.0))));  // silu(3 - 1)
  CHECK(r.y[1] == Approx(1.7615941559557649));
  CHECK(r.y[3] == Approx(-6.75 / (1.0 + std::exp(6.75))));
  CHECK(r.y[0] == Approx(321.5));  // silu(v) -> v for large v
  CHECK(test::conv1d_silu(0.0) == 0.0);
}

TEST_CASE("conv1d reference: W=2, K=1, two sequences", "[reference][conv1d]") {
  test::Conv1dProblem p;
  p.batch = 2;
  p.channels = 1;
  p.k = 1;
  p.width = 2;
  p.x = {5, 7};
  p.weight = {2, 3};
  p.state0 = {1, -1};
  const test::Conv1dReference r = test::conv1d_reference(p);
  CHECK(r.y == std::vector<double>{2 * 1 + 3 * 5, 2 * -1 + 3 * 7});
  CHECK(r.states == std::vector<float>{5, 7});
}

TEST_CASE("conv1d reference: K tokens at once equal K single-token steps", "[reference][conv1d]") {
  const test::Conv1dProblem p = test::make_random_conv1d_problem(
      {.batch = 3, .channels = 7, .k = 6, .width = 4, .bias = true, .silu = true},
      test::IoType::bf16, test::IoType::f32, 11);
  const test::Conv1dReference all = test::conv1d_reference(p);
  std::vector<float> state = p.state0;
  const std::size_t C = 7, H = 3;
  for (int t = 0; t < p.k; ++t) {
    test::Conv1dProblem one = p;
    one.k = 1;
    one.state0 = state;
    one.x.clear();
    for (int b = 0; b < p.batch; ++b) {
      for (std::size_t c = 0; c < C; ++c) one.x.push_back(p.x[(b * p.k + t) * C + c]);
    }
    const test::Conv1dReference step = test::conv1d_reference(one);
    for (int b = 0; b < p.batch; ++b) {
      for (std::size_t c = 0; c < C; ++c) {
        CHECK(step.y[b * C + c] == all.y[(b * p.k + t) * C + c]);
        for (std::size_t j = 0; j < H; ++j) {
          CHECK(step.states[(b * C + c) * H + j] == all.states[((b * p.k + t) * C + c) * H + j]);
          // The window's columns [t+1, t+1+H) are the state after token t.
          CHECK(all.window[(b * C + c) * (H + p.k) + t + 1 + j] ==
                step.states[(b * C + c) * H + j]);
        }
      }
    }
    state = step.states;
  }
  CHECK_THROWS_AS(test::conv1d_reference(test::Conv1dProblem{}), std::invalid_argument);
}
