// SPDX-License-Identifier: Apache-2.0
// NVRTC opened at run time: the search order, what this process loaded, the wheel folder a
// binding passes, the C API's report, and what `wyjit info` and `precompile` say about it.
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "compile/nvrtc_library.hpp"
#include "wyjit/error.hpp"
#include "wyjit/wyjit.h"

namespace {

namespace fs = std::filesystem;
using wyjit::cli_test::run_wyjit;
using wyjit::cli_test::shell_quote;
using wyjit::cli_test::TempCacheDir;
using wyjit::detail::NvrtcCandidate;
using wyjit::detail::NvrtcSearchInputs;

const std::string kFile = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);

std::vector<std::string> paths(const std::vector<NvrtcCandidate>& candidates) {
  std::vector<std::string> out;
  for (const NvrtcCandidate& c : candidates) out.push_back(c.path);
  return out;
}

// The folder of the NVRTC this test process loaded (the toolkit's, on a development machine).
std::string loaded_dir() {
  const wyjit::detail::NvrtcLibrary& nvrtc = wyjit::detail::nvrtc_library();
  REQUIRE(nvrtc.error.empty());
  return fs::path(nvrtc.path).parent_path().string();
}

}  // namespace

TEST_CASE("nvrtc: the search order is WYJIT_NVRTC alone, else wheel, toolkits, loader",
          "[nvrtc_library]") {
  CHECK(wyjit::detail::nvrtc_file_name() == kFile);
  CHECK(std::string(wyjit_nvrtc_file_name()) == kFile);

  const NvrtcSearchInputs all{.env_nvrtc = "",
                              .wheel_dir = "/venv/site-packages/nvidia/cu13/lib",
                              .cuda_home = "/opt/cuda-home",
                              .cuda_path = "/opt/cuda-path/",
                              .build_libdir = "/build/cuda/lib64"};
  const std::vector<NvrtcCandidate> order = wyjit::detail::nvrtc_candidates(all);
  CHECK(paths(order) == std::vector<std::string>{
                            "/venv/site-packages/nvidia/cu13/lib/" + kFile,
                            "/opt/cuda-home/lib64/" + kFile,
                            "/opt/cuda-home/lib/" + kFile,
                            "/opt/cuda-path/lib64/" + kFile,
                            "/opt/cuda-path/lib/" + kFile,
                            "/usr/local/cuda/lib64/" + kFile,
                            "/usr/local/cuda/lib/" + kFile,
                            "/build/cuda/lib64/" + kFile,
                            kFile,
                        });
  CHECK(order.front().rule == "nvidia-cuda-nvrtc wheel, found by the Python package");
  CHECK_THAT(order[1].rule, Catch::Contains("$CUDA_HOME (/opt/cuda-home)"));
  CHECK_THAT(order.back().rule, Catch::Contains("dynamic loader"));

  // Without a wheel or toolkit variables, and with the build's toolkit in /usr/local/cuda: each
  // place once.
  const std::vector<NvrtcCandidate> plain = wyjit::detail::nvrtc_candidates(
      {.cuda_home = "/usr/local/cuda", .build_libdir = "/usr/local/cuda/lib64"});
  CHECK(paths(plain) == std::vector<std::string>{"/usr/local/cuda/lib64/" + kFile,
                                                 "/usr/local/cuda/lib/" + kFile, kFile});

  // An explicit WYJIT_NVRTC is the only place tried: a file as given, a folder with the file name.
  NvrtcSearchInputs explicit_file = all;
  explicit_file.env_nvrtc = "/somewhere/libnvrtc.so.13.0";
  CHECK(paths(wyjit::detail::nvrtc_candidates(explicit_file)) ==
        std::vector<std::string>{"/somewhere/libnvrtc.so.13.0"});
  TempCacheDir folder;
  NvrtcSearchInputs explicit_dir = all;
  explicit_dir.env_nvrtc = folder.path().string();
  const std::vector<NvrtcCandidate> in_dir = wyjit::detail::nvrtc_candidates(explicit_dir);
  REQUIRE(in_dir.size() == 1);
  CHECK(in_dir[0].path == (folder.path() / kFile).string());
  CHECK(in_dir[0].rule == "WYJIT_NVRTC");
}

TEST_CASE("nvrtc: this process loaded a whole NVRTC of the build's major version",
          "[nvrtc_library]") {
  const wyjit::detail::NvrtcLibrary& nvrtc = wyjit::detail::nvrtc_library();
  INFO(nvrtc.error);
  REQUIRE(nvrtc.error.empty());
  CHECK(fs::is_regular_file(nvrtc.path));
  CHECK(nvrtc.major == CUDA_VERSION / 1000);
  CHECK_FALSE(nvrtc.rule.empty());
  int major = 0;
  int minor = 0;
  CHECK(wyjit::detail::nvrtc().nvrtcVersion(&major, &minor) == NVRTC_SUCCESS);
  CHECK(major == nvrtc.major);

  // The wheel folder is part of the one search: once NVRTC is loaded it cannot change.
  CHECK_NOTHROW(wyjit::detail::set_nvrtc_wheel_dir(wyjit::detail::nvrtc_search_inputs().wheel_dir));
  try {
    wyjit::detail::set_nvrtc_wheel_dir("/elsewhere/nvidia/cu13/lib");
    FAIL("a wheel folder set after the load was accepted");
  } catch (const wyjit::Error& e) {
    CHECK(e.code() == wyjit::ErrorCode::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("already loaded from " + nvrtc.path));
  }
  CHECK(wyjit_nvrtc_set_wheel_dir("/elsewhere/nvidia/cu13/lib") == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(wyjit_last_error(), Catch::Contains("before anything compiles"));
}

TEST_CASE("nvrtc: the C API reports the file, the rule and the version", "[nvrtc_library][capi]") {
  wyjit_nvrtc_info info;
  std::memset(&info, 0xff, sizeof info);
  wyjit_nvrtc_info_init(&info);
  CHECK(info.struct_size == sizeof(wyjit_nvrtc_info));
  CHECK(info.path == nullptr);
  REQUIRE(wyjit_nvrtc_get_info(&info) == WYJIT_OK);
  REQUIRE(info.path != nullptr);
  CHECK(std::string(info.path) == wyjit::detail::nvrtc_library().path);
  CHECK(std::string(info.rule) == wyjit::detail::nvrtc_library().rule);
  CHECK(info.tried != nullptr);
  CHECK(info.version_major == CUDA_VERSION / 1000);

  wyjit_nvrtc_info other_version = info;
  other_version.struct_size = sizeof(wyjit_nvrtc_info) + 8;
  CHECK(wyjit_nvrtc_get_info(&other_version) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(wyjit_last_error(), Catch::Contains("wyjit_nvrtc_info.struct_size"));
  CHECK(wyjit_nvrtc_get_info(nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("cli: info names the NVRTC in use and the rule that chose it", "[cli][nvrtc_library]") {
  const std::string dir = loaded_dir();
  const std::string real = (fs::path(dir) / kFile).string();

  // WYJIT_NVRTC, a folder or a file: that one, by that rule.
  for (const std::string& given : {dir, real}) {
    const wyjit::cli_test::RunResult r = run_wyjit("info", "WYJIT_NVRTC=" + shell_quote(given));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("nvrtc chosen by: WYJIT_NVRTC ("));
    CHECK_THAT(r.output, Catch::Contains(wyjit::detail::nvrtc_library().path));
  }

  // The wheel folder the console script passes comes before every toolkit.
  const wyjit::cli_test::RunResult wheel =
      run_wyjit("info", "WYJIT_NVRTC_WHEEL_DIR=" + shell_quote(dir));
  INFO(wheel.output);
  CHECK(wheel.status == 0);
  CHECK_THAT(
      wheel.output,
      Catch::Contains("nvrtc chosen by: nvidia-cuda-nvrtc wheel, found by the Python package"));

  // A file of that name that is no NVRTC (here the C library, which every build tree has) is
  // passed over, with why, and the search goes on.
  Dl_info libc{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&::getpid), &libc) != 0);
  TempCacheDir fake;
  fs::create_symlink(fs::canonical(libc.dli_fname), fake.path() / kFile);
  const wyjit::cli_test::RunResult passed =
      run_wyjit("info", "WYJIT_NVRTC_WHEEL_DIR=" + shell_quote(fake.path().string()));
  INFO(passed.output);
  CHECK(passed.status == 0);
  CHECK_THAT(passed.output,
             Catch::Contains("nvrtc passed over:\n  " + (fake.path() / kFile).string() +
                             " (nvidia-cuda-nvrtc wheel"));
  CHECK_THAT(passed.output, Catch::Contains("not an NVRTC this build can use: it lacks"));
  CHECK_THAT(passed.output, Catch::Contains("nvrtc chosen by: CUDA toolkit"));
}

TEST_CASE("cli: without an NVRTC, info says where it looked and precompile fails (1)",
          "[cli][nvrtc_library]") {
  TempCacheDir cache;
  const std::string missing = (cache.path() / "no" / kFile).string();
  const std::string env = "WYJIT_NVRTC=" + shell_quote(missing);
  const wyjit::cli_test::RunResult info = run_wyjit("info", env);
  INFO(info.output);
  CHECK(info.status == 0);
  CHECK_THAT(info.output, Catch::Contains("nvrtc: none: cannot load " + kFile));
  CHECK_THAT(info.output, Catch::Contains("  " + missing + " (WYJIT_NVRTC): no such file"));
  CHECK_THAT(info.output, Catch::Contains("supported archs: unknown"));

  const wyjit::cli_test::RunResult precompile =
      run_wyjit("precompile --arch sm_90 --family gdn_verify --k 1 --io f32 --addressing strided " +
                    cache.arg(),
                env);
  INFO(precompile.output);
  CHECK(precompile.status == 1);
  CHECK_THAT(precompile.output, Catch::Contains("cannot load NVRTC (" + kFile + ")"));
  CHECK_THAT(precompile.output, Catch::Contains("pip install 'wyjit[nvrtc]'"));
  CHECK_THAT(precompile.output, Catch::Contains(missing + " (WYJIT_NVRTC): no such file"));
  CHECK(cache.empty());
}
