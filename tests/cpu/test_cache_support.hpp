// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the cache tests: scratch directories, log capture, child processes.
#pragma once

#include <fcntl.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_key.hpp"
#include "cache/entry_file.hpp"
#include "common/log.hpp"
#include "stamp/stamp.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::test {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

/// A fresh directory under the system temp dir (its name may carry a suffix with spaces or
/// non-ASCII characters), removed with everything in it.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& suffix = "") {
    std::string pattern = (fs::temp_directory_path() / "wyjit-cache-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) FAIL("mkdtemp failed for " << pattern);
    base_ = pattern;
    path_ = suffix.empty() ? base_ : base_ / suffix;
    fs::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path base_;
  fs::path path_;
};

/// Captures what the "wyjit" logger prints while alive (at the logger's level, warn by default).
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<Sink>()) { detail::logger().sinks().push_back(sink_); }
  ~LogCapture() {
    auto& sinks = detail::logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// Messages at `level` that contain `text`.
  std::size_t count(spdlog::level::level_enum level, const std::string& text = "") const {
    const std::lock_guard lock(sink_->mutex_);
    return static_cast<std::size_t>(
        std::count_if(sink_->messages.begin(), sink_->messages.end(), [&](const auto& m) {
          return m.first == level && m.second.find(text) != std::string::npos;
        }));
  }
  std::string all() const {
    const std::lock_guard lock(sink_->mutex_);
    std::string out;
    for (const auto& m : sink_->messages) out += m.second + "\n";
    return out;
  }

 private:
  struct Sink : spdlog::sinks::base_sink<std::mutex> {
    std::vector<std::pair<spdlog::level::level_enum, std::string>> messages;
    using spdlog::sinks::base_sink<std::mutex>::mutex_;

   protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
      messages.emplace_back(msg.level, std::string(msg.payload.data(), msg.payload.size()));
    }
    void flush_() override {}
  };
  std::shared_ptr<Sink> sink_;
};

/// Options for a Jit confined to `root` (and `locks` for its lock files): no environment.
inline JitOptions isolated_options(const fs::path& root, const fs::path& locks) {
  JitOptions options;
  options.cache_dir = root.string();
  options.lock_dir = locks.string();
  return options;
}

inline detail::CacheKey key_of(const KernelSpec& spec, const Target& target) {
  return detail::make_cache_key(spec, detail::stamp(spec), target);
}

inline fs::path entry_path_of(const fs::path& root, const KernelSpec& spec, const Target& target) {
  return root / target.name() / key_of(spec, target).file_name;
}

inline Bytes read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

/// Sets the modification time of `path` to `seconds` ago.
inline void make_old(const fs::path& path, int seconds) {
  const timespec ago{std::time(nullptr) - seconds, 0};
  const timespec times[2] = {ago, ago};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

/// Every temp file (interrupted or running write) under `root`, recursively.
inline std::vector<fs::path> temp_files_under(const fs::path& root) {
  std::vector<fs::path> temps;
  for (const auto& item : fs::recursive_directory_iterator(root)) {
    if (detail::is_temp_file_name(item.path().filename().string())) temps.push_back(item.path());
  }
  return temps;
}

/// Runs `body` in a forked child and returns its exit status (-1 when it did not exit).
/// NOTE: only _exit codes leave the child; Catch macros there would report nothing.
inline int run_in_child(const std::function<int()>& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
      code = 98;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The command line that runs the CLI with `args`, cache environment cleared, output merged.
inline std::string cli_command(const std::string& args, const std::string& env = "") {
  return "env -u WYJIT_CACHE_DIR -u WYJIT_CACHE_RO_DIRS -u WYJIT_NO_JIT -u WYJIT_SAVE_SOURCE "
         "-u WYJIT_CACHE_MAX_BYTES -u WYJIT_LOG_LEVEL " +
         env + " " + shell_quote(WYJIT_BINARY_DIR "/bin/wyjit") + " " + args + " 2>&1";
}

struct CliResult {
  int status = -1;     // exit status, or -1 when the process did not exit normally
  std::string output;  // stdout and stderr, interleaved
};

/// Reads a process started with popen to its end.
inline CliResult finish(FILE* pipe) {
  CliResult result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int raw = pclose(pipe);
  if (raw != -1 && WIFEXITED(raw)) result.status = WEXITSTATUS(raw);
  return result;
}

inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  FILE* pipe = popen(cli_command(args, env).c_str(), "r");
  REQUIRE(pipe != nullptr);
  return finish(pipe);
}

inline std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

}  // namespace wyjit::test
