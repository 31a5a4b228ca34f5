// SPDX-License-Identifier: Apache-2.0
#include "families/gdn_common/gdn_model_fields.hpp"

namespace wyjit::detail {

std::vector<ModelFieldValue> gdn_model_values(const GdnModel& m) {
  std::vector<ModelFieldValue> out = {
      {"io", static_cast<int>(m.dtype.value), m.dtype.source(), true},
      {"dk", m.key_head_dim.value, m.key_head_dim.source(), true},
      {"dv", m.value_head_dim.value, m.value_head_dim.source(), true},
      // NOTE: Qwen3-Next's and Qwen3.5's GDN layers normalise q and k in the recurrence (vLLM
      // and SGLang call their kernels with use_qk_l2norm_in_kernel=True) and derive g and beta
      // from a, b, A_log and dt_bias; an engine that gates outside the kernel selects
      // --gating off.
      {"l2norm", 1, "every GDN layer normalises q and k", false},
      {"gating", 1, "every GDN layer gates from a, b, A_log and dt_bias", false},
  };
  if (m.state_dtype) {
    out.push_back({"state", static_cast<int>(m.state_dtype->value), m.state_dtype->source(), true});
  }
  return out;
}

}  // namespace wyjit::detail
