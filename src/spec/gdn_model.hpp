// SPDX-License-Identifier: Apache-2.0
// A Gated DeltaNet model's layer shape, read from its Hugging Face config.json (Qwen3-Next's
// fields at the top level, Qwen3.5's under text_config), and its split over tensor-parallel
// ranks. Each family says which of its fields a model fixes (Family::model_values), so that
// `wyjit precompile --model` builds exactly what the model's layers run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wyjit/types.hpp"

namespace wyjit::detail {

/// One value read from the config, with the key it came from for messages.
template <class T>
struct ModelField {
  T value{};
  std::string key;   ///< as the file spells its path: "text_config.linear_num_key_heads"
  std::string text;  ///< the JSON value as written: "16", "\"bfloat16\""
  /// "text_config.linear_num_key_heads = 16"
  std::string source() const { return key + " = " + text; }
};

struct GdnModel {
  std::string path;        ///< the file read, for messages ("" when parsed from text)
  std::string model_type;  ///< "qwen3_next", "qwen3_5_text", ... ("" when the config has none)
  ModelField<int> num_key_heads;    ///< linear_num_key_heads (HK)
  ModelField<int> num_value_heads;  ///< linear_num_value_heads (HV)
  ModelField<int> key_head_dim;     ///< linear_key_head_dim (dk)
  ModelField<int> value_head_dim;   ///< linear_value_head_dim (dv)
  ModelField<int> conv_kernel;      ///< linear_conv_kernel_dim (W)
  ModelField<DType> dtype;          ///< dtype, or torch_dtype: q, k, v, the conv's inputs
  std::optional<ModelField<DType>> state_dtype;  ///< mamba_ssm_dtype, when the config has it
  std::optional<int> layers;                     ///< num_hidden_layers
  std::optional<int> gdn_layers;  ///< linear_attention layers (layer_types or the interval)
};

/// The model `config` (the text of a config.json) describes; `path` names it in messages.
/// Throws Error(invalid_argument) naming the file, the key and the value on a missing field, a
/// value of the wrong kind, a dtype that is none of bfloat16, float16 and float32, value heads
/// that are no multiple of the key heads, or no linear_attention layer at all.
GdnModel parse_gdn_model(std::string_view config, const std::string& path = "");

/// Reads and parses the file at `path`; Error(invalid_argument) also when it cannot be read.
GdnModel read_gdn_model(const std::string& path);

/// What one of `tp` tensor-parallel ranks runs: the heads are split evenly across ranks.
struct GdnShard {
  int tp = 1;
  int num_key_heads = 0;
  int num_value_heads = 0;
  int conv_channels = 0;  ///< 2 * key heads * dk + value heads * dv: q, k and v, convolved
};

/// The shard of each rank at degree `tp`. Throws Error(invalid_argument) naming the field and
/// its value when `tp` does not divide the key or the value heads (or is not positive).
GdnShard shard_gdn_model(const GdnModel& model, int tp);

/// A field a model fixes in a family's variants: its value (a choice's index, a flag's 0/1) and
/// why. `from_config` values were read from the file, so a selector cannot change them; the
/// others are what every layer of the architecture does (l2norm, gating, SiLU, no bias), which
/// a selector may change (e.g. an engine that computes the gates outside: --gating off).
struct ModelFieldValue {
  std::string_view field;
  int value = 0;
  std::string source;
  bool from_config = false;
};

}  // namespace wyjit::detail
