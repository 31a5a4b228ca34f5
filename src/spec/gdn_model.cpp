// SPDX-License-Identifier: Apache-2.0
#include "spec/gdn_model.hpp"

#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace {

using nlohmann::json;

// The config's GDN fields: at the top level (Qwen3-Next), or under text_config (Qwen3.5, whose
// config.json also describes a vision tower).
struct Section {
  const json& fields;
  std::string prefix;  // "text_config." or ""
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, (path.empty() ? "model config" : path) + ": " + message);
}

std::string text_of(const json& value) { return value.dump(); }

ModelField<int> positive(const std::string& path, const Section& s, const char* name) {
  const std::string key = s.prefix + name;
  const auto it = s.fields.find(name);
  if (it == s.fields.end()) fail(path, key + " is missing");
  // NOTE: a JSON number with a fraction or an exponent is no head count, even when whole.
  if (!it->is_number_integer()) {
    fail(path, key + " is " + text_of(*it) + ": expected a positive integer");
  }
  const auto value = it->get<long long>();
  if (value <= 0 || value > std::numeric_limits<int>::max()) {
    fail(path, key + " is " + text_of(*it) + ": expected a positive integer");
  }
  return {static_cast<int>(value), key, text_of(*it)};
}

std::optional<ModelField<DType>> dtype_at(const std::string& path, const json& fields,
                                          const std::string& prefix, const char* name) {
  const auto it = fields.find(name);
  if (it == fields.end() || it->is_null()) return std::nullopt;
  const std::string key = prefix + name;
  const std::string text = it->is_string() ? it->get<std::string>() : "";
  // Hugging Face writes torch dtypes without the "torch." prefix; both spellings are accepted.
  const std::string bare = text.starts_with("torch.") ? text.substr(6) : text;
  DType dtype = DType::f32;
  if (bare == "bfloat16") {
    dtype = DType::bf16;
  } else if (bare == "float16" || bare == "half") {
    dtype = DType::f16;
  } else if (bare == "float32" || bare == "float") {
    dtype = DType::f32;
  } else {
    fail(path, key + " is " + text_of(*it) + ": expected \"bfloat16\", \"float16\" or \"float32\"");
  }
  return ModelField<DType>{dtype, key, text_of(*it)};
}

// The dtype of the model's activations: the section's dtype (transformers >= 4.56 writes
// "dtype"), else its torch_dtype, else the same at the top level.
ModelField<DType> model_dtype(const std::string& path, const json& root, const Section& s) {
  std::vector<std::string> looked;
  const auto in = [&](const json& fields, const std::string& prefix) {
    for (const char* name : {"dtype", "torch_dtype"}) {
      if (auto found = dtype_at(path, fields, prefix, name)) return found;
      looked.push_back(prefix + name);
    }
    return std::optional<ModelField<DType>>{};
  };
  if (auto found = in(s.fields, s.prefix)) return *found;
  if (!s.prefix.empty()) {
    if (auto found = in(root, "")) return *found;
  }
  std::string names;
  for (const std::string& n : looked) names += (names.empty() ? "" : ", ") + n;
  fail(path, "no dtype: none of " + names + " is set");
}

// Linear-attention (GDN) layers: counted in layer_types, else every layer but each
// full_attention_interval-th (Qwen3-Next: layer i is full attention when (i + 1) % interval == 0).
std::optional<int> gdn_layers(const std::string& path, const Section& s,
                              std::optional<int> layers) {
  if (const auto it = s.fields.find("layer_types"); it != s.fields.end()) {
    const std::string key = s.prefix + "layer_types";
    if (!it->is_array()) fail(path, key + " is " + text_of(*it) + ": expected a list");
    int count = 0;
    for (const json& type : *it) count += type == "linear_attention" ? 1 : 0;
    if (count == 0)
      fail(path, key + " names no linear_attention layer: the model has no GDN layer");
    return count;
  }
  const auto interval = s.fields.find("full_attention_interval");
  if (layers && interval != s.fields.end() && interval->is_number_integer() &&
      interval->get<long long>() > 0) {
    const auto every = interval->get<long long>();
    const int count = *layers - static_cast<int>(*layers / every);
    if (count == 0) {
      fail(path, s.prefix + "full_attention_interval = " + text_of(*interval) +
                     " makes all num_hidden_layers = " + std::to_string(*layers) +
                     " full attention: the model has no GDN layer");
    }
    return count;
  }
  return std::nullopt;
}

}  // namespace

GdnModel parse_gdn_model(std::string_view config, const std::string& path) {
  json root;
  try {
    root = json::parse(config);
  } catch (const json::exception& e) {
    // NOTE: not only parse_error: a number past a double (1e400) is out_of_range.
    fail(path, std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) fail(path, "not a JSON object");
  const auto text_config = root.find("text_config");
  const bool nested = text_config != root.end() && text_config->is_object();
  const Section s{nested ? *text_config : root, nested ? "text_config." : ""};

  GdnModel m;
  m.path = path;
  if (const auto type = s.fields.find("model_type"); type != s.fields.end() && type->is_string()) {
    m.model_type = type->get<std::string>();
  } else if (const auto top = root.find("model_type"); top != root.end() && top->is_string()) {
    m.model_type = top->get<std::string>();
  }
  m.num_key_heads = positive(path, s, "linear_num_key_heads");
  m.num_value_heads = positive(path, s, "linear_num_value_heads");
  m.key_head_dim = positive(path, s, "linear_key_head_dim");
  m.value_head_dim = positive(path, s, "linear_value_head_dim");
  m.conv_kernel = positive(path, s, "linear_conv_kernel_dim");
  m.dtype = model_dtype(path, root, s);
  m.state_dtype = dtype_at(path, s.fields, s.prefix, "mamba_ssm_dtype");
  if (s.fields.contains("num_hidden_layers")) {
    m.layers = positive(path, s, "num_hidden_layers").value;
  }
  m.gdn_layers = gdn_layers(path, s, m.layers);

  // NOTE: grouped value heads: value head vh reads key head vh / (HV / HK).
  if (m.num_value_heads.value % m.num_key_heads.value != 0) {
    fail(path, m.num_value_heads.source() + " is not a multiple of " + m.num_key_heads.source() +
                   " (each key head serves the same number of value heads)");
  }
  return m;
}

GdnModel read_gdn_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail(path, "cannot be read");
  return parse_gdn_model(text.str(), path);
}

GdnShard shard_gdn_model(const GdnModel& model, int tp) {
  if (tp <= 0) fail(model.path, "tensor-parallel degree " + std::to_string(tp) + ": must be >= 1");
  for (const ModelField<int>* heads : {&model.num_key_heads, &model.num_value_heads}) {
    if (heads->value % tp != 0) {
      fail(model.path, "tensor-parallel degree " + std::to_string(tp) + " does not divide " +
                           heads->source() + ": every rank must hold whole heads");
    }
  }
  GdnShard shard;
  shard.tp = tp;
  shard.num_key_heads = model.num_key_heads.value / tp;
  shard.num_value_heads = model.num_value_heads.value / tp;
  // NOTE: in 64 bits: head counts and dims up to INT_MAX each make far more channels than an int.
  const std::int64_t channels = 2 * std::int64_t{shard.num_key_heads} * model.key_head_dim.value +
                                std::int64_t{shard.num_value_heads} * model.value_head_dim.value;
  if (channels > std::numeric_limits<int>::max()) {
    fail(model.path, "a rank's convolution has " + std::to_string(channels) + " channels (" +
                         model.num_key_heads.source() + ", " + model.key_head_dim.source() + ", " +
                         model.num_value_heads.source() + ", " + model.value_head_dim.source() +
                         ", tp " + std::to_string(tp) + "): more than 2147483647");
  }
  shard.conv_channels = static_cast<int>(channels);
  return shard;
}

}  // namespace wyjit::detail
