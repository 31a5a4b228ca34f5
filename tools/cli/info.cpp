// SPDX-License-Identifier: Apache-2.0
// `wyjit info`: versions, the archs NVRTC supports, the driver and GPUs, the cache roots.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_env.hpp"
#include "cache/cache_lock.hpp"
#include "cli/cli.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "compile/nvrtc_library.hpp"
#include "driver/driver_api.hpp"
#include "jit/target_select.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kInfoHelp = R"(Usage: wyjit info [--cache-dir DIR]

Prints the wyjit version; the NVRTC version, build and library path, and the
rule that chose it (WYJIT_NVRTC, the nvidia-cuda-nvrtc wheel, a CUDA toolkit or
the dynamic loader's path); the targets NVRTC supports; the CUDA driver and each GPU with the target a Jit would build
for it (when a driver is installed); and the cache settings: every root in
search order, the lock directory, the size bound and the switches. Creates and
writes nothing.

Options:
  --cache-dir DIR   report DIR as the (only) root instead of the environment's
  -h, --help        this text

Exit status: 0 ok, 2 usage error.
)";

// Which NVRTC, from where, and why: the rule that chose it and what was passed over before it.
void print_nvrtc() {
  const detail::NvrtcLibrary& nvrtc = detail::nvrtc_library();
  const auto print_tried = [&](const char* heading) {
    if (nvrtc.tried.empty()) return;
    fmt::print("{}\n", heading);
    std::string_view tried = nvrtc.tried;
    while (!tried.empty()) {
      const std::size_t end = tried.find('\n');
      fmt::print("  {}\n", tried.substr(0, end));
      tried.remove_prefix(end == std::string_view::npos ? tried.size() : end + 1);
    }
  };
  if (!nvrtc.error.empty()) {
    fmt::print(
        "nvrtc: none: cannot load {} (WYJIT_NVRTC, or NVIDIA's nvidia-cuda-nvrtc wheel, "
        "or a CUDA toolkit)\n",
        detail::nvrtc_file_name());
    print_tried("nvrtc searched:");
    return;
  }
  fmt::print("nvrtc {}.{} ({})\n", nvrtc.major, nvrtc.minor, nvrtc.path);
  fmt::print(
      "nvrtc chosen by: {} (search order: WYJIT_NVRTC, the nvidia-cuda-nvrtc wheel, "
      "the CUDA toolkit, the dynamic loader's path)\n",
      nvrtc.rule);
  print_tried("nvrtc passed over:");
  try {
    fmt::print("nvrtc build: {}\n", detail::nvrtc_identity());
  } catch (const std::exception& e) {
    fmt::print("nvrtc build: unknown ({})\n", e.what());
  }
}

void print_driver() {
  if (!detail::driver_has_device()) {
    const std::string why = detail::driver_unavailable_reason();
    fmt::print("driver: {}\n", why.empty() ? "no CUDA device" : why);
    return;
  }
  const detail::DriverApi& api = detail::driver();
  int version = 0;
  api.cuDriverGetVersion(&version);
  int count = 0;
  api.cuDeviceGetCount(&count);
  fmt::print("driver: CUDA {}.{}, {} device(s)\n", version / 1000, version % 1000 / 10, count);
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (api.cuDeviceGet(&device, i) != CUDA_SUCCESS) continue;
    char name[256] = {};
    api.cuDeviceGetName(name, sizeof name, device);
    int major = 0;
    int minor = 0;
    api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    std::string target;
    try {
      const Target t = detail::select_target(major * 10 + minor);
      target = t.name() + (t.ptx ? " (PTX, driver JIT)" : " (cubin)");
    } catch (const std::exception& e) {
      target = e.what();
    }
    fmt::print("gpu {}: {}, sm_{}{} -> {}\n", i, name, major, minor, target);
  }
}

}  // namespace

std::vector<int> nvrtc_supported_archs() {
  if (!detail::nvrtc_library().error.empty()) return {};
  try {
    return detail::nvrtc_supported_archs();
  } catch (const std::exception&) {
    return {};
  }
}

std::string nvrtc_version_text() {
  const detail::NvrtcLibrary& nvrtc = detail::nvrtc_library();
  if (!nvrtc.error.empty()) return "unknown";
  return fmt::format("{}.{}", nvrtc.major, nvrtc.minor);
}

int run_info(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kInfoHelp);
    return kExitOk;
  }
  ArgReader reader("info", args);
  std::string cache_dir;
  while (!reader.done()) {
    if (reader.option("--cache-dir", cache_dir)) continue;
    reader.reject();
  }

  fmt::print("wyjit {}\n", kVersion);
  print_nvrtc();
  std::string archs;
  for (int arch : nvrtc_supported_archs()) {
    archs += fmt::format("{}sm_{}", archs.empty() ? "" : " ", arch);
  }
  fmt::print("supported archs: {}\n", archs.empty() ? "unknown" : archs);
  print_driver();

  const JitOptions options = reader_options(cache_dir);
  fmt::print("cache roots (search order):\n");
  for (const CacheRootInfo& root : roots_of(options)) {
    std::error_code ec;
    const bool exists = std::filesystem::is_directory(root.path, ec);
    fmt::print("  {:<9} {}{}\n", root.read_only ? "read-only" : "writable", root.path,
               exists ? "" : " (does not exist yet)");
  }
  fmt::print("lock dir: {}\n",
             options.lock_dir.empty() ? detail::default_lock_base().string() : options.lock_dir);
  fmt::print("max bytes: {}\n", options.max_bytes == 0
                                    ? std::string("unbounded")
                                    : fmt::format("{} ({})", options.max_bytes,
                                                  detail::format_bytes(options.max_bytes)));
  fmt::print("no-jit: {}\nsave-source: {}\n", options.no_jit ? "on" : "off",
             options.save_source ? "on" : "off");
  return kExitOk;
}

}  // namespace wyjit::cli
