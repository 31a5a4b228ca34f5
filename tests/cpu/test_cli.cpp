// SPDX-License-Identifier: Apache-2.0
// The `wyjit` CLI as a user runs it: exit codes, messages, and what lands in the cache.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"

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

// Runs `command` through the shell and collects what it prints.
RunResult run_command(const std::string& command) {
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

// `env ... wyjit` with the cache variables cleared, then `env` (VAR=value ...) set.
std::string wyjit_command(const std::string& env) {
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
         "-u WYJIT_CACHE_MAX_BYTES -u WYJIT_LOG_LEVEL WYJIT_LOCK_DIR=" +
         shell_quote(lock_dir.path.string()) + " " + env + " " +
         shell_quote(WYJIT_BINARY_DIR "/bin/wyjit");
}

// Runs `wyjit ARGS`, stdout and stderr merged; the environment variables that would change
// where the cache is read from, or forbid compiling, are cleared, then `env` is set.
RunResult run_wyjit(const std::string& args, const std::string& env = "") {
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

constexpr const char* kVariant = "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128";
constexpr const char* kSmall =
    "--arch sm_90 --family gdn_verify --k 1 --io f32 --addressing strided";

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
  const std::string args =
      "precompile --arch sm_90 --family gdn_verify --k 2 --io f32 --addressing strided " +
      cache.arg();

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

TEST_CASE("cli: every subcommand has --help and exits 0", "[cli]") {
  for (const char* command :
       {"precompile", "compile", "source", "list", "verify", "prune", "info"}) {
    const RunResult r = run_wyjit(std::string(command) + " --help");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find(std::string("Usage: wyjit ") + command) != std::string::npos);
    CHECK(r.output.find("Exit status") != std::string::npos);
    const RunResult via_help = run_wyjit(std::string("help ") + command);
    CHECK(via_help.status == 0);
    CHECK(via_help.output == r.output);
  }
}

TEST_CASE("cli: bad arguments exit 2 and write nothing", "[cli]") {
  TempCacheDir cache;
  for (const std::string& args : std::vector<std::string>{
           "precompile --arch sm_90 --all --k 2",
           "precompile --arch sm_90 --addressing strided,sideways",
           "precompile --arch sm_90 --dk 100",
           "precompile --arch sm_90 --state f64",
           "precompile --arch sm_90 --layout xy",
           "precompile --arch sm_90 -j 0",
           "compile " + std::string(kVariant),
           "compile --arch sm_90",
           "compile " + std::string(kVariant) + " --arch sm_90 --arch sm_80",
           "source",
           "source not.a.variant",
           "list --frob",
           "verify extra",
           "prune --max-bytes lots",
           "prune --max-bytes",
           "info --json-please",
           "precompile --arch sm_90 --family foo",
           "precompile --arch sm_90 --family gdn_verify --rollback window",
           "precompile --arch sm_90 --family conv1d_update --layout kv",
           "precompile --arch sm_90 --family conv1d_update --l2norm",
           "precompile --arch sm_90 --all --family conv1d_update",
           "precompile --arch sm_90 --bias maybe",
           "precompile --arch sm_90 --silu",
           "precompile --arch sm_90 --weight bf16",
           "precompile --arch sm_90 --width 9",
           "precompile --arch sm_90 --rollback sideways",
       }) {
    const RunResult r = run_wyjit(args + " " + cache.arg());
    INFO(args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("--help") != std::string::npos);
    CHECK(cache.empty());
  }
  const RunResult bytes = run_wyjit("prune --max-bytes 12Q " + cache.arg());
  CHECK(bytes.output.find("'12Q'") != std::string::npos);
  const RunResult dims = run_wyjit("precompile --arch sm_90 --dk 100 " + cache.arg());
  CHECK(dims.output.find("--dk") != std::string::npos);
}

TEST_CASE("cli: family-only selectors name the flag, its value and the families", "[cli]") {
  TempCacheDir cache;
  const auto refused = [&](const std::string& args) {
    const RunResult r = run_wyjit("precompile --arch sm_90 " + args + " " + cache.arg());
    INFO(args << "\n" << r.output);
    CHECK(r.status == 2);
    CHECK(cache.empty());
    return r.output;
  };
  CHECK_THAT(refused("--family gdn_verify --rollback window"),
             Catch::Contains("--rollback window selects conv1d_update variants, but --family is "
                             "gdn_verify"));
  CHECK_THAT(refused("--family conv1d_update --dk 64"),
             Catch::Contains("--dk 64 selects gdn_verify variants, but --family is conv1d_update"));
  CHECK_THAT(refused("--gating --family conv1d_update"),
             Catch::Contains("--gating selects gdn_verify variants"));
  CHECK_THAT(refused("--family gdn_verify,conv1d_usdate"),
             Catch::Contains("bad value 'conv1d_usdate' for --family: expected one of gdn_verify, "
                             "conv1d_update"));
  CHECK_THAT(refused("--weight bf16"), Catch::Contains("bad value 'bf16' for --weight"));
  CHECK_THAT(refused("--bias yes"),
             Catch::Contains("bad value 'yes' for --bias: expected on or off"));
  CHECK_THAT(refused("--width 1"), Catch::Contains("bad value '1' for --width: must be in 2..8"));
  CHECK_THAT(refused("--rollback replay"), Catch::Contains("bad value 'replay' for --rollback"));
}

TEST_CASE("cli: precompile selects conv1d_update variants by family", "[cli]") {
  TempCacheDir cache;
  // --family conv1d_update: the standard conv1d part (bf16, W 4, weights bf16, SiLU, no bias)
  // narrowed by the selectors given.
  const RunResult conv = run_wyjit(
      "precompile --json --arch sm_90 --family conv1d_update --k 2 --rollback window "
      "--addressing slot,table " +
      cache.arg());
  INFO(conv.output);
  REQUIRE(conv.status == 0);
  const auto variants = [](const RunResult& r) {
    std::vector<std::string> out;
    const auto doc = nlohmann::json::parse(r.output);
    for (const auto& result : doc.at("results")) out.push_back(result.at("variant"));
    return out;
  };
  CHECK(variants(conv) == std::vector<std::string>{
                              "conv1d_update.k2.io_bf16.w4.wt_bf16.window.slot.silu",
                              "conv1d_update.k2.io_bf16.w4.wt_bf16.window.table.silu",
                          });

  // A conv1d-only selector without --family selects that family only; every option.
  const RunResult options = run_wyjit(
      "precompile --json --arch sm_90 --k 3 --io f16 --addressing strided --rollback "
      "intermediate --weight f32 --bias on --silu off,on --width 3 " +
      cache.arg());
  INFO(options.output);
  REQUIRE(options.status == 0);
  CHECK(variants(options) == std::vector<std::string>{
                                 "conv1d_update.k3.io_f16.w3.wt_f32.intermediate.strided.bias",
                                 "conv1d_update.k3.io_f16.w3.wt_f32.intermediate.strided.bias.silu",
                             });

  // `--weight io,f32` with io f32 names one variant twice: it is built and reported once.
  const RunResult same = run_wyjit(
      "precompile --json --arch sm_90 --family conv1d_update --k 1 --io f32 --addressing "
      "strided --rollback window --weight io,f32 " +
      cache.arg());
  INFO(same.output);
  REQUIRE(same.status == 0);
  CHECK(variants(same) ==
        std::vector<std::string>{"conv1d_update.k1.io_f32.w4.wt_f32.window.strided.silu"});

  // Selectors of both families: each family takes its own; shared ones apply to both.
  const RunResult both = run_wyjit(
      "precompile --json --arch sm_90 --k 1 --io f32 --addressing strided --layout kv "
      "--rollback window " +
      cache.arg());
  INFO(both.output);
  REQUIRE(both.status == 0);
  CHECK(variants(both) == std::vector<std::string>{
                              "gdn_verify.k1.io_f32.st_f32.strided.kv.d128",
                              "conv1d_update.k1.io_f32.w4.wt_f32.window.strided.silu",
                          });
  CHECK(nlohmann::json::parse(both.output).at("summary").at("cached") == 1);

  // Only shared selectors: every family of the standard matrix.
  const RunResult shared =
      run_wyjit("precompile --json --arch sm_90 --k 2 --io bf16 --addressing slot " + cache.arg());
  INFO(shared.output);
  REQUIRE(shared.status == 0);
  CHECK(variants(shared) == std::vector<std::string>{
                                "gdn_verify.k2.io_bf16.st_f32.slot.vk.d128",
                                "conv1d_update.k2.io_bf16.w4.wt_bf16.intermediate.slot.silu",
                                "conv1d_update.k2.io_bf16.w4.wt_bf16.window.slot.silu",
                            });
  CHECK(nlohmann::json::parse(shared.output).at("summary").at("cached") == 1);
}

TEST_CASE("cli: precompile selectors, plain progress lines off a terminal, --json", "[cli]") {
  TempCacheDir cache;
  const RunResult r = run_wyjit(
      "precompile --arch sm_90 --k 3 --io f16 --addressing table,slot --layout kv --dk 64 "
      "--dv 128 --l2norm -j 2 " +
      cache.arg());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("compiled  sm_90  gdn_verify.k3.io_f16.st_f32.table.kv.dk64.dv128.l2norm") !=
        std::string::npos);
  CHECK(r.output.find("gdn_verify.k3.io_f16.st_f32.slot.kv.dk64.dv128.l2norm") !=
        std::string::npos);
  CHECK(r.output.find("2 compiled, 0 already cached, 0 failed in ") != std::string::npos);
  CHECK(r.output.find('\r') == std::string::npos);  // no bar: stdout is a pipe

  const RunResult json = run_wyjit(
      "precompile --json --arch sm_90 --k 3 --io f16 --addressing "
      "table,slot --layout kv --dk 64 --dv 128 --l2norm " +
      cache.arg());
  INFO(json.output);
  REQUIRE(json.status == 0);
  const auto doc = nlohmann::json::parse(json.output);
  CHECK(doc.at("summary").at("cached") == 2);
  CHECK(doc.at("results").size() == 2);
  CHECK(doc.at("results")[0].at("status") == "cached");
}

TEST_CASE("cli: precompile draws a progress bar on a terminal", "[cli]") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("skipped: no `script` command to give the CLI a terminal");
    return;
  }
  TempCacheDir cache;
  // `script` runs the CLI on a pseudo-terminal and copies what it prints.
  const std::string inner = wyjit_command("") + " precompile " + kSmall + " " + cache.arg();
  const RunResult r = run_command("script -qec " + shell_quote(inner) + " /dev/null 2>&1");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("\r\x1b[K[") != std::string::npos);
  CHECK(r.output.find("1/1  compiled 1  cached 0  failed 0") != std::string::npos);
  CHECK(r.output.find("1 compiled, 0 already cached, 0 failed") != std::string::npos);
}

TEST_CASE("cli: list, verify (and --repair) and prune", "[cli]") {
  TempCacheDir cache;
  REQUIRE(run_wyjit("precompile --arch sm_90 --family gdn_verify --k 1-2 --io f32 --addressing "
                    "strided " +
                    cache.arg())
              .status == 0);

  const RunResult list = run_wyjit("list " + cache.arg());
  INFO(list.output);
  CHECK(list.status == 0);
  CHECK(list.output.find("(2 entries, ") != std::string::npos);
  CHECK(list.output.find("gdn_verify.k2.io_f32.st_f32.strided.vk.d128") != std::string::npos);
  const RunResult json = run_wyjit("list --json " + cache.arg());
  const auto doc = nlohmann::json::parse(json.output);
  REQUIRE(doc.at("roots").size() == 1);
  CHECK(doc["roots"][0].at("entries").size() == 2);
  CHECK(doc["roots"][0].at("read_only") == false);

  const RunResult clean = run_wyjit("verify " + cache.arg());
  INFO(clean.output);
  CHECK(clean.status == 0);
  CHECK(clean.output.find("2 entries: 2 ok, 0 stale, 0 bad") != std::string::npos);

  // Flip a byte in one entry: verify finds it (3), --repair rebuilds it, then all is clean.
  fs::path victim;
  for (const fs::path& f : cache.files()) {
    if (f.filename().string().find(".k1.") != std::string::npos) victim = f;
  }
  REQUIRE_FALSE(victim.empty());
  {
    std::fstream file(victim, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(200);
    file.put('\x7f');
  }
  const RunResult bad = run_wyjit("verify " + cache.arg());
  INFO(bad.output);
  CHECK(bad.status == 3);
  CHECK(bad.output.find(victim.string()) != std::string::npos);
  CHECK(bad.output.find("1 bad") != std::string::npos);
  const RunResult repair = run_wyjit("verify --repair " + cache.arg());
  INFO(repair.output);
  CHECK(repair.status == 3);
  CHECK(repair.output.find("repaired: " + victim.string()) != std::string::npos);
  CHECK(run_wyjit("verify " + cache.arg()).status == 0);

  // A valid entry of another build (another key) is stale, not bad...
  const wyjit::detail::CacheEntry other{
      .key_text = "wyjit-cache-key 0\nvariant gdn_verify.k1.io_f32.st_f32.strided.vk.d128\n",
      .variant = "gdn_verify.k1.io_f32.st_f32.strided.vk.d128",
      .target = "sm_90",
      .lowered_names = {"_Z3foov"},
      .payload = std::vector<std::uint8_t>(100, 1),
  };
  const fs::path stale =
      victim.parent_path() /
      (other.variant + "." + wyjit::detail::sha256_hex(other.key_text).substr(0, 16) + ".cubin");
  wyjit::detail::write_entry_file_atomic(stale, other);
  const RunResult stale_run = run_wyjit("verify " + cache.arg());
  INFO(stale_run.output);
  CHECK(stale_run.status == 0);
  CHECK(stale_run.output.find("stale  " + stale.filename().string()) != std::string::npos);
  CHECK(stale_run.output.find("3 entries: 2 ok, 1 stale, 0 bad") != std::string::npos);
  // ... but an entry under another variant's name is bad.
  fs::path misnamed = victim;
  misnamed.replace_filename("gdn_verify.k9.io_f32.st_f32.strided.vk.d128." +
                            victim.stem().extension().string().substr(1) + ".cubin");
  fs::copy_file(victim, misnamed);
  const RunResult misnamed_run = run_wyjit("verify " + cache.arg());
  INFO(misnamed_run.output);
  CHECK(misnamed_run.status == 3);
  CHECK(misnamed_run.output.find("bad    " + misnamed.string()) != std::string::npos);

  const RunResult prune = run_wyjit("prune --max-bytes 0 " + cache.arg());
  INFO(prune.output);
  CHECK(prune.status == 0);
  CHECK(prune.output.find("evicted 4 entries") != std::string::npos);
  const RunResult empty = run_wyjit("list " + cache.arg());
  CHECK(empty.output.find("(0 entries, 0 B)") != std::string::npos);
}

TEST_CASE("cli: info reports NVRTC, the driver and every root, and writes nothing", "[cli]") {
  TempCacheDir scratch;
  const fs::path ro = scratch.path() / "ro dir";
  const fs::path root = scratch.path() / "not yet";
  const RunResult r = run_wyjit("info", "WYJIT_CACHE_RO_DIRS=" + shell_quote(ro.string()) +
                                            " WYJIT_CACHE_DIR=" + shell_quote(root.string()));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("libnvrtc") != std::string::npos);
  CHECK(r.output.find("supported archs: ") != std::string::npos);
  CHECK(r.output.find("sm_90") != std::string::npos);
  CHECK(r.output.find("driver: ") != std::string::npos);
  CHECK(r.output.find("read-only " + ro.string()) != std::string::npos);
  CHECK(r.output.find("writable  " + root.string() + " (does not exist yet)") != std::string::npos);
  CHECK(scratch.empty());
}

TEST_CASE("cli: compile and precompile fail (1) when the root cannot be written", "[cli]") {
  TempCacheDir scratch;
  { std::ofstream(scratch.path() / "file") << "x"; }
  const std::string bad_root =
      "--cache-dir " + shell_quote((scratch.path() / "file" / "c").string());
  const RunResult compile =
      run_wyjit(std::string("compile ") + kVariant + " --arch sm_90 " + bad_root);
  INFO(compile.output);
  CHECK(compile.status == 1);
  CHECK(compile.output.find((scratch.path() / "file" / "c").string()) != std::string::npos);
  const RunResult precompile = run_wyjit(std::string("precompile ") + kSmall + " " + bad_root);
  INFO(precompile.output);
  CHECK(precompile.status == 1);
  CHECK(precompile.output.find("cannot write the cache root") != std::string::npos);
}

TEST_CASE("cli: compile ignores WYJIT_NO_JIT and read-only roots; --save-source", "[cli]") {
  TempCacheDir cache;
  TempCacheDir ro;
  REQUIRE(run_wyjit(std::string("compile ") + kVariant + " --arch sm_90 " + ro.arg()).status == 0);
  const RunResult r =
      run_wyjit(std::string("compile ") + kVariant + " --arch sm_90 --save-source " + cache.arg(),
                "WYJIT_NO_JIT=1 WYJIT_CACHE_RO_DIRS=" + shell_quote(ro.path().string()));
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string path = r.output.substr(0, r.output.find('\n'));
  CHECK(path.rfind(cache.path().string(), 0) == 0);
  CHECK(fs::exists(path));
  CHECK(fs::exists(path + ".cu"));
}
