// SPDX-License-Identifier: Apache-2.0
#include "compile/nvrtc_compiler.hpp"

#include <algorithm>
#include <memory>
#include <string_view>

#include "compile/nvrtc_library.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace {

[[noreturn]] void throw_nvrtc(const char* file, int line, const char* expr, nvrtcResult code) {
  throw Error(ErrorCode::nvrtc, std::string(expr) +
                                    " failed: " + nvrtc().nvrtcGetErrorString(code) + " (" + file +
                                    ":" + std::to_string(line) + ")");
}

#define WYJIT_NVRTC_CHECK(expr)                                    \
  do {                                                             \
    const nvrtcResult wyjit_nvrtc_result_ = (expr);                \
    if (wyjit_nvrtc_result_ != NVRTC_SUCCESS) {                    \
      throw_nvrtc(__FILE__, __LINE__, #expr, wyjit_nvrtc_result_); \
    }                                                              \
  } while (0)

struct ProgramDeleter {
  void operator()(_nvrtcProgram* program) const noexcept {
    nvrtcProgram p = program;
    // NOTE: a program exists only once NVRTC loaded; the noexcept accessor, in a destructor.
    const NvrtcLibrary& library = nvrtc_library();
    if (library.error.empty()) library.api.nvrtcDestroyProgram(&p);
  }
};
using ProgramHandle = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

ProgramHandle create_program(const std::string& source, const std::string& name) {
  nvrtcProgram program = nullptr;
  WYJIT_NVRTC_CHECK(
      nvrtc().nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  return ProgramHandle(program);
}

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtc().nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtc().nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

std::string join_options(const std::vector<std::string>& options) {
  std::string joined;
  for (const std::string& o : options) joined += (joined.empty() ? "" : " ") + ("'" + o + "'");
  return joined;
}

std::string first_line_containing(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string_view::npos) return "unknown";
  const std::size_t end = text.find('\n', at);
  return std::string(text.substr(at, end == std::string_view::npos ? end : end - at));
}

// `--minimal` exists from NVRTC 12.4 on.
bool nvrtc_has_minimal() {
  static const bool has = [] {
    int major = 0;
    int minor = 0;
    return nvrtc().nvrtcVersion(&major, &minor) == NVRTC_SUCCESS &&
           (major > 12 || (major == 12 && minor >= 4));
  }();
  return has;
}

std::string read_identity() {
  int major = 0;
  int minor = 0;
  WYJIT_NVRTC_CHECK(nvrtc().nvrtcVersion(&major, &minor));
  ProgramHandle program = create_program("__global__ void wyjit_probe() {}\n", "probe.cu");
  const char* options[] = {"--gpu-architecture=compute_75", "--minimal"};
  WYJIT_NVRTC_CHECK(
      nvrtc().nvrtcCompileProgram(program.get(), nvrtc_has_minimal() ? 2 : 1, options));
  std::size_t size = 0;
  WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetPTXSize(program.get(), &size));
  std::string ptx(size, '\0');
  WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetPTX(program.get(), ptx.data()));
  // The PTX header names the exact compiler: "// Cuda compilation tools, release 13.0, V13.0.88"
  // and "// Compiler Build ID: CL-36424714".
  return std::to_string(major) + "." + std::to_string(minor) + " (" +
         first_line_containing(ptx, "Cuda compilation tools") + "; " +
         first_line_containing(ptx, "Compiler Build ID") + ")";
}

}  // namespace

std::vector<std::string> nvrtc_options(const Target& target) {
  std::vector<std::string> options = {
      "--std=c++17",
      "--gpu-architecture=" + target.name(),
      "--fmad=true",
  };
  // NOTE: kernel_src/ is hermetic (no toolkit headers, runtime API, textures or device-side
  // launches), so NVRTC may skip most of its built-in header: about 15 ms less front end per
  // compile and byte-identical cubins (docs/PERFORMANCE.md, cache section).
  if (nvrtc_has_minimal()) options.emplace_back("--minimal");
  return options;
}

NvrtcResult nvrtc_compile(const std::string& source, const std::string& program_name,
                          std::span<const std::string> name_expressions, const Target& target,
                          const std::string& variant) {
  return nvrtc_compile_with(source, program_name, name_expressions, target, variant,
                            nvrtc_options(target));
}

NvrtcResult nvrtc_compile_with(const std::string& source, const std::string& program_name,
                               std::span<const std::string> name_expressions, const Target& target,
                               const std::string& variant,
                               const std::vector<std::string>& options) {
  ProgramHandle program = create_program(source, program_name);
  for (std::size_t i = 0; i < name_expressions.size(); ++i) {
    const auto first = name_expressions.begin() + static_cast<std::ptrdiff_t>(i);
    // NOTE: each distinct name once (two roles may name one kernel); lowered per role below.
    if (std::find(name_expressions.begin(), first, *first) != first) continue;
    WYJIT_NVRTC_CHECK(nvrtc().nvrtcAddNameExpression(program.get(), first->c_str()));
  }
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());
  const nvrtcResult compiled = nvrtc().nvrtcCompileProgram(
      program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  NvrtcResult result;
  result.log = program_log(program.get());
  if (compiled != NVRTC_SUCCESS) {
    throw Error(ErrorCode::compile_failed,
                "NVRTC failed to compile " + variant + " for " + target.name() + ": " +
                    nvrtc().nvrtcGetErrorString(compiled) + "\noptions: " + join_options(options) +
                    "\nlog:\n" + result.log);
  }
  for (const std::string& name : name_expressions) {
    const char* lowered = nullptr;
    WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetLoweredName(program.get(), name.c_str(), &lowered));
    result.lowered_names.emplace_back(lowered);
  }
  std::size_t size = 0;
  if (target.ptx) {
    WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetPTXSize(program.get(), &size));
    result.binary.resize(size);
    WYJIT_NVRTC_CHECK(
        nvrtc().nvrtcGetPTX(program.get(), reinterpret_cast<char*>(result.binary.data())));
  } else {
    WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetCUBINSize(program.get(), &size));
    result.binary.resize(size);
    WYJIT_NVRTC_CHECK(
        nvrtc().nvrtcGetCUBIN(program.get(), reinterpret_cast<char*>(result.binary.data())));
  }
  return result;
}

const std::string& nvrtc_identity() {
  static const std::string identity = read_identity();
  return identity;
}

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) WYJIT_NVRTC_CHECK(nvrtc().nvrtcGetSupportedArchs(archs.data()));
  return archs;
}

}  // namespace wyjit::detail
