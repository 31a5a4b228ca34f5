// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile` as a user runs it: selectors and families, usage errors, progress output,
// --json, and what lands in the cache.
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

TEST_CASE("cli: precompile compiles once, then finds the entry cached", "[cli]") {
  TempCacheDir cache;
  const std::string args =
      "precompile --arch sm_90 --family gdn_verify --k 2 --io f32 --addressing strided "
      "--gating off " +
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
             Catch::Contains("--dk 64 selects gdn_verify,gdn_replay variants, but --family is "
                             "conv1d_update"));
  CHECK_THAT(refused("--gating --family conv1d_update"),
             Catch::Contains("--gating selects gdn_verify,gdn_replay variants"));
  CHECK_THAT(refused("--family gdn_verify --log 16"),
             Catch::Contains("--log 16 selects gdn_replay variants, but --family is gdn_verify"));
  CHECK_THAT(refused("--family gdn_verify,conv1d_usdate"),
             Catch::Contains("bad value 'conv1d_usdate' for --family: expected one of gdn_verify, "
                             "conv1d_update"));
  CHECK_THAT(refused("--weight f8"),
             Catch::Contains("bad value 'f8' for --weight: expected one of f32, f16, bf16, or io"));
  CHECK_THAT(refused("--set width=1"),
             Catch::Contains("bad value '1' for --set width: must be in 2..8"));
  CHECK_THAT(refused("--set colour=red"), Catch::Contains("no family has a field 'colour'"));
  CHECK_THAT(refused("--bias yes"),
             Catch::Contains("bad value 'yes' for --bias: expected on or off"));
  CHECK_THAT(refused("--width 1"), Catch::Contains("bad value '1' for --width: must be in 2..8"));
  CHECK_THAT(refused("--rollback replay"), Catch::Contains("bad value 'replay' for --rollback"));
}

TEST_CASE("cli: precompile selects conv1d_update variants by family", "[cli]") {
  TempCacheDir cache;
  // `precompile --json --arch sm_90 SELECTORS` into the test's cache: its JSON report.
  const auto precompile = [&](const std::string& selectors) {
    const RunResult r =
        run_wyjit("precompile --json --arch sm_90 " + selectors + " " + cache.arg());
    INFO(r.output);
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.output);
  };
  const auto variants = [](const nlohmann::json& doc) {
    std::vector<std::string> out;
    for (const auto& result : doc.at("results")) out.push_back(result.at("variant"));
    return out;
  };

  // --family conv1d_update: the standard conv1d part (bf16, W 4, weights bf16, SiLU, no bias)
  // narrowed by the selectors given.
  CHECK(variants(precompile("--family conv1d_update --k 2 --rollback window "
                            "--addressing slot,table")) ==
        std::vector<std::string>{
            "conv1d_update.k2.io_bf16.w4.wt_bf16.window.slot.silu",
            "conv1d_update.k2.io_bf16.w4.wt_bf16.window.table.silu",
        });

  // `--set FIELD=VALUES` is the same selector.
  CHECK(variants(precompile("--family conv1d_update --set k=2 --set rollback=window "
                            "--set addressing=slot,table")) ==
        std::vector<std::string>{
            "conv1d_update.k2.io_bf16.w4.wt_bf16.window.slot.silu",
            "conv1d_update.k2.io_bf16.w4.wt_bf16.window.table.silu",
        });

  // A conv1d-only selector without --family selects that family only; every option.
  CHECK(variants(precompile("--k 3 --io f16 --addressing strided --rollback intermediate "
                            "--weight f32 --bias on --silu off,on --width 3")) ==
        std::vector<std::string>{
            "conv1d_update.k3.io_f16.w3.wt_f32.intermediate.strided.bias",
            "conv1d_update.k3.io_f16.w3.wt_f32.intermediate.strided.bias.silu",
        });

  // `--weight io,f32` with io f32 names one variant twice: it is built and reported once.
  CHECK(variants(precompile("--family conv1d_update --k 1 --io f32 --addressing strided "
                            "--rollback window --weight io,f32")) ==
        std::vector<std::string>{"conv1d_update.k1.io_f32.w4.wt_f32.window.strided.silu"});

  // Selectors of two families: each family takes its own; shared ones apply to both.
  const nlohmann::json both = precompile(
      "--family gdn_verify,conv1d_update --k 1 --io f32 --addressing strided --layout kv "
      "--rollback window");
  CHECK(variants(both) == std::vector<std::string>{
                              "gdn_verify.k1.io_f32.st_f32.strided.kv.d128.l2norm",
                              "gdn_verify.k1.io_f32.st_f32.strided.kv.d128.l2norm.gating",
                              "conv1d_update.k1.io_f32.w4.wt_f32.window.strided.silu",
                          });
  CHECK(both.at("summary").at("cached") == 1);

  // Only shared selectors: every family of the standard matrix, each with its standard values.
  const nlohmann::json shared = precompile("--k 2 --io bf16 --addressing slot");
  CHECK(variants(shared) == std::vector<std::string>{
                                "gdn_verify.k2.io_bf16.st_f32.slot.vk.d128.l2norm",
                                "gdn_verify.k2.io_bf16.st_f32.slot.vk.d128.l2norm.gating",
                                "conv1d_update.k2.io_bf16.w4.wt_bf16.intermediate.slot.silu",
                                "conv1d_update.k2.io_bf16.w4.wt_bf16.window.slot.silu",
                                "gdn_replay.k2.l16.io_bf16.st_f32.slot.vk.d128.l2norm",
                                "gdn_replay.k2.l16.io_bf16.st_f32.slot.vk.d128.l2norm.gating",
                                "gdn_replay.k2.l32.io_bf16.st_f32.slot.vk.d128.l2norm",
                                "gdn_replay.k2.l32.io_bf16.st_f32.slot.vk.d128.l2norm.gating",
                            });
  CHECK(shared.at("summary").at("cached") == 1);

  // A family's fields alone select it: --log is gdn_replay's; K beyond L/2 is left out.
  CHECK(variants(precompile("--log 8 --k 3-5 --addressing strided")) ==
        std::vector<std::string>{
            "gdn_replay.k3.l8.io_bf16.st_f32.strided.vk.d128.l2norm",
            "gdn_replay.k4.l8.io_bf16.st_f32.strided.vk.d128.l2norm",
            "gdn_replay.k3.l8.io_bf16.st_f32.strided.vk.d128.l2norm.gating",
            "gdn_replay.k4.l8.io_bf16.st_f32.strided.vk.d128.l2norm.gating",
        });
}

TEST_CASE("cli: precompile selectors, plain progress lines off a terminal, --json", "[cli]") {
  TempCacheDir cache;
  const RunResult r = run_wyjit(
      "precompile --arch sm_90 --family gdn_verify --k 3 --io f16 --addressing table,slot "
      "--layout kv --dk 64 --dv 128 --l2norm --gating off -j 2 " +
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
      "precompile --json --arch sm_90 --family gdn_verify --k 3 --io f16 --addressing "
      "table,slot --layout kv --dk 64 --dv 128 --l2norm --gating off " +
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
