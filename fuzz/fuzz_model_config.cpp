// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the Hugging Face config reader (`wyjit precompile --model`).
//
// Input: one byte for the tensor-parallel degree (1 + byte % 16), then the text of a config.json.
// parse_gdn_model either refuses it with invalid_argument, naming the config, or returns a model
// whose fields are what the reader promises (positive head counts and dims, value heads a
// multiple of the key heads, a dtype of the three, at least one GDN layer, every field's key
// and text); shard_gdn_model then either refuses the degree with
// invalid_argument or splits every head count exactly, with the channels of q, k and v.
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "spec/gdn_model.hpp"
#include "wyjit/error.hpp"

namespace {

using wyjit::DType;
using wyjit::detail::GdnModel;
using wyjit::detail::ModelField;

void check_field(const ModelField<int>& f) {
  WYJIT_FUZZ_REQUIRE(f.value > 0, f.source());
  WYJIT_FUZZ_REQUIRE(!f.key.empty() && !f.text.empty(), f.source());
}

void check_dtype(const ModelField<DType>& f) {
  WYJIT_FUZZ_REQUIRE(f.value == DType::f32 || f.value == DType::f16 || f.value == DType::bf16,
                     f.source());
  WYJIT_FUZZ_REQUIRE(!f.key.empty() && !f.text.empty(), f.source());
}

void check_shard(const GdnModel& m, int tp) {
  wyjit::detail::GdnShard shard;
  try {
    shard = wyjit::detail::shard_gdn_model(m, tp);
  } catch (const wyjit::Error& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == wyjit::ErrorCode::invalid_argument, e.what());
    WYJIT_FUZZ_REQUIRE(std::string(e.what()).starts_with("model config: "), e.what());
    return;
  }
  WYJIT_FUZZ_REQUIRE(shard.tp == tp, std::to_string(shard.tp));
  WYJIT_FUZZ_REQUIRE(std::int64_t{shard.num_key_heads} * tp == m.num_key_heads.value,
                     m.num_key_heads.source());
  WYJIT_FUZZ_REQUIRE(std::int64_t{shard.num_value_heads} * tp == m.num_value_heads.value,
                     m.num_value_heads.source());
  const std::int64_t channels = 2 * std::int64_t{shard.num_key_heads} * m.key_head_dim.value +
                                std::int64_t{shard.num_value_heads} * m.value_head_dim.value;
  WYJIT_FUZZ_REQUIRE(channels == shard.conv_channels, std::to_string(shard.conv_channels));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int tp = 1 + data[0] % 16;
  const std::string_view text = wyjit::fuzz::as_text({data + 1, size - 1});
  GdnModel m;
  try {
    m = wyjit::detail::parse_gdn_model(text);
  } catch (const wyjit::Error& e) {
    WYJIT_FUZZ_REQUIRE(e.code() == wyjit::ErrorCode::invalid_argument, e.what());
    WYJIT_FUZZ_REQUIRE(std::string(e.what()).starts_with("model config: "), e.what());
    return 0;
  }
  for (const ModelField<int>* f :
       {&m.num_key_heads, &m.num_value_heads, &m.key_head_dim, &m.value_head_dim, &m.conv_kernel}) {
    check_field(*f);
  }
  WYJIT_FUZZ_REQUIRE(m.num_value_heads.value % m.num_key_heads.value == 0,
                     m.num_value_heads.source() + ", " + m.num_key_heads.source());
  check_dtype(m.dtype);
  if (m.state_dtype) check_dtype(*m.state_dtype);
  if (m.layers) WYJIT_FUZZ_REQUIRE(*m.layers > 0, std::to_string(*m.layers));
  if (m.gdn_layers) WYJIT_FUZZ_REQUIRE(*m.gdn_layers > 0, std::to_string(*m.gdn_layers));
  check_shard(m, tp);
  return 0;
}
