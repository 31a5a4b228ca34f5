// SPDX-License-Identifier: Apache-2.0
// GPU test runner: exits 77 (CTest: skipped) where no CUDA device exists, so a machine without
// a GPU reports these tests as skipped, never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <iostream>

#include "driver/driver_api.hpp"

int main(int argc, char** argv) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  const bool listing =
      config.listTests || config.listTestNamesOnly || config.listTags || config.listReporters;
  if (!listing && !wyjit::detail::driver_has_device()) {
    const std::string why = wyjit::detail::driver_unavailable_reason();
    std::cout << "SKIPPED: no CUDA device (" << (why.empty() ? "the driver reports 0 devices" : why)
              << ")\n";
    return 77;
  }
  return session.run();
}
