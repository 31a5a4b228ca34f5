// SPDX-License-Identifier: Apache-2.0
// The named spdlog logger "wyjit"; level from WYJIT_LOG_LEVEL (trace..off), default warn.
#pragma once

#include <spdlog/spdlog.h>

namespace wyjit::detail {

/// The process's "wyjit" logger (created on first use, registered with spdlog).
spdlog::logger& logger();

}  // namespace wyjit::detail
