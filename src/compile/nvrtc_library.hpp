// SPDX-License-Identifier: Apache-2.0
// NVRTC, opened at run time (dlopen) from the first place of a fixed search order, so that the
// library loads with no CUDA toolkit installed and a Python wheel can bring its own NVRTC
// (NVIDIA's nvidia-cuda-nvrtc wheel).
#pragma once

#include <nvrtc.h>

#include <string>
#include <vector>

namespace wyjit::detail {

// Every NVRTC entry point wyjit calls.
#define WYJIT_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString)         \
  X(nvrtcVersion)                \
  X(nvrtcGetNumSupportedArchs)   \
  X(nvrtcGetSupportedArchs)      \
  X(nvrtcCreateProgram)          \
  X(nvrtcDestroyProgram)         \
  X(nvrtcCompileProgram)         \
  X(nvrtcGetProgramLogSize)      \
  X(nvrtcGetProgramLog)          \
  X(nvrtcAddNameExpression)      \
  X(nvrtcGetLoweredName)         \
  X(nvrtcGetPTXSize)             \
  X(nvrtcGetPTX)                 \
  X(nvrtcGetCUBINSize)           \
  X(nvrtcGetCUBIN)

struct NvrtcApi {
#define WYJIT_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  WYJIT_NVRTC_FUNCTIONS(WYJIT_NVRTC_MEMBER)
#undef WYJIT_NVRTC_MEMBER
};

/// The file name of the NVRTC this build's headers belong to: libnvrtc.so.<CUDA major>.
std::string nvrtc_file_name();

/// One place NVRTC is looked for, and the rule that names it (for `wyjit info` and errors).
struct NvrtcCandidate {
  std::string path;  ///< a file path, or a bare file name for the dynamic loader's search
  std::string rule;
};

/// What the search order depends on, so that it can be computed (and tested) without loading.
struct NvrtcSearchInputs {
  std::string env_nvrtc{};     ///< $WYJIT_NVRTC: a file, or a directory holding nvrtc_file_name()
  std::string wheel_dir{};     ///< the nvidia-cuda-nvrtc wheel's lib folder (set_nvrtc_wheel_dir)
  std::string cuda_home{};     ///< $CUDA_HOME
  std::string cuda_path{};     ///< $CUDA_PATH
  std::string build_libdir{};  ///< the toolkit library folder this library was built against
};

/// The inputs of this process: the environment, the wheel folder set so far, the build's toolkit.
NvrtcSearchInputs nvrtc_search_inputs();

/// The places to try, in order: WYJIT_NVRTC alone when it is set (an explicit choice never
/// falls back); else the wheel folder, the toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda,
/// the build's toolkit; lib64 then lib), and last the bare file name for the dynamic loader
/// (LD_LIBRARY_PATH, the ld.so cache). Duplicates are dropped.
std::vector<NvrtcCandidate> nvrtc_candidates(const NvrtcSearchInputs& inputs);

/// The NVRTC of this process, loaded on first use from the first candidate that loads.
struct NvrtcLibrary {
  NvrtcApi api;
  std::string path;   ///< the file loaded (symlinks resolved); empty when none loaded
  std::string rule;   ///< the rule of the candidate that loaded
  std::string tried;  ///< every candidate passed over, with why, one per line
  std::string error;  ///< empty when `api` is usable
  int major = 0;
  int minor = 0;
};

/// Loads NVRTC on the first call (thread-safe); never throws.
const NvrtcLibrary& nvrtc_library() noexcept;

/// The entry points; throws Error(nvrtc) saying where NVRTC was looked for when none loads.
const NvrtcApi& nvrtc();

/// Sets the folder of NVIDIA's nvidia-cuda-nvrtc wheel (the Python package passes it; empty
/// clears it). Throws Error(invalid_argument) when NVRTC is already loaded (from elsewhere):
/// the search happens once per process.
void set_nvrtc_wheel_dir(const std::string& dir);

}  // namespace wyjit::detail
