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
#include "cli_test_support.hpp"

using namespace wyjit::cli_test;

TEST_CASE("cli: --help and --version exit 0", "[cli]") {
  const RunResult help = run_wyjit("--help");
  INFO(help.output);
  CHECK(help.status == 0);
  CHECK(help.output.find("precompile") != std::string::npos);
  CHECK(help.output.find("Exit status") != std::string::npos);

  const RunResult version = run_wyjit("--version");
  INFO(version.output);
  CHECK(version.status == 0);
  CHECK(version.output.find("0.2.0") != std::string::npos);

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
           "precompile --arch sm_90 --silu maybe",
           "precompile --arch sm_90 --weight f8",
           "precompile --arch sm_90 --set",
           "precompile --arch sm_90 --set k",
           "precompile --arch sm_90 --set nofield=1",
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

TEST_CASE("cli: list, verify (and --repair) and prune", "[cli]") {
  TempCacheDir cache;
  REQUIRE(run_wyjit("precompile --arch sm_90 --family gdn_verify --k 1-2 --io f32 --addressing "
                    "strided --gating off " +
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
      .roles = {{"verify", "_Z3foov"}},
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
