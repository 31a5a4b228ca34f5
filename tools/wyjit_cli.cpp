// SPDX-License-Identifier: Apache-2.0
// The `wyjit` command-line tool: precompile variants into a disk cache, inspect, verify and
// prune caches, print stamped sources, report what NVRTC supports. Subcommands live in cli/.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "compile/nvrtc_library.hpp"
#include "wyjit/error.hpp"

namespace {

using namespace wyjit::cli;

constexpr const char* kUsage = R"(Usage: wyjit <command> [options]
       wyjit --help | --version

Builds the Gated DeltaNet verify kernels with NVRTC and keeps them in a disk cache.

Commands:
  precompile   compile a matrix of variants for one or more targets into the cache
  compile      compile one variant for one target and print its cache entry path
  source       print the stamped CUDA source of one variant
  list         list the entries of every cache root
  verify       check every cache entry (--repair rebuilds the bad ones)
  prune        remove stale temp files and least recently used entries
  info         print versions, NVRTC targets, driver and GPUs, cache settings

Run 'wyjit <command> --help' for a command's options.

Environment:
  WYJIT_CACHE_DIR        writable cache root (default: $XDG_CACHE_HOME/wyjit,
                         else ~/.cache/wyjit)
  WYJIT_CACHE_RO_DIRS    colon-separated read-only roots, searched first
  WYJIT_CACHE_MAX_BYTES  size bound of the writable root (default 1G; 0: none)
  WYJIT_NO_JIT           1: a variant missing from every root is an error
  WYJIT_SAVE_SOURCE      1: write the stamped source next to each entry written
  WYJIT_LOCK_DIR         node-local directory for the per-key lock files
  WYJIT_LOG_LEVEL        trace, debug, info, warn (default), error, critical or off
  WYJIT_NVRTC            the libnvrtc to use (a file, or a folder holding it)

Exit status:
  0  success
  1  failure (a compile failed, the cache could not be written, ...)
  2  usage error (unknown command or option, bad value): nothing compiled or written
  3  `verify` found bad cache entries
)";

using Command = int (*)(std::span<const std::string>);

struct CommandEntry {
  std::string_view name;
  Command run;
};

constexpr CommandEntry kCommands[] = {
    {"precompile", run_precompile},
    {"compile", run_compile},
    {"source", run_source},
    {"list", run_list},
    {"verify", run_verify},
    {"prune", run_prune},
    {"info", run_info},
};

Command find_command(std::string_view name) {
  for (const CommandEntry& c : kCommands) {
    if (c.name == name) return c.run;
  }
  return nullptr;
}

int usage_error(const std::string& command, std::string_view message) {
  std::fflush(stdout);
  if (command.empty()) {
    fmt::print(stderr, "wyjit: {}\n\n{}", message, kUsage);
  } else {
    fmt::print(stderr, "wyjit {}: {}\nRun 'wyjit {} --help' for usage.\n", command, message,
               command);
  }
  return kExitUsage;
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("", "missing command");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    fmt::print("{}", kUsage);
    return kExitOk;
  }
  if (first == "--version") {
    fmt::print("wyjit {}\n", kVersion);
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      fmt::print("{}", kUsage);
      return kExitOk;
    }
    const Command command = find_command(args[1]);
    if (command == nullptr) return usage_error("", fmt::format("unknown command '{}'", args[1]));
    const std::vector<std::string> help = {"--help"};
    return command(help);
  }
  const Command command = find_command(first);
  if (command == nullptr) {
    return usage_error("", first.starts_with('-') ? fmt::format("unknown option '{}'", first)
                                                  : fmt::format("unknown command '{}'", first));
  }
  try {
    return command(std::span<const std::string>(args).subspan(1));
  } catch (const UsageError& e) {
    return usage_error(e.command(), e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // NOTE: the `wyjit` console script of the Python package passes the lib folder of the
    // nvidia-cuda-nvrtc wheel it found, which is searched after WYJIT_NVRTC and before any toolkit.
    if (const char* wheel = std::getenv("WYJIT_NVRTC_WHEEL_DIR"); wheel != nullptr) {
      wyjit::detail::set_nvrtc_wheel_dir(wheel);
    }
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const wyjit::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "wyjit: error ({}): {}\n", wyjit::to_string(e.code()), e.what());
    return kExitFailure;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "wyjit: error: {}\n", e.what());
    return kExitFailure;
  }
}
