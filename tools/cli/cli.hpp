// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the `wyjit` command-line tool: exit codes, usage errors, a hand-written
// argument reader and the subcommands' entry points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

#ifndef WYJIT_CLI_VERSION
#error "WYJIT_CLI_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace wyjit::cli {

inline constexpr const char* kVersion = WYJIT_CLI_VERSION;

/// Process exit status, documented in `wyjit --help`.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,   ///< a compile failed, the cache could not be written, ...
  kExitUsage = 2,     ///< unknown command or option, bad value: nothing compiled or written
  kExitBadEntry = 3,  ///< `verify` found bad cache entries
};

/// A command line the tool refuses. `command` is the subcommand ("" for the top level).
class UsageError : public std::runtime_error {
 public:
  UsageError(std::string command, const std::string& message)
      : std::runtime_error(message), command_(std::move(command)) {}
  const std::string& command() const noexcept { return command_; }

 private:
  std::string command_;
};

/// Walks a subcommand's arguments. Options take `--name VALUE` or `--name=VALUE`.
class ArgReader {
 public:
  ArgReader(std::string command, std::span<const std::string> args)
      : command_(std::move(command)), args_(args) {}

  bool done() const noexcept { return pos_ >= args_.size(); }
  const std::string& peek() const { return args_[pos_]; }
  const std::string& command() const noexcept { return command_; }

  /// True (and consumes it) when the next argument is the flag `name`.
  bool flag(std::string_view name);
  /// True (and consumes it with its value) when the next argument is option `name` or
  /// `short_name` (e.g. `-j4`, `-j 4`). Throws UsageError when the value is missing.
  bool option(std::string_view name, std::string& value, std::string_view short_name = {});
  /// True when an argument follows the next one and does not start with '-' (a value).
  bool next_is_value() const noexcept;
  /// Consumes the next argument, which must be positional (not starting with '-').
  std::string positional();

  /// Throws the UsageError for the next argument, which nothing recognised.
  [[noreturn]] void reject() const;

 private:
  std::string command_;
  std::span<const std::string> args_;
  std::size_t pos_ = 0;
};

/// True when `args` asks for help (`--help` or `-h` anywhere).
bool wants_help(std::span<const std::string> args);

/// `1073741824`, `512M`, `1G`, ... (binary multiples) -> bytes.
std::uint64_t parse_bytes(const std::string& command, const std::string& option,
                          const std::string& text);
/// A whole decimal number in [min, max].
int parse_int(const std::string& command, const std::string& option, const std::string& text,
              int min, int max);
/// Splits on commas; an empty item is a usage error.
std::vector<std::string> split_list(const std::string& command, const std::string& option,
                                    const std::string& text);
/// A canonical variant name -> validated KernelSpec; throws UsageError naming it.
KernelSpec parse_variant(const std::string& command, const std::string& text);

/// `sm_90`, `sm_90a` or `compute_90`, for an arch this NVRTC supports; throws UsageError.
Target parse_target(const std::string& command, const std::string& text);

/// JitOptions for commands that fill a cache: the environment's, with `cache_dir` (when not
/// empty) as the writable root, and neither read-only roots nor no-JIT mode (a precompile
/// writes every variant into its root, whatever other roots hold).
JitOptions writer_options(const std::string& cache_dir);
/// JitOptions for commands that read caches: DIR alone (writable) when `cache_dir` is not
/// empty, else the environment's read-only roots and writable root.
JitOptions reader_options(const std::string& cache_dir);
/// The roots `options` describes, in search order, without creating or probing anything.
std::vector<CacheRootInfo> roots_of(const JitOptions& options);

/// The archs (e.g. 75, 80, 90) this NVRTC supports; empty when NVRTC cannot say.
std::vector<int> nvrtc_supported_archs();
/// `13.0`, or `unknown`.
std::string nvrtc_version_text();

/// Reports the progress of a precompile: a redrawn bar on a terminal, else one line per job.
class Progress {
 public:
  Progress(std::size_t total, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  enum class Status { compiled, cached, failed };
  /// One finished job; thread-safe.
  void done(Status status, const std::string& target, std::size_t target_width,
            const std::string& variant, double ms);

 private:
  void draw_bar();  // with mutex_ held
  struct State;
  std::unique_ptr<State> state_;
};

int run_precompile(std::span<const std::string> args);
int run_compile(std::span<const std::string> args);
int run_source(std::span<const std::string> args);
int run_info(std::span<const std::string> args);
int run_list(std::span<const std::string> args);
int run_verify(std::span<const std::string> args);
int run_prune(std::span<const std::string> args);

}  // namespace wyjit::cli
