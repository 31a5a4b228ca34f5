// SPDX-License-Identifier: Apache-2.0
#include "common/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace wyjit::detail {

namespace {

std::shared_ptr<spdlog::logger> make_logger() {
  // NOTE: another part of the process may have registered "wyjit" already; share it.
  if (auto existing = spdlog::get("wyjit")) return existing;
  auto made = spdlog::stderr_color_mt("wyjit");
  made->set_level(spdlog::level::warn);
  if (const char* level = std::getenv("WYJIT_LOG_LEVEL"); level != nullptr && *level != '\0') {
    made->set_level(spdlog::level::from_str(level));
  }
  made->set_pattern("[wyjit %l] %v");
  return made;
}

}  // namespace

spdlog::logger& logger() {
  // Thread-safe initialisation of a function-local static (C++11 magic statics).
  static const std::shared_ptr<spdlog::logger> instance = make_logger();
  return *instance;
}

}  // namespace wyjit::detail
