// SPDX-License-Identifier: Apache-2.0
// The conv1d_update launch of the C API on the CPU: struct versioning, the argument checks (status
// and a last error naming the argument and its value) through both the check and the launch
// entry, and the clean failures of a machine without a GPU.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "capi/capi_internal.hpp"
#include "guard_test_support.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

namespace fs = std::filesystem;

std::string last_error() { return wyjit_last_error(); }

using wyjit::test::fake;

// A variant by name, with its fields read through the C++ API (the C API has only names).
struct Variant {
  const char* name;
  wyjit::Conv1dUpdateSpec spec;
};

Variant parse(const char* name) {
  INFO(name);
  REQUIRE(wyjit_spec_validate(name) == WYJIT_OK);
  return Variant{name, std::get<wyjit::Conv1dUpdateSpec>(wyjit::parse_spec(name))};
}

// batch 3, 96 channels, [channels][state_cols] tiles; every pointer fake and well aligned.
wyjit_conv1d_update_args valid_args(const Variant& variant) {
  const wyjit::Conv1dUpdateSpec& spec = variant.spec;
  wyjit_conv1d_update_args a;
  wyjit_conv1d_update_args_init(&a);
  const bool window = spec.rollback == wyjit::Rollback::window;
  a.batch = 3;
  a.channels = 96;
  a.k = spec.k;
  a.width = spec.width;
  a.x = fake(0x10000);
  a.y = fake(0x20000);
  a.x_stride = 96;
  a.y_stride = 96;
  a.weight = fake(0x30000);
  a.bias = fake(0x40000);
  a.state_cols = window ? spec.width - 1 + spec.k : spec.width - 1;
  a.state_channel_stride = a.state_cols;
  a.state_col_stride = 1;
  const std::int64_t tile = 96 * a.state_cols;
  wyjit::test::fake_state_addressing(a.states, tile, 3, spec.k, window ? 1 : spec.k);
  a.window_offset = fake<const std::int32_t>(0xa0000);
  return a;
}

// The status of wyjit_check_conv1d_update for valid_args(spec) after `edit`.
wyjit_status check_edited(const Variant& spec,
                          const std::function<void(wyjit_conv1d_update_args&)>& edit) {
  wyjit_conv1d_update_args a = valid_args(spec);
  edit(a);
  return wyjit_check_conv1d_update(spec.name, &a);
}

constexpr const char* kIntermediate =
    "conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.strided.silu";
constexpr const char* kWindowSlot = "conv1d_update.k3.io_f16.w4.wt_f32.window.slot.bias.silu";

}  // namespace

TEST_CASE("C API conv1d: args_init sets struct_size; other sizes are refused", "[capi][conv1d]") {
  wyjit_conv1d_update_args args;
  wyjit_conv1d_update_args_init(&args);
  CHECK(args.struct_size == sizeof args);
  CHECK(args.batch == 0);
  CHECK(args.x == nullptr);
  CHECK(args.window_offset == nullptr);
  wyjit_conv1d_update_args_init(nullptr);  // ignored

  const Variant spec = parse(kIntermediate);
  wyjit_conv1d_update_args zeroed{};
  zeroed.struct_size = 0;
  CHECK(wyjit_check_conv1d_update(spec.name, &zeroed) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_check_conv1d_update") &&
                               Catch::Contains("wyjit_conv1d_update_args.struct_size is 0") &&
                               Catch::Contains("expects " + std::to_string(sizeof zeroed)));
  wyjit_conv1d_update_args small = valid_args(spec);
  small.struct_size = sizeof small - 8;
  CHECK(wyjit_check_conv1d_update(spec.name, &small) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("struct_size is " + std::to_string(sizeof small - 8)));
}

TEST_CASE("C API conv1d: valid arguments pass for both rollback forms and every addressing",
          "[capi][conv1d]") {
  for (const char* name : {"conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.strided.silu",
                           "conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.table.silu",
                           "conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.slot.silu",
                           "conv1d_update.k1.io_f32.w2.wt_f32.intermediate.strided",
                           "conv1d_update.k17.io_bf16.w4.wt_bf16.window.strided.silu",
                           "conv1d_update.k17.io_bf16.w4.wt_bf16.window.table.silu", kWindowSlot}) {
    INFO(name);
    const Variant spec = parse(name);
    const wyjit_conv1d_update_args args = valid_args(spec);
    CHECK(wyjit_check_conv1d_update(spec.name, &args) == WYJIT_OK);
  }
}

TEST_CASE("C API conv1d: bad arguments give invalid_argument naming the argument and its value",
          "[capi][conv1d]") {
  const Variant spec = parse(kIntermediate);
  using Args = wyjit_conv1d_update_args;
  CHECK(check_edited(spec, [](Args& a) { a.k = 3; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::StartsWith("wyjit_check_conv1d_update: ") &&
                               Catch::Contains(kIntermediate) &&
                               Catch::Contains("args.k is 3, must be 4"));
  CHECK(check_edited(spec, [](Args& a) { a.width = 5; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.width is 5, must be 4"));
  CHECK(check_edited(spec, [](Args& a) { a.channels = 0; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.channels is 0"));
  CHECK(check_edited(spec, [](Args& a) { a.x = nullptr; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.x is null"));
  CHECK(check_edited(spec, [](Args& a) { a.y = fake(0x20001); }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.y = 0x20001 is not aligned to 2 bytes"));
  CHECK(check_edited(spec, [](Args& a) { a.x_stride = 95; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.x_stride is 95, must be >= 96"));
  CHECK(check_edited(spec, [](Args& a) { a.state_cols = 2; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.state_cols is 2, must be >= 3"));
  CHECK(check_edited(spec, [](Args& a) { a.states.inter = nullptr; }) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.states.inter is null"));

  const Variant window = parse(kWindowSlot);
  CHECK(check_edited(window, [](Args& a) { a.window_offset = nullptr; }) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.window_offset is null"));
  CHECK(check_edited(window, [](Args& a) { a.state_cols = 5; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.state_cols is 5, must be >= 6"));
  CHECK(check_edited(window, [](Args& a) { a.bias = nullptr; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.bias is null"));
  CHECK(check_edited(window, [](Args& a) { a.path = WYJIT_CONV1D_PATH_NARROW; }) == WYJIT_OK);
  CHECK(check_edited(window, [](Args& a) { a.path = 3; }) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.path is 3: use WYJIT_CONV1D_PATH_AUTOMATIC (0)"));
  CHECK(check_edited(window, [](Args& a) { a.states.num_slots = 0; }) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.states.num_slots is 0"));
  CHECK(check_edited(window, [](Args& a) { a.states.read_slot = nullptr; }) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.states.read_slot is null"));

  // A spec that is no conv1d_update variant, and a name that is no variant.
  const Args args = valid_args(spec);
  CHECK(wyjit_check_conv1d_update("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", &args) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("is a gdn_verify variant, not conv1d_update"));
  CHECK(wyjit_check_conv1d_update("conv1d_update.k4.io_bf16.w4.wt_bf16.undo.strided", &args) ==
        WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("rollback is 'undo'"));
  CHECK(wyjit_check_conv1d_update(nullptr, &args) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("spec is NULL"));
  CHECK(wyjit_check_conv1d_update(spec.name, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args is NULL"));
}

TEST_CASE("C API conv1d: the launch checks its arguments before anything reaches the driver",
          "[capi][conv1d]") {
  const Variant spec = parse(kIntermediate);
  wyjit_conv1d_update_args args = valid_args(spec);
  CHECK(wyjit_launch_conv1d_update(nullptr, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_launch_conv1d_update: kernel is NULL"));

  // NOTE: a handle as wyjit_jit_get_kernel would return it, but with no function behind it (the
  // library refuses a null function after the checks), so the launch path runs without a GPU.
  const wyjit_kernel conv{wyjit::Kernel(spec.spec)};
  CHECK(wyjit_launch_conv1d_update(&conv, nullptr, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args is NULL"));
  args.x_stride = 7;
  CHECK(wyjit_launch_conv1d_update(&conv, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::StartsWith("wyjit_launch_conv1d_update: ") &&
                               Catch::Contains("args.x_stride is 7"));
  args = valid_args(spec);
  args.struct_size = 0;
  CHECK(wyjit_launch_conv1d_update(&conv, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_conv1d_update_args.struct_size is 0"));
  args = valid_args(spec);
  CHECK(wyjit_launch_conv1d_update(&conv, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("no function handle"));

  const wyjit_kernel gdn{
      wyjit::Kernel(wyjit::parse_spec("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"))};
  CHECK(wyjit_launch_conv1d_update(&gdn, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("is a gdn_verify variant, not conv1d_update"));
}

TEST_CASE("C API conv1d: without a GPU, fetching the kernel is a driver error and nothing launches",
          "[capi][conv1d]") {
  int32_t devices = 0;
  if (wyjit_device_count(&devices) == WYJIT_OK && devices > 0) {
    WARN("this machine has a CUDA device: the no-GPU error paths are not exercised");
    return;
  }
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() /
      ("wyjit-capi-conv1d-test." + std::to_string(getpid()) + "." + std::to_string(counter++));
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  const std::string dir_text = dir.string();
  options.cache_dir = dir_text.c_str();
  wyjit_jit* raw = nullptr;
  REQUIRE(wyjit_jit_create(&options, &raw) == WYJIT_OK);
  const std::unique_ptr<wyjit_jit, decltype(&wyjit_jit_destroy)> jit(raw, wyjit_jit_destroy);
  wyjit_kernel* kernel = nullptr;
  CHECK(wyjit_jit_get_kernel(jit.get(), kIntermediate, &kernel) == WYJIT_ERROR_DRIVER);
  CHECK(kernel == nullptr);
  CHECK_FALSE(last_error().empty());
  const Variant spec = parse(kIntermediate);
  const wyjit_conv1d_update_args args = valid_args(spec);
  CHECK(wyjit_launch_conv1d_update(kernel, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("kernel is NULL"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}
