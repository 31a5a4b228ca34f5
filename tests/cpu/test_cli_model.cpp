// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile --model config.json [--tp LIST]` and `--dry-run` on the published configs of
// Qwen3-Next and Qwen3.5 (tests/fixtures/models/): the variants, each rank's shapes, selectors
// against the model, and the usage errors.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace {

using wyjit::cli_test::run_wyjit;
using wyjit::cli_test::RunResult;
using wyjit::cli_test::shell_quote;
using wyjit::cli_test::TempCacheDir;

const std::string kFixtures = WYJIT_SOURCE_DIR "/tests/fixtures/models/";
const std::string kNext = kFixtures + "qwen3-next-80b-a3b-instruct.json";
const std::string kQwen35 = kFixtures + "qwen3.5-27b.json";

// `precompile --dry-run --json --arch sm_90 ARGS`: its document.
nlohmann::json dry_run(const std::string& args) {
  const RunResult r = run_wyjit("precompile --dry-run --json --arch sm_90 " + args);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.output);
}

std::vector<std::string> variants(const nlohmann::json& doc) {
  return doc.at("variants").get<std::vector<std::string>>();
}

// The usage error (exit 2) of `precompile --arch sm_90 ARGS`.
std::string refused(const std::string& args) {
  const RunResult r = run_wyjit("precompile --arch sm_90 " + args);
  INFO(r.output);
  CHECK(r.status == 2);
  return r.output;
}

}  // namespace

TEST_CASE("cli: precompile --model builds what the model's GDN layers run", "[cli][model]") {
  const nlohmann::json next = dry_run("--model " + shell_quote(kNext) + " --tp 1,2,4,8,16");
  const nlohmann::json& model = next.at("model");
  CHECK(model.at("model_type") == "qwen3_next");
  CHECK(model.at("gdn_layers") == 36);
  CHECK(model.at("dtype") == "bf16");
  CHECK(model.at("state_dtype").is_null());
  REQUIRE(model.at("shards").size() == 5);
  CHECK(model.at("shards")[3] == nlohmann::json({{"tp", 8},
                                                 {"num_key_heads", 2},
                                                 {"num_value_heads", 4},
                                                 {"conv_channels", 2 * 2 * 128 + 4 * 128}}));
  // K 1..17 (gdn_replay: 1..16 within L >= 2K) and every addressing mode; everything else is the
  // model's: bf16, d128, q/k normalised and gates fused, conv width 4 with SiLU and no bias.
  const std::vector<std::string> all = variants(next);
  CHECK(all.size() == 17 * 3 + 17 * 2 * 3 + (8 + 16) * 3);
  for (const std::string& v : all) {
    INFO(v);
    CHECK(v.find("io_bf16") != std::string::npos);
    if (v.starts_with("conv1d_update")) {
      CHECK(v.find(".w4.wt_bf16.") != std::string::npos);
      CHECK(v.ends_with(".silu"));
    } else {
      CHECK(v.find(".io_bf16.st_f32.") != std::string::npos);
      CHECK(v.ends_with(".vk.d128.l2norm.gating"));
    }
  }
  // ... and --all compiles each of them.
  const std::vector<std::string> standard = variants(dry_run("--all"));
  const std::set<std::string> in_standard(standard.begin(), standard.end());
  for (const std::string& v : all) CHECK(in_standard.count(v) == 1);

  // Qwen3.5: the same variants (its config names an f32 SSM state, the standard's), its own
  // shapes; selectors narrow what the model leaves open or change what its architecture implies.
  const nlohmann::json q35 = dry_run("--model " + shell_quote(kQwen35) +
                                     " --tp 8 --k 2 "
                                     "--addressing slot --gating off,on --family gdn_verify");
  CHECK(q35.at("model").at("state_dtype") == "f32");
  CHECK(q35.at("model").at("shards")[0].at("num_value_heads") == 6);
  CHECK(variants(q35) == std::vector<std::string>{
                             "gdn_verify.k2.io_bf16.st_f32.slot.vk.d128.l2norm",
                             "gdn_verify.k2.io_bf16.st_f32.slot.vk.d128.l2norm.gating",
                         });
  // The people's form prints the model, each rank and the variants.
  const RunResult text =
      run_wyjit("precompile --dry-run --arch sm_90 --k 4 --model " + shell_quote(kQwen35));
  INFO(text.output);
  CHECK(text.status == 0);
  CHECK_THAT(text.output,
             Catch::Contains("model qwen3_5_text (" + kQwen35 + "): 48 GDN layers of 64"));
  CHECK_THAT(text.output, Catch::Contains("text_config.mamba_ssm_dtype = \"float32\""));
  CHECK_THAT(text.output,
             Catch::Contains("tp 1: 16 key heads, 48 value heads, 10240 conv channels per rank"));
  CHECK_THAT(text.output, Catch::Contains("15 variants"));
  CHECK_THAT(text.output,
             Catch::Contains("  gdn_replay.k4.l32.io_bf16.st_f32.slot.vk.d128.l2norm.gating"));
}

TEST_CASE("cli: precompile --model refuses what the model contradicts (2)", "[cli][model]") {
  const std::string next = "--model " + shell_quote(kNext) + " ";
  CHECK_THAT(refused(next + "--tp 3"),
             Catch::Contains("--tp 3: " + kNext +
                             ": tensor-parallel degree 3 does not divide "
                             "linear_num_key_heads = 16: every rank must hold whole heads"));
  CHECK_THAT(refused("--model " + shell_quote(kQwen35) + " --tp 32"),
             Catch::Contains("degree 32 does not divide text_config.linear_num_key_heads = 16"));
  CHECK_THAT(refused(next + "--io f16"),
             Catch::Contains("--io f16 contradicts the model: torch_dtype = \"bfloat16\" makes "
                             "gdn_verify's io dtype bf16; drop --io"));
  CHECK_THAT(refused("--model " + shell_quote(kQwen35) + " --state bf16"),
             Catch::Contains("--state bf16 contradicts the model: text_config.mamba_ssm_dtype = "
                             "\"float32\" makes gdn_verify's state dtype f32"));
  CHECK_THAT(refused(next + "--width 3"), Catch::Contains("linear_conv_kernel_dim = 4 makes "
                                                          "conv1d_update's width 4"));
  CHECK_THAT(refused(next + "--all"), Catch::Contains("--all is the standard matrix and --model"));
  CHECK_THAT(refused("--tp 2 --family gdn_verify"),
             Catch::Contains("--tp splits a model's heads: give --model config.json too"));
  CHECK_THAT(refused("--model " + shell_quote(kFixtures + "none.json")),
             Catch::Contains("--model: " + kFixtures + "none.json: cannot be read"));
  CHECK_THAT(refused(next + "--tp 0"), Catch::Contains("bad value '0' for --tp"));
  // A selector the model leaves open passes through (the state, since Qwen3-Next names none).
  CHECK(variants(dry_run(next + "--family gdn_verify --k 1 --addressing strided --state bf16")) ==
        std::vector<std::string>{"gdn_verify.k1.io_bf16.st_bf16.strided.vk.d128.l2norm.gating"});
}

TEST_CASE("cli: precompile --model compiles into the root and reports the model", "[cli][model]") {
  TempCacheDir cache;
  const std::string args =
      "precompile --json --arch sm_90 --k 2 --addressing strided -j 2 --model " +
      shell_quote(kNext) + " --tp 2 " + cache.arg();
  const RunResult first = run_wyjit(args);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const nlohmann::json doc = nlohmann::json::parse(first.output);
  CHECK(doc.at("model").at("shards")[0].at("tp") == 2);
  std::vector<std::string> built;
  for (const auto& r : doc.at("results")) built.push_back(r.at("variant"));
  CHECK(built == std::vector<std::string>{
                     "gdn_verify.k2.io_bf16.st_f32.strided.vk.d128.l2norm.gating",
                     "conv1d_update.k2.io_bf16.w4.wt_bf16.intermediate.strided.silu",
                     "conv1d_update.k2.io_bf16.w4.wt_bf16.window.strided.silu",
                     "gdn_replay.k2.l16.io_bf16.st_f32.strided.vk.d128.l2norm.gating",
                     "gdn_replay.k2.l32.io_bf16.st_f32.strided.vk.d128.l2norm.gating",
                 });
  CHECK(doc.at("summary").at("compiled") == 5);
  CHECK(cache.files().size() == 5);
  const RunResult again = run_wyjit(args);
  REQUIRE(again.status == 0);
  CHECK(nlohmann::json::parse(again.output).at("summary").at("cached") == 5);
}
