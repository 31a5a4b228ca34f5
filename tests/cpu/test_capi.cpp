// SPDX-License-Identifier: Apache-2.0
// The conventions every call of the C API (wyjit/wyjit.h) follows, on the CPU: versions, status
// codes and the thread-local last error, text out, and struct versioning by struct_size.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capi_test_support.hpp"
#include "wyjit/error.hpp"
#include "wyjit/wyjit.h"

namespace {

using wyjit::test::JitPtr;
using wyjit::test::last_error;
using wyjit::test::make_jit;
using wyjit::test::TempDir;

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
