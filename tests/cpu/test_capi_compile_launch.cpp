// SPDX-License-Identifier: Apache-2.0
// From options to launch through the C API (wyjit/wyjit.h) on the CPU: the manager's options,
// precompile into a temporary cache, no-JIT and read-only roots, the gdn_verify launch checks and
// the table stager's, and the errors a machine without a GPU gets.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "capi_test_support.hpp"
#include "wyjit/wyjit.h"

namespace {

namespace fs = std::filesystem;

using wyjit::test::JitPtr;
using wyjit::test::last_error;
using wyjit::test::make_jit;
using wyjit::test::TempDir;

wyjit_counters counters_of(const wyjit_jit* jit) {
  wyjit_counters c;
  wyjit_counters_init(&c);
  REQUIRE(wyjit_jit_get_counters(jit, &c) == WYJIT_OK);
  return c;
}

bool have_device() {
  int32_t n = 0;
  return wyjit_device_count(&n) == WYJIT_OK && n > 0;
}

}  // namespace

TEST_CASE("C API: option values are checked", "[capi]") {
  wyjit_jit_options options;
  wyjit_jit* jit = nullptr;
  wyjit_jit_options_init(&options);
  options.disk_cache = 2;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("options->disk_cache is 2"));
  wyjit_jit_options_init(&options);
  options.no_jit = 5;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("options->no_jit is 5"));
  wyjit_jit_options_init(&options);
  options.log_level = 9;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("options->log_level is 9"));
  wyjit_jit_options_init(&options);
  options.num_read_only_dirs = 2;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("read_only_dirs is NULL"));
  const char* dirs[] = {"/tmp", ""};
  options.read_only_dirs = dirs;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("options->read_only_dirs[1] is NULL or empty"));
  CHECK(jit == nullptr);
  CHECK(wyjit_jit_create(nullptr, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("out is NULL"));
  CHECK(wyjit_set_log_level(7) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(wyjit_set_log_level(WYJIT_LOG_WARN) == WYJIT_OK);
}

TEST_CASE("C API: precompile compiles every variant once, in parallel, into the cache",
          "[capi][nvrtc]") {
  const TempDir dir;
  const JitPtr jit = make_jit(dir.str());
  CHECK(std::string(wyjit_jit_cache_dir(jit.get())) == dir.str());
  const std::vector<const char*> specs = {"gdn_verify.k1.io_f32.st_f32.strided.vk.d64",
                                          "gdn_verify.k3.io_bf16.st_f32.strided.kv.d64",
                                          "gdn_verify.k2.io_f16.st_f32.strided.vk.d64"};
  std::vector<wyjit_status> statuses(specs.size(), WYJIT_ERROR_INTERNAL);
  REQUIRE(wyjit_precompile(jit.get(), specs.data(), specs.size(), "sm_90", 2, statuses.data()) ==
          WYJIT_OK);
  CHECK(statuses == std::vector<wyjit_status>(specs.size(), WYJIT_OK));
  CHECK(counters_of(jit.get()).compiles == 3);
  std::size_t cubins = 0;
  for (const auto& entry : fs::directory_iterator(dir.path() / "sm_90")) {
    cubins += entry.path().extension() == ".cubin" ? 1 : 0;
  }
  CHECK(cubins == 3);
  // Again: served from memory, no compile.
  REQUIRE(wyjit_precompile(jit.get(), specs.data(), specs.size(), "sm_90", 0, nullptr) == WYJIT_OK);
  CHECK(counters_of(jit.get()).compiles == 3);
  // A fresh manager on the same root: from disk.
  const JitPtr again = make_jit(dir.str());
  REQUIRE(wyjit_precompile(again.get(), specs.data(), specs.size(), "sm_90", 1, nullptr) ==
          WYJIT_OK);
  CHECK(counters_of(again.get()).compiles == 0);
  CHECK(counters_of(again.get()).disk_hits == 3);
  CHECK(wyjit_precompile(again.get(), nullptr, 0, "sm_90", 1, nullptr) == WYJIT_OK);
}

TEST_CASE("C API: precompile checks everything before compiling anything", "[capi]") {
  const TempDir dir;
  const JitPtr jit = make_jit(dir.str());
  const std::vector<const char*> specs = {"gdn_verify.k4.io_bf16.st_f32.strided.vk.d128",
                                          "gdn_verify.k33.io_bf16.st_f32.strided.vk.d128"};
  CHECK(wyjit_precompile(jit.get(), specs.data(), 2, "sm_90", 1, nullptr) ==
        WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("names[1]") && Catch::Contains("K is 33"));
  CHECK(wyjit_precompile(jit.get(), specs.data(), 1, "sm90", 1, nullptr) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("sm90"));
  CHECK(wyjit_precompile(jit.get(), nullptr, 1, "sm_90", 1, nullptr) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("names is NULL"));
  CHECK(counters_of(jit.get()).compiles == 0);
  CHECK(!fs::exists(dir.path() / "sm_90"));
}

TEST_CASE("C API: with no-JIT a miss is an error naming the variant; read-only roots serve it",
          "[capi][nvrtc]") {
  const TempDir shipped;
  const TempDir writable;
  const char* spec = "gdn_verify.k1.io_f32.st_f32.strided.kv.d64";
  {
    const JitPtr builder = make_jit(shipped.str());
    REQUIRE(wyjit_precompile(builder.get(), &spec, 1, "sm_90", 1, nullptr) == WYJIT_OK);
  }
  const JitPtr strict = make_jit(writable.str(), 1);
  wyjit_status status = WYJIT_OK;
  CHECK(wyjit_precompile(strict.get(), &spec, 1, "sm_90", 1, &status) ==
        WYJIT_ERROR_CACHE_MISS_NO_JIT);
  CHECK(status == WYJIT_ERROR_CACHE_MISS_NO_JIT);
  CHECK_THAT(last_error(), Catch::Contains("gdn_verify.k1.io_f32.st_f32.strided.kv.d64") &&
                               Catch::Contains("1 of 1 variants failed for sm_90"));

  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  const std::string ro = shipped.str();
  const std::string rw = writable.str();
  const char* dirs[] = {ro.c_str()};
  options.cache_dir = rw.c_str();
  options.read_only_dirs = dirs;
  options.num_read_only_dirs = 1;
  options.no_jit = 1;
  wyjit_jit* jit = nullptr;
  REQUIRE(wyjit_jit_create(&options, &jit) == WYJIT_OK);
  const JitPtr served(jit, wyjit_jit_destroy);
  CHECK(wyjit_precompile(served.get(), &spec, 1, "sm_90", 1, nullptr) == WYJIT_OK);
  const wyjit_counters c = counters_of(served.get());
  CHECK(c.compiles == 0);
  CHECK(c.ro_disk_hits == 1);
  CHECK(c.misses == 0);
}

TEST_CASE("C API: launch checks run without a GPU and name the argument", "[capi]") {
  const char* spec = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";
  wyjit_gdn_verify_args args;
  wyjit_gdn_verify_args_init(&args);
  CHECK(args.struct_size == sizeof args);
  CHECK(args.q == nullptr);
  const auto fake = [](std::uintptr_t n) { return reinterpret_cast<void*>(n << 20); };
  args.batch = 2;
  args.num_k_heads = 1;
  args.num_v_heads = 2;
  args.k = 2;
  args.dk = 64;
  args.dv = 64;
  args.scale = 0.125f;
  args.q = fake(1);
  args.k_in = fake(2);
  args.v = fake(3);
  args.g = static_cast<const float*>(fake(4));
  args.beta = static_cast<const float*>(fake(5));
  args.out = fake(6);
  args.qk_stride = 64;
  args.v_stride = 128;
  args.gb_stride = 2;
  args.o_stride = 128;
  args.states.state = fake(7);
  args.states.state_seq_stride = 2 * 64 * 64;
  args.states.inter = fake(8);
  args.states.inter_seq_stride = 2 * 64 * 64;
  args.states.inter_tok_stride = 2 * 64 * 64;
  CHECK(wyjit_check_gdn_verify(spec, &args) == WYJIT_OK);
  args.v_stride = 100;
  CHECK(wyjit_check_gdn_verify(spec, &args) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.v_stride is 100"));
  args.v_stride = 128;
  args.k = 3;
  CHECK(wyjit_check_gdn_verify(spec, &args) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args.k is 3, must be 2"));
  args.k = 2;
  CHECK(wyjit_launch_gdn_verify(nullptr, &args, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("kernel is NULL"));
  CHECK(wyjit_check_gdn_verify(spec, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("args is NULL"));
  CHECK(wyjit_check_gdn_verify("conv1d_update.k2.io_f32.w4.wt_f32.window.strided", &args) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("is a conv1d_update variant, not gdn_verify"));
  CHECK(wyjit_check_gdn_verify("gdn_verify.k2", &args) == WYJIT_ERROR_INVALID_SPEC);
}

TEST_CASE("C API: table stager arguments are checked before the driver", "[capi]") {
  wyjit_table_stager* stager = nullptr;
  CHECK(wyjit_table_stager_create(0, 4, &stager) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("writes is 0, must be 1..32"));
  CHECK(wyjit_table_stager_create(4, 0, &stager) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("max_batch is 0, must be >= 1"));
  CHECK(stager == nullptr);
  CHECK(wyjit_table_stager_stage(nullptr, nullptr, nullptr, 1, nullptr) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("stager is NULL"));
  CHECK(wyjit_table_stager_tables(nullptr) == nullptr);
  CHECK(wyjit_table_stager_slab_stride(nullptr) == 0);
  wyjit_table_stager_destroy(nullptr);
  wyjit_jit_destroy(nullptr);
}

TEST_CASE("C API: without a GPU, device calls report the driver and kernels are driver errors",
          "[capi]") {
  if (have_device()) {
    WARN("this machine has a CUDA device: the no-GPU error paths are not exercised");
    return;
  }
  int32_t count = -1;
  CHECK(wyjit_device_count(&count) == WYJIT_OK);
  CHECK(count == 0);
  CHECK(std::string(wyjit_device_unavailable_reason()) != "");
  CHECK(wyjit_device_make_current(0) == WYJIT_ERROR_DRIVER);
  void* p = nullptr;
  CHECK(wyjit_mem_alloc(16, &p) == WYJIT_ERROR_DRIVER);
  const TempDir dir;
  const JitPtr jit = make_jit(dir.str());
  wyjit_kernel* kernel = nullptr;
  CHECK(wyjit_jit_get_kernel(jit.get(), "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", &kernel) ==
        WYJIT_ERROR_DRIVER);
  CHECK(wyjit_jit_get_kernel(jit.get(), "gdn_verify.k99", &kernel) == WYJIT_ERROR_INVALID_SPEC);
  CHECK(kernel == nullptr);
  CHECK(wyjit_table_stager_create(4, 8, nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  wyjit_table_stager* stager = nullptr;
  CHECK(wyjit_table_stager_create(4, 8, &stager) == WYJIT_ERROR_DRIVER);
  CHECK(stager == nullptr);
}
