// SPDX-License-Identifier: Apache-2.0
#include "compile/nvrtc_library.hpp"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "wyjit/error.hpp"

#ifndef WYJIT_BUILD_CUDA_LIBRARY_DIR
#define WYJIT_BUILD_CUDA_LIBRARY_DIR ""
#endif

namespace wyjit::detail {

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// NOTE: the wheel folder may change until NVRTC is loaded, and never after; the library itself
// is loaded once, under the same mutex.
std::mutex g_mutex;
std::string g_wheel_dir;
bool g_loaded = false;
NvrtcLibrary g_library;

std::string resolved(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  return ec ? path : canonical.string();
}

// The file the loader actually opened for `handle` (for a bare name, where it found it).
std::string loaded_file(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (::dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return fallback;
  return resolved(info.dli_fname);
}

// Tries one candidate: fills `library` and returns true when every entry point is there.
bool try_load(const NvrtcCandidate& candidate, NvrtcLibrary& library, std::string& why) {
  const bool bare = candidate.path.find('/') == std::string::npos;
  if (!bare) {
    std::error_code ec;
    if (!fs::exists(candidate.path, ec)) {
      why = "no such file";
      return false;
    }
  }
  // NOTE: never closed: the entry points live as long as the process. RTLD_LOCAL keeps its
  // symbols out of the global namespace, where another NVRTC of the process may live.
  void* handle = ::dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    why = error != nullptr ? error : "dlopen failed";
    return false;
  }
  NvrtcApi api;
  std::string missing;
#define WYJIT_NVRTC_LOAD(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(handle, #name)); \
  if (api.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  WYJIT_NVRTC_FUNCTIONS(WYJIT_NVRTC_LOAD)
#undef WYJIT_NVRTC_LOAD
  if (!missing.empty()) {
    why = "not an NVRTC this build can use: it lacks " + missing;
    ::dlclose(handle);
    return false;
  }
  int major = 0;
  int minor = 0;
  if (api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
    why = "nvrtcVersion failed";
    return false;
  }
  library.api = api;
  library.major = major;
  library.minor = minor;
  library.path = loaded_file(reinterpret_cast<void*>(api.nvrtcVersion), candidate.path);
  library.rule = candidate.rule;
  return true;
}

// With g_mutex held.
NvrtcSearchInputs inputs_locked() {
  NvrtcSearchInputs inputs;
  inputs.env_nvrtc = env("WYJIT_NVRTC");
  inputs.wheel_dir = g_wheel_dir;
  inputs.cuda_home = env("CUDA_HOME");
  inputs.cuda_path = env("CUDA_PATH");
  inputs.build_libdir = WYJIT_BUILD_CUDA_LIBRARY_DIR;
  return inputs;
}

NvrtcLibrary load(const NvrtcSearchInputs& inputs) {
  NvrtcLibrary library;
  for (const NvrtcCandidate& candidate : nvrtc_candidates(inputs)) {
    std::string why;
    if (try_load(candidate, library, why)) return library;
    library.tried += candidate.path + " (" + candidate.rule + "): " + why + "\n";
  }
  library.error = "cannot load NVRTC (" + nvrtc_file_name() + "): install the CUDA toolkit " +
                  std::to_string(CUDA_VERSION / 1000) +
                  ", or NVIDIA's nvidia-cuda-nvrtc wheel (pip install 'wyjit[nvrtc]'), or set "
                  "WYJIT_NVRTC to the library's path. Tried:\n" +
                  library.tried;
  return library;
}

}  // namespace

std::string nvrtc_file_name() { return "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000); }

NvrtcSearchInputs nvrtc_search_inputs() {
  const std::lock_guard lock(g_mutex);
  return inputs_locked();
}

std::vector<NvrtcCandidate> nvrtc_candidates(const NvrtcSearchInputs& inputs) {
  const std::string file = nvrtc_file_name();
  std::vector<NvrtcCandidate> out;
  if (!inputs.env_nvrtc.empty()) {
    std::error_code ec;
    const bool dir = fs::is_directory(inputs.env_nvrtc, ec);
    out.push_back(
        {dir ? (fs::path(inputs.env_nvrtc) / file).string() : inputs.env_nvrtc, "WYJIT_NVRTC"});
    return out;
  }
  const auto add = [&](const fs::path& path, const std::string& rule) {
    const std::string text = path.lexically_normal().string();
    for (const NvrtcCandidate& c : out) {
      if (c.path == text) return;
    }
    out.push_back({text, rule});
  };
  if (!inputs.wheel_dir.empty()) {
    add(fs::path(inputs.wheel_dir) / file, "nvidia-cuda-nvrtc wheel, found by the Python package");
  }
  const auto toolkit = [&](const std::string& root, const std::string& rule) {
    if (root.empty()) return;
    add(fs::path(root) / "lib64" / file, rule);
    add(fs::path(root) / "lib" / file, rule);
  };
  toolkit(inputs.cuda_home, "CUDA toolkit in $CUDA_HOME (" + inputs.cuda_home + ")");
  toolkit(inputs.cuda_path, "CUDA toolkit in $CUDA_PATH (" + inputs.cuda_path + ")");
  toolkit("/usr/local/cuda", "CUDA toolkit in /usr/local/cuda");
  if (!inputs.build_libdir.empty()) {
    add(fs::path(inputs.build_libdir) / file,
        "CUDA toolkit this library was built with (" + inputs.build_libdir + ")");
  }
  out.push_back({file, "the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache)"});
  return out;
}

const NvrtcLibrary& nvrtc_library() noexcept {
  const std::lock_guard lock(g_mutex);
  if (!g_loaded) {
    try {
      g_library = load(inputs_locked());
    } catch (...) {
      g_library.error = "loading NVRTC failed: out of memory";
    }
    g_loaded = true;
  }
  return g_library;
}

const NvrtcApi& nvrtc() {
  const NvrtcLibrary& library = nvrtc_library();
  if (!library.error.empty()) throw Error(ErrorCode::nvrtc, library.error);
  return library.api;
}

void set_nvrtc_wheel_dir(const std::string& dir) {
  const std::lock_guard lock(g_mutex);
  if (g_loaded) {
    if (dir == g_wheel_dir) return;
    throw Error(
        ErrorCode::invalid_argument,
        "NVRTC is already loaded" +
            (g_library.path.empty() ? std::string()
                                    : " from " + g_library.path + " (" + g_library.rule + ")") +
            ": set the wheel folder before anything compiles");
  }
  g_wheel_dir = dir;
}

}  // namespace wyjit::detail
