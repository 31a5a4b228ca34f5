// SPDX-License-Identifier: Apache-2.0
// The C API (wyjit/wyjit.h) on the CPU: versions, variant names and field introspection, status
// codes and the thread-local
// last error, struct versioning, precompile into a temporary cache, launch checks, and the
// errors a machine without a GPU gets.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

namespace fs = std::filesystem;

using JitPtr = std::unique_ptr<wyjit_jit, decltype(&wyjit_jit_destroy)>;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("wyjit-capi-test." + std::to_string(getpid()) + "." + std::to_string(counter++));
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

JitPtr make_jit(const std::string& cache_dir, int32_t no_jit = 0) {
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  options.cache_dir = cache_dir.c_str();
  options.no_jit = no_jit;
  wyjit_jit* jit = nullptr;
  const wyjit_status status = wyjit_jit_create(&options, &jit);
  INFO(wyjit_last_error());
  REQUIRE(status == WYJIT_OK);
  return JitPtr(jit, wyjit_jit_destroy);
}

wyjit_counters counters_of(const wyjit_jit* jit) {
  wyjit_counters c;
  wyjit_counters_init(&c);
  REQUIRE(wyjit_jit_get_counters(jit, &c) == WYJIT_OK);
  return c;
}

std::string last_error() { return wyjit_last_error(); }

bool have_device() {
  int32_t n = 0;
  return wyjit_device_count(&n) == WYJIT_OK && n > 0;
}

}  // namespace

TEST_CASE("C API: version macros, wyjit_version and the version string agree", "[capi]") {
  CHECK(wyjit_version() == WYJIT_VERSION);
  CHECK(WYJIT_VERSION ==
        WYJIT_VERSION_MAJOR * 1000000 + WYJIT_VERSION_MINOR * 1000 + WYJIT_VERSION_PATCH);
  CHECK(std::string(wyjit_version_string()) == std::to_string(WYJIT_VERSION_MAJOR) + "." +
                                                   std::to_string(WYJIT_VERSION_MINOR) + "." +
                                                   std::to_string(WYJIT_VERSION_PATCH));
}

TEST_CASE("C API: status codes mirror wyjit::ErrorCode", "[capi]") {
  CHECK(std::string(wyjit_status_name(WYJIT_OK)) == "ok");
  const std::pair<wyjit_status, wyjit::ErrorCode> pairs[] = {
      {WYJIT_ERROR_INVALID_SPEC, wyjit::ErrorCode::invalid_spec},
      {WYJIT_ERROR_INVALID_ARGUMENT, wyjit::ErrorCode::invalid_argument},
      {WYJIT_ERROR_COMPILE_FAILED, wyjit::ErrorCode::compile_failed},
      {WYJIT_ERROR_CACHE_IO, wyjit::ErrorCode::cache_io},
      {WYJIT_ERROR_CACHE_MISS_NO_JIT, wyjit::ErrorCode::cache_miss_no_jit},
      {WYJIT_ERROR_DRIVER, wyjit::ErrorCode::driver},
      {WYJIT_ERROR_NVRTC, wyjit::ErrorCode::nvrtc},
      {WYJIT_ERROR_INTERNAL, wyjit::ErrorCode::internal},
  };
  for (const auto& [status, code] : pairs) {
    CHECK(std::string(wyjit_status_name(status)) == wyjit::to_string(code));
  }
  CHECK(std::string(wyjit_status_name(static_cast<wyjit_status>(42))) == "unknown");
}

namespace {

/// The value of `field` in the variant `name` (wyjit_spec_field), or the status's name.
std::string field_of(const char* name, const char* field) {
  char buffer[64];
  const wyjit_status status = wyjit_spec_field(name, field, buffer, sizeof buffer, nullptr);
  return status == WYJIT_OK ? std::string(buffer) : wyjit_status_name(status);
}

/// wyjit_spec_build of `family` with `fields`, or the status's name.
std::string build(const char* family, std::vector<const char*> fields,
                  std::vector<const char*> values) {
  char buffer[128];
  const wyjit_status status = wyjit_spec_build(family, fields.data(), values.data(), fields.size(),
                                               buffer, sizeof buffer, nullptr);
  return status == WYJIT_OK ? std::string(buffer) : wyjit_status_name(status);
}

}  // namespace

TEST_CASE("C API: names validate, their fields read back, bad ones name the field", "[capi]") {
  for (const char* text : {"gdn_verify.k17.io_f16.st_bf16.table.kv.dk64.dv256.l2norm",
                           "gdn_verify.k1.io_f32.st_f32.slot.vk.d256.gating",
                           "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu"}) {
    CHECK(wyjit_spec_validate(text) == WYJIT_OK);
    CHECK(wyjit::format_spec(wyjit::parse_spec(text)) == text);
  }
  const char* name = "gdn_verify.k17.io_f16.st_bf16.table.kv.dk64.dv256.l2norm";
  CHECK(field_of(name, "family") == "gdn_verify");
  CHECK(field_of(name, "k") == "17");
  CHECK(field_of(name, "io") == "f16");
  CHECK(field_of(name, "state") == "bf16");
  CHECK(field_of(name, "addressing") == "table");
  CHECK(field_of(name, "layout") == "kv");
  CHECK(field_of(name, "dk") == "64");
  CHECK(field_of(name, "dv") == "256");
  CHECK(field_of(name, "l2norm") == "on");
  CHECK(field_of(name, "gating") == "off");
  const char* conv = "conv1d_update.k3.io_f16.w4.wt_f32.window.strided.silu";
  CHECK(field_of(conv, "family") == "conv1d_update");
  CHECK(field_of(conv, "k") == "3");
  CHECK(field_of(conv, "width") == "4");
  CHECK(field_of(conv, "weight") == "f32");
  CHECK(field_of(conv, "rollback") == "window");
  CHECK(field_of(conv, "bias") == "off");
  CHECK(field_of(conv, "silu") == "on");
  CHECK(field_of(conv, "layout") == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("conv1d_update has no field 'layout'"));

  CHECK(wyjit_spec_validate("gdn_verify.k0.io_f16.st_f32.strided.vk.d128") ==
        WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_spec_validate") && Catch::Contains("K is 0"));
  CHECK(wyjit_spec_validate(nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("name is NULL"));
}

TEST_CASE("C API: names built from field values; bad values are refused by field and value",
          "[capi]") {
  CHECK(build("gdn_verify", {}, {}) == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128");
  CHECK(build("gdn_verify", {"k", "layout", "dv", "l2norm"}, {"17", "kv", "64", "on"}) ==
        "gdn_verify.k17.io_bf16.st_f32.strided.kv.dk128.dv64.l2norm");
  CHECK(
      build("conv1d_update", {"io", "weight", "rollback", "silu"}, {"f16", "io", "window", "on"}) ==
      "conv1d_update.k4.io_f16.w4.wt_f16.window.strided.silu");
  CHECK(build("gdn_verify", {"io"}, {"f64"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'f64'") && Catch::Contains("f32, f16, bf16"));
  CHECK(build("gdn_verify", {"addressing"}, {"paged"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'paged'") && Catch::Contains("strided, table, slot"));
  CHECK(build("gdn_verify", {"l2norm"}, {"2"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("expected on or off"));
  CHECK(build("conv1d_update", {"rollback"}, {"undo"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'undo'"));
  CHECK(build("gdn_verifx", {}, {}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("family is 'gdn_verifx'"));
  CHECK(build("gdn_verify", {"dk"}, {"96"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("dk is 96"));
  CHECK(build("conv1d_update", {"io", "weight"}, {"bf16", "f16"}) == "invalid_spec");
  CHECK_THAT(last_error(),
             Catch::Contains("weight is f16") && Catch::Contains("bf16 (the io dtype)"));
}

TEST_CASE("C API: the families and their fields are described by the library", "[capi]") {
  REQUIRE(wyjit_family_count() == wyjit::family_names().size());
  CHECK(wyjit_family_name(wyjit_family_count()) == nullptr);
  for (size_t f = 0; f < wyjit_family_count(); ++f) {
    const std::string family = wyjit_family_name(f);
    const std::span<const wyjit::FieldInfo> fields = wyjit::family_fields(family);
    size_t count = 0;
    REQUIRE(wyjit_family_field_count(family.c_str(), &count) == WYJIT_OK);
    REQUIRE(count == fields.size());
    std::vector<const char*> names;
    std::vector<std::string> defaults;
    for (size_t i = 0; i < count; ++i) {
      wyjit_field_info info{};
      info.struct_size = sizeof info;
      REQUIRE(wyjit_family_field(family.c_str(), i, &info) == WYJIT_OK);
      CHECK(std::string(info.name) == fields[i].name);
      CHECK(std::string(info.label) == fields[i].label);
      CHECK(info.kind == static_cast<int32_t>(fields[i].kind));
      CHECK(info.num_choices == fields[i].choices.size());
      CHECK(info.default_value == fields[i].default_value);
      names.push_back(info.name);
      // The default as text, from the description alone: what a binding would do.
      switch (info.kind) {
        case WYJIT_FIELD_INTEGER:
          defaults.push_back(std::to_string(info.default_value));
          break;
        case WYJIT_FIELD_CHOICE:
          REQUIRE(static_cast<size_t>(info.default_value) < info.num_choices);
          defaults.emplace_back(info.choices[info.default_value]);
          break;
        case WYJIT_FIELD_FLAG:
          defaults.emplace_back(info.default_value != 0 ? "on" : "off");
          break;
        default:
          FAIL("unknown field kind " << info.kind);
      }
    }
    // Every default given explicitly names the default variant.
    std::vector<const char*> values;
    for (const std::string& d : defaults) values.push_back(d.c_str());
    CHECK(build(family.c_str(), names, values) == build(family.c_str(), {}, {}));
    wyjit_field_info info{};
    info.struct_size = sizeof info;
    CHECK(wyjit_family_field(family.c_str(), count, &info) == WYJIT_ERROR_INVALID_ARGUMENT);
    info.struct_size = 8;
    CHECK(wyjit_family_field(family.c_str(), 0, &info) == WYJIT_ERROR_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("wyjit_field_info.struct_size is 8"));
  }
  size_t count = 0;
  CHECK(wyjit_family_field_count("nope", &count) == WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("family is 'nope'"));
}

TEST_CASE("C API: text out reports the length and refuses a short buffer", "[capi]") {
  size_t length = 0;
  REQUIRE(wyjit_spec_build("gdn_verify", nullptr, nullptr, 0, nullptr, 0, &length) == WYJIT_OK);
  CHECK(length == std::strlen("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"));
  std::vector<char> small(length, 'x');  // one byte short: no room for the NUL
  CHECK(wyjit_spec_build("gdn_verify", nullptr, nullptr, 0, small.data(), small.size(), nullptr) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("size is 44 bytes") && Catch::Contains("needs 45"));
  CHECK(std::string(small.begin(), small.end()) == std::string(length, 'x'));  // untouched
}

TEST_CASE("C API: the last error is per thread and survives successful calls", "[capi]") {
  CHECK(wyjit_spec_validate("nonsense") == WYJIT_ERROR_INVALID_SPEC);
  const std::string mine = last_error();
  CHECK_THAT(mine, Catch::Contains("nonsense"));
  std::string other_before;
  std::string other_after;
  std::thread([&] {
    other_before = wyjit_last_error();
    wyjit_spec_validate("gdn_verify.k4.io_f64.st_f32.strided.vk.d128");
    other_after = wyjit_last_error();
  }).join();
  CHECK(other_before.empty());
  CHECK_THAT(other_after, Catch::Contains("f64"));
  CHECK(last_error() == mine);
  CHECK(wyjit_spec_validate("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128") == WYJIT_OK);
  CHECK(last_error() == mine);
}

TEST_CASE("C API: structs from another version are refused by struct_size", "[capi]") {
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  CHECK(options.struct_size == sizeof(wyjit_jit_options));
  options.struct_size = 8;
  wyjit_jit* jit = nullptr;
  CHECK(wyjit_jit_create(&options, &jit) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK(jit == nullptr);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_jit_options.struct_size is 8") &&
                               Catch::Contains("expects " + std::to_string(sizeof options)));

  const TempDir dir;
  const JitPtr owned = make_jit(dir.str());
  wyjit_counters counters{};
  counters.struct_size = sizeof counters - 8;
  CHECK(wyjit_jit_get_counters(owned.get(), &counters) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_counters.struct_size"));

  wyjit_gdn_verify_args args{};
  args.struct_size = 0;
  CHECK(wyjit_check_gdn_verify("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", &args) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_gdn_verify_args.struct_size is 0"));
}

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
