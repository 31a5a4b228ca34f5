// SPDX-License-Identifier: Apache-2.0
// `wyjit info`: versions, the archs NVRTC supports, the cache root in use.
#include <fmt/format.h>
#include <nvrtc.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kInfoHelp = R"(Usage: wyjit info [--cache-dir DIR]

Prints the wyjit version, the NVRTC version, the targets NVRTC supports and the
cache root a Jit would use (DIR, else $WYJIT_CACHE_DIR, else the library default).
Touches no GPU.

Options:
  --cache-dir DIR   report DIR instead of the default cache root
  -h, --help        this text
)";

}  // namespace

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::string nvrtc_version_text() {
  int major = 0;
  int minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
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
  fmt::print("nvrtc {}\n", nvrtc_version_text());
  std::string archs;
  for (int arch : nvrtc_supported_archs()) {
    archs += fmt::format("{}sm_{}", archs.empty() ? "" : " ", arch);
  }
  fmt::print("supported archs: {}\n", archs.empty() ? "unknown" : archs);

  JitOptions options = JitOptions::from_env();
  if (!cache_dir.empty()) options.cache_dir = cache_dir;
  try {
    // NOTE: the library resolves the default root; ask it instead of repeating its rules.
    const Jit jit(options);
    fmt::print("cache dir: {}\n", jit.cache_dir().empty() ? "(disk cache off)" : jit.cache_dir());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "wyjit info: cannot open the cache: {}\n", e.what());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace wyjit::cli
