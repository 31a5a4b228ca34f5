// SPDX-License-Identifier: Apache-2.0
// Running the wyjit CLI from the CLI tests: a process runner, the command line with the cache
// environment cleared, and a temporary cache root.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace wyjit::cli_test {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;     // exit status, or -1 when the process did not exit normally
  std::string output;  // stdout and stderr, interleaved
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Runs `command` through the shell and collects what it prints.
inline RunResult run_command(const std::string& command) {
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int raw = pclose(pipe);
  if (raw != -1 && WIFEXITED(raw)) result.status = WEXITSTATUS(raw);
  return result;
}

// `env ... wyjit` with the cache and NVRTC variables cleared, then `env` (VAR=value ...) set.
inline std::string wyjit_command(const std::string& env) {
  // NOTE: lock files go to a directory of this test run (removed at exit), not to /tmp.
  static const struct LockDir {
    fs::path path =
        fs::temp_directory_path() / ("wyjit-cli-test-locks." + std::to_string(getpid()));
    ~LockDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } lock_dir;
  return "env -u WYJIT_CACHE_DIR -u WYJIT_CACHE_RO_DIRS -u WYJIT_NO_JIT -u WYJIT_SAVE_SOURCE "
         "-u WYJIT_CACHE_MAX_BYTES -u WYJIT_LOG_LEVEL -u WYJIT_NVRTC -u WYJIT_NVRTC_WHEEL_DIR "
         "WYJIT_LOCK_DIR=" +
         shell_quote(lock_dir.path.string()) + " " + env + " " +
         shell_quote(WYJIT_BINARY_DIR "/bin/wyjit");
}

// Runs `wyjit ARGS`, stdout and stderr merged; the environment variables that would change
// where the cache is read from, or forbid compiling, are cleared, then `env` is set.
inline RunResult run_wyjit(const std::string& args, const std::string& env = "") {
  return run_command(wyjit_command(env) + " " + args + " 2>&1");
}

// A fresh, empty cache root, removed again at the end of the test.
class TempCacheDir {
 public:
  TempCacheDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("wyjit-cli-test." + std::to_string(getpid()) + "." + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempCacheDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempCacheDir(const TempCacheDir&) = delete;
  TempCacheDir& operator=(const TempCacheDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string arg() const { return "--cache-dir " + shell_quote(path_.string()); }
  /// Every file under the directory, recursively.
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    for (const auto& item : fs::recursive_directory_iterator(path_)) {
      if (item.is_regular_file()) out.push_back(item.path());
    }
    return out;
  }
  bool empty() const { return fs::is_empty(path_); }

 private:
  fs::path path_;
};

inline constexpr const char* kVariant = "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128";
inline constexpr const char* kSmall =
    "--arch sm_90 --family gdn_verify --k 1 --io f32 --addressing strided --gating off";

}  // namespace wyjit::cli_test
