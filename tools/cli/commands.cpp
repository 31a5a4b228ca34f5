// SPDX-License-Identifier: Apache-2.0
// `wyjit source VARIANT` and `wyjit compile VARIANT --arch A`.
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "cli/cli.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kSourceHelp = R"(Usage: wyjit source VARIANT

Prints the stamped CUDA source NVRTC compiles for VARIANT, a canonical variant
name such as gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.

Options:
  -h, --help   this text
)";

constexpr const char* kCompileHelp = R"(Usage: wyjit compile VARIANT --arch A [--cache-dir DIR]

Compiles one variant for one target (or finds it in the cache) and prints the
path of its cache entry. Needs no GPU.

Arguments:
  VARIANT          canonical variant name, e.g. gdn_verify.k4.io_bf16.st_f32.strided.vk.d128
  --arch A         sm_XX (cubin), sm_XXa (arch-specific cubin) or compute_XX (PTX)
  --cache-dir DIR  cache root (default: $WYJIT_CACHE_DIR, else the library default)
  -h, --help       this text

Exit status: 0 ok, 1 compile or cache failure, 2 usage error.
)";

}  // namespace

int run_source(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kSourceHelp);
    return kExitOk;
  }
  ArgReader reader("source", args);
  std::optional<std::string> variant;
  while (!reader.done()) {
    if (!variant) {
      variant = reader.positional();
      continue;
    }
    reader.reject();
  }
  if (!variant) throw UsageError("source", "missing VARIANT");
  const KernelSpec spec = parse_variant("source", *variant);

  fmt::print("{}", stamped_source(spec));
  return kExitOk;
}

int run_compile(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kCompileHelp);
    return kExitOk;
  }
  ArgReader reader("compile", args);
  std::optional<std::string> variant;
  std::optional<std::string> arch;
  std::string cache_dir;
  std::string value;
  while (!reader.done()) {
    if (reader.option("--arch", value)) {
      if (arch) throw UsageError("compile", "give --arch once (use precompile for several)");
      arch = value;
      continue;
    }
    if (reader.option("--cache-dir", cache_dir)) continue;
    if (!variant) {
      variant = reader.positional();
      continue;
    }
    reader.reject();
  }
  if (!variant) throw UsageError("compile", "missing VARIANT");
  if (!arch) throw UsageError("compile", "missing --arch (e.g. --arch sm_90)");
  const KernelSpec spec = parse_variant("compile", *variant);
  const Target target = parse_target("compile", *arch);

  JitOptions options = JitOptions::from_env();
  if (!cache_dir.empty()) options.cache_dir = cache_dir;
  try {
    Jit jit(options);
    const auto compiled = jit.compile(spec, target);
    fmt::print("{}\n", compiled->path.empty() ? "(memory only: no cache entry)" : compiled->path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wyjit compile: {} for {} failed: {}\n", format_spec(spec), target.name(),
               e.what());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace wyjit::cli
