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

Exit status: 0 ok, 2 usage error (a bad or unsupported variant name).
)";

constexpr const char* kCompileHelp =
    R"(Usage: wyjit compile VARIANT --arch A [--cache-dir DIR] [--save-source]

Compiles one variant for one target into the writable cache root (or finds it
there) and prints the path of its cache entry. Needs no GPU. Read-only roots
(WYJIT_CACHE_RO_DIRS) and WYJIT_NO_JIT are ignored.

Arguments:
  VARIANT          canonical variant name, e.g. gdn_verify.k4.io_bf16.st_f32.strided.vk.d128
  --arch A         sm_XX (cubin), sm_XXa (arch-specific cubin) or compute_XX (PTX)
  --cache-dir DIR  writable root (default: $WYJIT_CACHE_DIR, else $XDG_CACHE_HOME/wyjit,
                   else ~/.cache/wyjit)
  --save-source    also write the stamped source next to the entry, as <entry>.cu
  -h, --help       this text

Exit status: 0 ok, 1 compile failure or the entry could not be written, 2 usage error.
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
  bool save_source = false;
  std::string value;
  while (!reader.done()) {
    if (reader.flag("--save-source")) {
      save_source = true;
      continue;
    }
    if (reader.option("--arch", value)) {
      if (arch) throw UsageError("compile", "give --arch once (use precompile for several)");
      arch = value;
      continue;
    }
    if (reader.option("--cache-dir", cache_dir)) {
      if (cache_dir.empty())
        throw UsageError("compile", "bad value '' for --cache-dir: empty path");
      continue;
    }
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

  JitOptions options = writer_options(cache_dir);
  options.save_source = options.save_source || save_source;
  options.max_bytes = 0;  // NOTE: like precompile, never evicts
  try {
    Jit jit(options);
    const auto compiled = jit.compile(spec, target);
    if (compiled->path.empty()) {
      const CacheRootInfo root = jit.cache_roots().back();
      fmt::print(stderr,
                 "wyjit compile: {} for {} compiled, but no entry could be written in '{}'{}\n",
                 format_spec(spec), target.name(), root.path,
                 root.reason.empty() ? " (see the log above)" : ": " + root.reason);
      return kExitFailure;
    }
    fmt::print("{}\n", compiled->path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wyjit compile: {} for {} failed: {}\n", format_spec(spec), target.name(),
               e.what());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace wyjit::cli
