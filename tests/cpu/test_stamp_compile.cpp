// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_key.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "jit/target_select.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/error.hpp"

using namespace wyjit;

TEST_CASE("stamped source is self-contained and instantiates the spec", "[stamp]") {
  const KernelSpec spec =
      GdnVerifySpec{.k = 7, .io = DType::f16, .layout = Layout::kv, .l2norm_qk = true};
  const detail::StampedSource s = detail::stamp(spec);
  REQUIRE(s.name_expressions.size() == 1);
  CHECK(s.name_expressions[0] ==
        "wyjit_kernels::gdn_verify_kernel<wyjit_kernels::GdnVerifyConfig<7, 128, 128, "
        "wyjit_kernels::Half, float, wyjit_kernels::kLayoutKV, wyjit_kernels::kAddrStrided, "
        "true, false> >");
  CHECK_THAT(s.text, Catch::Contains("template __global__ void " + s.name_expressions[0]));
  CHECK_THAT(s.text, Catch::Contains(format_spec(spec)));
  // Hermetic: every include is inlined, each file once.
  CHECK(s.text.find("#include") == std::string::npos);
  CHECK_THAT(s.text, Catch::Contains("// ---- kernel_src/common/types.cuh"));
  CHECK_THAT(s.text, Catch::Contains("// ---- kernel_src/common/state_refs.cuh"));
  CHECK(s.text.find("struct GdnVerifyParams {") == s.text.rfind("struct GdnVerifyParams {"));
  CHECK(stamped_source(spec) == s.text);
}

TEST_CASE("a variant with several kernels instantiates each role once", "[stamp]") {
  const KernelSpec spec = Conv1dUpdateSpec{.k = 3, .io = DType::bf16, .weight = DType::bf16};
  const detail::StampedSource s = detail::stamp(spec);
  REQUIRE(s.name_expressions.size() == 2);
  CHECK_THAT(s.name_expressions[0], Catch::StartsWith("wyjit_kernels::conv1d_update_wide_kernel<"));
  CHECK_THAT(s.name_expressions[1],
             Catch::StartsWith("wyjit_kernels::conv1d_update_narrow_kernel<"));
  for (const std::string& name : s.name_expressions) {
    CHECK(s.text.find("template __global__ void " + name) ==
          s.text.rfind("template __global__ void " + name));
  }
  CHECK(s.text.find("#include") == std::string::npos);
}

TEST_CASE("cache keys change with everything that changes the bytes, and only that",
          "[stamp][cache]") {
  const KernelSpec a = GdnVerifySpec{.k = 4};
  const KernelSpec b = GdnVerifySpec{.k = 5};
  const Target sm90 = Target::parse("sm_90");
  const detail::CacheKey ka = detail::make_cache_key(a, detail::stamp(a), sm90);
  CHECK(ka.hash == detail::make_cache_key(a, detail::stamp(a), sm90).hash);
  CHECK(ka.hash != detail::make_cache_key(b, detail::stamp(b), sm90).hash);
  CHECK(ka.hash != detail::make_cache_key(a, detail::stamp(a), Target::parse("sm_80")).hash);
  CHECK(ka.hash != detail::make_cache_key(a, detail::stamp(a), Target::parse("sm_90a")).hash);
  detail::StampedSource edited = detail::stamp(a);
  edited.text += "\n// one more line\n";
  CHECK(ka.hash != detail::make_cache_key(a, edited, sm90).hash);
  CHECK(ka.file_name ==
        "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128." + ka.hash.substr(0, 16) + ".cubin");
  CHECK_THAT(ka.text, Catch::Contains("nvrtc " + detail::nvrtc_identity()));
  CHECK_THAT(detail::nvrtc_identity(), Catch::Contains("Build ID"));
  // No absolute paths or environment in the key.
  CHECK(ka.text.find('/') == std::string::npos);
}

TEST_CASE("target selection: exact SM, else PTX for the best lower arch", "[stamp]") {
  const std::vector<int> supported{75, 80, 86, 89, 90, 100, 120};
  CHECK(detail::select_target(90, supported).name() == "sm_90");
  CHECK(detail::select_target(87, supported).name() == "compute_86");
  CHECK(detail::select_target(121, supported).name() == "compute_120");
  CHECK_THROWS_WITH(detail::select_target(70, supported), Catch::Contains("sm_70"));
}

TEST_CASE("target for the current device: a driver error where no context is current", "[stamp]") {
  // NOTE: a fresh thread has no current context, on machines with and without a GPU.
  std::string message;
  ErrorCode code = ErrorCode::internal;
  std::thread([&] {
    try {
      detail::target_for_current_device();
    } catch (const Error& e) {
      message = e.what();
      code = e.code();
    }
  }).join();
  CHECK(code == ErrorCode::driver);
  CHECK_FALSE(message.empty());
}

TEST_CASE("NVRTC compiles the K x io matrix for sm_90 and other archs without warnings",
          "[nvrtc]") {
  const std::vector<int> supported = detail::nvrtc_supported_archs();
  REQUIRE(std::find(supported.begin(), supported.end(), 90) != supported.end());
  // sm_90 for all; the oldest and newest supported archs and sm_80 for a sample.
  for (const int k : {1, 2, 3, 4, 8, 16, 17, 32}) {
    for (const DType io : {DType::f32, DType::f16, DType::bf16}) {
      std::vector<Target> targets{Target{.arch = 90}};
      if (k == 4 || k == 17) {
        targets.push_back(Target{.arch = supported.front()});
        targets.push_back(Target{.arch = supported.back()});
        targets.push_back(Target{.arch = 80, .ptx = true});
      }
      for (const Layout layout : {Layout::vk, Layout::kv}) {
        if (layout == Layout::kv && io != DType::bf16) continue;
        const KernelSpec spec =
            GdnVerifySpec{.k = k, .io = io, .layout = layout, .l2norm_qk = k % 2 == 0};
        const detail::StampedSource s = detail::stamp(spec);
        for (const Target& target : targets) {
          INFO(format_spec(spec) << " for " << target.name());
          const detail::NvrtcResult r = detail::nvrtc_compile(
              s.text, s.program_name, s.name_expressions, target, format_spec(spec));
          CHECK(r.log.empty());
          CHECK(r.binary.size() > 1000);
          REQUIRE(r.lowered_names.size() == 1);
          CHECK_THAT(r.lowered_names[0], Catch::StartsWith("_Z"));
        }
      }
    }
  }
}

TEST_CASE("a compile error carries the log, the options and the variant", "[nvrtc]") {
  try {
    detail::nvrtc_compile("__global__ void broken() { undeclared_name = 1; }", "broken.cu",
                          std::vector<std::string>{"broken"}, Target{.arch = 90},
                          "gdn_verify.k4.example");
    FAIL("compiled");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::compile_failed);
    CHECK_THAT(e.what(), Catch::Contains("undeclared_name") &&
                             Catch::Contains("--gpu-architecture=sm_90") &&
                             Catch::Contains("gdn_verify.k4.example"));
  }
}
