// SPDX-License-Identifier: Apache-2.0
// The GDN model reader (src/spec/gdn_model.cpp) on the published configs of Qwen3-Next and
// Qwen3.5 (tests/fixtures/models/) and on broken ones, tensor-parallel shards, and what each
// family takes from a model.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "spec/family.hpp"
#include "spec/field_values.hpp"
#include "spec/gdn_model.hpp"
#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace {

using nlohmann::json;
using wyjit::detail::GdnModel;

const std::string kFixtures = WYJIT_SOURCE_DIR "/tests/fixtures/models/";
const std::string kNext = kFixtures + "qwen3-next-80b-a3b-instruct.json";
const std::string kQwen35 = kFixtures + "qwen3.5-27b.json";

json fixture(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return json::parse(in);
}

// The message parse_gdn_model refuses `config` with (fails the test when it accepts it).
std::string refusal(const json& config) {
  try {
    (void)wyjit::detail::parse_gdn_model(config.dump(), "config.json");
  } catch (const wyjit::Error& e) {
    CHECK(e.code() == wyjit::ErrorCode::invalid_argument);
    return e.what();
  }
  FAIL("accepted: " << config.dump());
  return "";
}

// The variants of every family a model fixes, each of its other fields at its default.
std::vector<wyjit::KernelSpec> model_defaults(const GdnModel& model) {
  std::vector<wyjit::KernelSpec> out;
  for (const wyjit::detail::Family* f : wyjit::detail::families()) {
    wyjit::KernelSpec spec = f->make();
    for (const wyjit::detail::ModelFieldValue& v : f->model_values(model)) {
      const int i = wyjit::detail::field_index(*f, v.field);
      INFO(f->name() << " names field " << v.field);
      REQUIRE(i >= 0);
      f->set(spec, static_cast<std::size_t>(i), v.value);
      CHECK_FALSE(v.source.empty());
    }
    out.push_back(spec);
  }
  return out;
}

}  // namespace

TEST_CASE("gdn model: Qwen3-Next's config, fields at the top level", "[gdn_model]") {
  const GdnModel m = wyjit::detail::read_gdn_model(kNext);
  CHECK(m.path == kNext);
  CHECK(m.model_type == "qwen3_next");
  CHECK(m.num_key_heads.value == 16);
  CHECK(m.num_key_heads.source() == "linear_num_key_heads = 16");
  CHECK(m.num_value_heads.value == 32);
  CHECK(m.key_head_dim.value == 128);
  CHECK(m.value_head_dim.value == 128);
  CHECK(m.conv_kernel.value == 4);
  CHECK(m.dtype.value == wyjit::DType::bf16);
  CHECK(m.dtype.source() == "torch_dtype = \"bfloat16\"");
  CHECK_FALSE(m.state_dtype.has_value());
  CHECK(m.layers == 48);
  CHECK(m.gdn_layers == 36);  // every fourth layer is full attention
}

TEST_CASE("gdn model: Qwen3.5's config, fields under text_config", "[gdn_model]") {
  const GdnModel m = wyjit::detail::read_gdn_model(kQwen35);
  CHECK(m.model_type == "qwen3_5_text");
  CHECK(m.num_key_heads.source() == "text_config.linear_num_key_heads = 16");
  CHECK(m.num_value_heads.value == 48);
  CHECK(m.dtype.source() == "text_config.dtype = \"bfloat16\"");
  REQUIRE(m.state_dtype.has_value());
  CHECK(m.state_dtype->value == wyjit::DType::f32);
  CHECK(m.state_dtype->key == "text_config.mamba_ssm_dtype");
  CHECK(m.layers == 64);
  CHECK(m.gdn_layers == 48);  // counted in layer_types

  // Without a dtype in text_config, the top level's; torch_dtype after dtype; torch.float16 too.
  json c = fixture(kQwen35);
  c["text_config"].erase("dtype");
  c["torch_dtype"] = "torch.float16";
  const GdnModel top = wyjit::detail::parse_gdn_model(c.dump());
  CHECK(top.dtype.value == wyjit::DType::f16);
  CHECK(top.dtype.key == "torch_dtype");
}

TEST_CASE("gdn model: a broken config is refused naming the field and its value", "[gdn_model]") {
  const json next = fixture(kNext);
  const auto with = [&](const char* field, const json& value) {
    json c = next;
    c[field] = value;
    return refusal(c);
  };
  const auto without = [&](const char* field) {
    json c = next;
    c.erase(field);
    return refusal(c);
  };
  CHECK(without("linear_num_key_heads") == "config.json: linear_num_key_heads is missing");
  CHECK(without("linear_conv_kernel_dim") == "config.json: linear_conv_kernel_dim is missing");
  CHECK(with("linear_num_value_heads", "32") ==
        "config.json: linear_num_value_heads is \"32\": expected a positive integer");
  CHECK(with("linear_key_head_dim", 0) ==
        "config.json: linear_key_head_dim is 0: expected a positive integer");
  CHECK(with("linear_value_head_dim", 128.5) ==
        "config.json: linear_value_head_dim is 128.5: expected a positive integer");
  CHECK(with("linear_num_key_heads", -16) ==
        "config.json: linear_num_key_heads is -16: expected a positive integer");
  CHECK(with("torch_dtype", "float8_e4m3fn") ==
        "config.json: torch_dtype is \"float8_e4m3fn\": expected \"bfloat16\", \"float16\" or "
        "\"float32\"");
  CHECK(with("linear_num_value_heads", 24) ==
        "config.json: linear_num_value_heads = 24 is not a multiple of linear_num_key_heads = 16 "
        "(each key head serves the same number of value heads)");
  CHECK(without("torch_dtype") == "config.json: no dtype: none of dtype, torch_dtype is set");
  CHECK(with("layer_types", json::array({"full_attention", "full_attention"})) ==
        "config.json: layer_types names no linear_attention layer: the model has no GDN layer");

  json nested = fixture(kQwen35);
  nested["text_config"].erase("linear_num_value_heads");
  CHECK(refusal(nested) == "config.json: text_config.linear_num_value_heads is missing");
  nested = fixture(kQwen35);
  nested["text_config"]["mamba_ssm_dtype"] = "fp32";
  CHECK(refusal(nested) ==
        "config.json: text_config.mamba_ssm_dtype is \"fp32\": expected "
        "\"bfloat16\", \"float16\" or \"float32\"");

  CHECK_THAT(refusal(json::array({1, 2})), Catch::Contains("not a JSON object"));
  try {
    (void)wyjit::detail::parse_gdn_model("{\"linear_num_key_heads\": ", "config.json");
    FAIL("accepted truncated JSON");
  } catch (const wyjit::Error& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("config.json: not valid JSON: "));
  }
  CHECK_THROWS_WITH(wyjit::detail::read_gdn_model(kFixtures + "no-such-model.json"),
                    kFixtures + "no-such-model.json: cannot be read");
}

TEST_CASE("gdn model: tensor parallelism splits whole heads, else names the field", "[gdn_model]") {
  const GdnModel next = wyjit::detail::read_gdn_model(kNext);
  const wyjit::detail::GdnShard tp4 = wyjit::detail::shard_gdn_model(next, 4);
  CHECK(tp4.num_key_heads == 4);
  CHECK(tp4.num_value_heads == 8);
  CHECK(tp4.conv_channels == 2 * 4 * 128 + 8 * 128);
  CHECK(wyjit::detail::shard_gdn_model(next, 16).num_key_heads == 1);
  CHECK_THROWS_WITH(wyjit::detail::shard_gdn_model(next, 32),
                    kNext +
                        ": tensor-parallel degree 32 does not divide linear_num_key_heads = "
                        "16: every rank must hold whole heads");
  CHECK_THROWS_WITH(wyjit::detail::shard_gdn_model(next, 0),
                    kNext + ": tensor-parallel degree 0: must be >= 1");

  // Qwen3.5-27B: 48 value heads split three ways, 16 key heads do not.
  const GdnModel q35 = wyjit::detail::read_gdn_model(kQwen35);
  CHECK(wyjit::detail::shard_gdn_model(q35, 8).num_value_heads == 6);
  CHECK_THROWS_WITH(wyjit::detail::shard_gdn_model(q35, 3),
                    Catch::Contains("degree 3 does not divide text_config.linear_num_key_heads = "
                                    "16"));
  // The value heads are checked too (a config parse_gdn_model accepts never gets there: they are
  // a multiple of the key heads).
  GdnModel odd = q35;
  odd.path = "odd.json";
  odd.num_value_heads = {.value = 50, .key = "linear_num_value_heads", .text = "50"};
  CHECK_THROWS_WITH(wyjit::detail::shard_gdn_model(odd, 8),
                    "odd.json: tensor-parallel degree 8 does not divide linear_num_value_heads = "
                    "50: every rank must hold whole heads");
  // Channels past an int are refused, not wrapped (found by fuzz/fuzz_model_config.cpp).
  json huge = fixture(kNext);
  huge["linear_key_head_dim"] = 2147483647;
  const GdnModel wide = wyjit::detail::parse_gdn_model(huge.dump(), "huge.json");
  CHECK_THROWS_WITH(wyjit::detail::shard_gdn_model(wide, 1),
                    Catch::StartsWith("huge.json: a rank's convolution has 68719480800 channels "
                                      "(linear_num_key_heads = 16, linear_key_head_dim = "
                                      "2147483647") &&
                        Catch::EndsWith("tp 1): more than 2147483647"));
}

TEST_CASE("gdn model: a number past a double is refused as invalid JSON", "[gdn_model]") {
  // Found by fuzz/fuzz_model_config.cpp: nlohmann's out_of_range escaped the reader.
  for (const char* text : {"9199000000000e100000000e15", "{\"linear_num_key_heads\": 1e400}"}) {
    try {
      (void)wyjit::detail::parse_gdn_model(text, "config.json");
      FAIL("accepted " << text);
    } catch (const wyjit::Error& e) {
      CHECK(e.code() == wyjit::ErrorCode::invalid_argument);
      CHECK_THAT(e.what(), Catch::StartsWith("config.json: not valid JSON: "));
    }
  }
}

TEST_CASE("gdn model: a full_attention_interval of 1 leaves no GDN layer and is refused",
          "[gdn_model]") {
  json config = fixture(kNext);
  config.erase("layer_types");
  config["full_attention_interval"] = 1;
  CHECK(refusal(config) ==
        "config.json: full_attention_interval = 1 makes all num_hidden_layers = " +
            std::to_string(config["num_hidden_layers"].get<int>()) +
            " full attention: the model has no GDN layer");
  config["full_attention_interval"] = 4;
  const GdnModel m = wyjit::detail::parse_gdn_model(config.dump(), "config.json");
  REQUIRE(m.gdn_layers.has_value());
  CHECK(*m.gdn_layers == *m.layers - *m.layers / 4);
}

TEST_CASE(
    "gdn model: every family takes only its own fields, and the standard matrix holds "
    "what the shipped models run",
    "[gdn_model]") {
  const std::vector<wyjit::KernelSpec> standard = wyjit::standard_matrix();
  const std::set<wyjit::KernelSpec> in_standard(standard.begin(), standard.end());
  for (const std::string& path : {kNext, kQwen35}) {
    const GdnModel model = wyjit::detail::read_gdn_model(path);
    for (const wyjit::KernelSpec& spec : model_defaults(model)) {
      INFO(path << ": " << wyjit::format_spec(spec));
      CHECK_NOTHROW(wyjit::validate_spec(spec));
      // With the model's fields set and the rest at their defaults (K 4, strided, ...), each
      // family's variant is one --all compiles.
      CHECK(in_standard.count(spec) == 1);
    }
  }
  const GdnModel next = wyjit::detail::read_gdn_model(kNext);
  const std::vector<wyjit::KernelSpec> specs = model_defaults(next);
  CHECK(wyjit::format_spec(specs.at(0)) ==
        "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.l2norm.gating");
  CHECK(wyjit::format_spec(specs.at(1)) ==
        "conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.strided.silu");
  CHECK(wyjit::format_spec(specs.at(2)) ==
        "gdn_replay.k4.l16.io_bf16.st_f32.strided.vk.d128.l2norm.gating");
}
