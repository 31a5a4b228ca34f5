// SPDX-License-Identifier: Apache-2.0
// The `wyjit` CLI as a user runs it: exit codes, messages, and what lands in the cache.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;     // exit status, or -1 when the process did not exit normally
  std::string output;  // stdout and stderr, interleaved
};

std::string shell_quote(const std::string& s) {
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

// Runs `wyjit ARGS` through the shell; the environment variables that would change where
// the cache is read from, or forbid compiling, are cleared.
RunResult run_wyjit(const std::string& args) {
  const std::string command = "env -u WYJIT_CACHE_DIR -u WYJIT_CACHE_RO_DIRS -u WYJIT_NO_JIT " +
                              shell_quote(WYJIT_BINARY_DIR "/bin/wyjit") + " " + args + " 2>&1";
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
  bool empty() const { return fs::is_empty(path_); }

 private:
  fs::path path_;
};

constexpr const char* kVariant = "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128";

}  // namespace

TEST_CASE("cli: --help and --version exit 0", "[cli]") {
  const RunResult help = run_wyjit("--help");
  INFO(help.output);
  CHECK(help.status == 0);
  CHECK(help.output.find("precompile") != std::string::npos);
  CHECK(help.output.find("Exit status") != std::string::npos);

  const RunResult version = run_wyjit("--version");
  INFO(version.output);
  CHECK(version.status == 0);
  CHECK(version.output.find("0.1.0") != std::string::npos);

  const RunResult sub_help = run_wyjit("precompile --help");
  INFO(sub_help.output);
  CHECK(sub_help.status == 0);
  CHECK(sub_help.output.find("--arch") != std::string::npos);
}

TEST_CASE("cli: unknown subcommand or option is a usage error", "[cli]") {
  const RunResult no_command = run_wyjit("");
  CHECK(no_command.status == 2);

  const RunResult unknown = run_wyjit("frobnicate");
  INFO(unknown.output);
  CHECK(unknown.status == 2);
  CHECK(unknown.output.find("frobnicate") != std::string::npos);

  TempCacheDir cache;
  const RunResult bad_option = run_wyjit("precompile --arch sm_90 --frob " + cache.arg());
  INFO(bad_option.output);
  CHECK(bad_option.status == 2);
  CHECK(bad_option.output.find("--frob") != std::string::npos);
  CHECK(cache.empty());
}

TEST_CASE("cli: precompile without --arch is a usage error and writes nothing", "[cli]") {
  TempCacheDir cache;
  const RunResult r = run_wyjit("precompile --k 2 --io f32 " + cache.arg());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--arch") != std::string::npos);
  CHECK(cache.empty());
}

TEST_CASE("cli: a bad --k value is a usage error naming the value", "[cli]") {
  TempCacheDir cache;
  const RunResult r = run_wyjit("precompile --arch sm_90 --k 0 " + cache.arg());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("'0'") != std::string::npos);
  CHECK(r.output.find("--k") != std::string::npos);
  CHECK(cache.empty());

  const RunResult range = run_wyjit("precompile --arch sm_90 --k 5-3 " + cache.arg());
  INFO(range.output);
  CHECK(range.status == 2);
  CHECK(range.output.find("5-3") != std::string::npos);

  const RunResult io = run_wyjit("precompile --arch sm_90 --io f64 " + cache.arg());
  INFO(io.output);
  CHECK(io.status == 2);
  CHECK(io.output.find("f64") != std::string::npos);

  const RunResult arch = run_wyjit("precompile --arch sm_banana " + cache.arg());
  INFO(arch.output);
  CHECK(arch.status == 2);
  CHECK(arch.output.find("sm_banana") != std::string::npos);
  CHECK(cache.empty());
}

TEST_CASE("cli: source prints the stamped kernel", "[cli]") {
  const RunResult r = run_wyjit(std::string("source ") + kVariant);
  INFO(r.output.substr(0, 2000));
  CHECK(r.status == 0);
  CHECK(r.output.find("gdn_verify") != std::string::npos);
}

TEST_CASE("cli: compile with a bad variant name is a usage error", "[cli]") {
  TempCacheDir cache;
  const RunResult r = run_wyjit("compile gdn_verify.k99.io_bf16 --arch sm_90 " + cache.arg());
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("gdn_verify.k99.io_bf16") != std::string::npos);
  CHECK(cache.empty());
}

TEST_CASE("cli: precompile compiles once, then finds the entry cached", "[cli]") {
  TempCacheDir cache;
  const std::string args = "precompile --arch sm_90 --k 2 --io f32 " + cache.arg();

  const RunResult first = run_wyjit(args);
  INFO(first.output);
  REQUIRE(first.status == 0);
  CHECK(first.output.find("1 compiled") != std::string::npos);
  CHECK(first.output.find("gdn_verify.k2.io_f32.st_f32.strided.vk.d128") != std::string::npos);
  CHECK_FALSE(cache.empty());

  const RunResult second = run_wyjit(args);
  INFO(second.output);
  CHECK(second.status == 0);
  CHECK(second.output.find("1 already cached") != std::string::npos);
  CHECK(second.output.find("0 compiled") != std::string::npos);
}
