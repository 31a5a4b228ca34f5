// SPDX-License-Identifier: Apache-2.0
/// @file wyjit.hpp
/// @brief The whole C++ API: specs and names, the Jit manager, every family's launch, the
///        table stager.
#pragma once

#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/table_stager.hpp"
