// SPDX-License-Identifier: Apache-2.0
// Shared by the C API tests: a scratch cache directory, a Jit manager made through the C API, and
// the calling thread's last error.
#pragma once

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "wyjit/wyjit.h"

namespace wyjit::test {

using JitPtr = std::unique_ptr<wyjit_jit, decltype(&wyjit_jit_destroy)>;

/// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("wyjit-capi-test." + std::to_string(getpid()) + "." + std::to_string(counter++));
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline JitPtr make_jit(const std::string& cache_dir, int32_t no_jit = 0) {
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  options.cache_dir = cache_dir.c_str();
  options.no_jit = no_jit;
  wyjit_jit* jit = nullptr;
  const wyjit_status status = wyjit_jit_create(&options, &jit);
  INFO(wyjit_last_error());
  REQUIRE(status == WYJIT_OK);
  return JitPtr(jit, wyjit_jit_destroy);
}

inline std::string last_error() { return wyjit_last_error(); }

}  // namespace wyjit::test
