// SPDX-License-Identifier: Apache-2.0
// What a GDN model fixes in either GDN family (classic and replay verify), whose fields of the
// same names mean the same: the io dtype, the state dtype when the config names one, the head
// dims, and what every GDN layer does in the kernel (q/k normalisation, gating).
#pragma once

#include <vector>

#include "spec/gdn_model.hpp"

namespace wyjit::detail {

std::vector<ModelFieldValue> gdn_model_values(const GdnModel& model);

}  // namespace wyjit::detail
