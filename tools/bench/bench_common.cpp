// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bench/bench_kernels.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "jit/target_select.hpp"

namespace wyjit::bench {

using detail::driver;

Buffer::Buffer(std::size_t bytes) {
  WYJIT_CU_CHECK(cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 16)));
}

Buffer::~Buffer() { driver().cuMemFree(ptr); }

std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

void fill_f32(const Buffer& b, std::size_t count, float value) {
  WYJIT_CU_CHECK(cuMemsetD32(b.ptr, float_bits(value), count));
}

std::unique_ptr<Buffer> filled_buffer(std::size_t bytes, float value) {
  const std::size_t words = (bytes + 3) / 4;
  auto b = std::make_unique<Buffer>(words * 4);
  fill_f32(*b, words, value);
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_graph(CUgraphExec exec, CUstream stream, int replays) {
  CUevent start, stop;
  WYJIT_CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  WYJIT_CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  for (int i = 0; i < 2; ++i) WYJIT_CU_CHECK(cuGraphLaunch(exec, stream));
  std::vector<double> ms;
  for (int i = 0; i < replays; ++i) {
    WYJIT_CU_CHECK(cuEventRecord(start, stream));
    WYJIT_CU_CHECK(cuGraphLaunch(exec, stream));
    WYJIT_CU_CHECK(cuEventRecord(stop, stream));
    WYJIT_CU_CHECK(cuEventSynchronize(stop));
    float t = 0;
    WYJIT_CU_CHECK(cuEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  driver().cuEventDestroy(start);
  driver().cuEventDestroy(stop);
  return median(ms);
}

int bench_main(const char* name, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 1;
  }
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    out.push_back(std::stoi(text.substr(pos, comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

BenchDevice open_device() {
  CUdevice device;
  CUcontext context;
  WYJIT_CU_CHECK(cuDeviceGet(&device, 0));
  WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  WYJIT_CU_CHECK(cuCtxSetCurrent(context));
  char name[256] = {};
  WYJIT_CU_CHECK(cuDeviceGetName(name, sizeof(name), device));
  BenchDevice d;
  d.name = name;
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&d.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&d.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  d.target = detail::select_target(d.major * 10 + d.minor);
  return d;
}

Baselines load_baselines(const Target& target) {
  const detail::NvrtcResult r = detail::nvrtc_compile(
      kBaselineSource, "bench_baselines.cu", std::vector<std::string>{"copy_f4"}, target, "bench");
  Baselines b;
  WYJIT_CU_CHECK(
      cuLibraryLoadData(&b.library, r.binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  WYJIT_CU_CHECK(cuLibraryGetKernel(&b.copy, b.library, "copy_f4"));
  WYJIT_CU_CHECK(cuLibraryGetKernel(&b.naive, b.library, "naive_verify"));
  WYJIT_CU_CHECK(cuLibraryGetKernel(&b.fanout, b.library, "state_fanout"));
  return b;
}

void launch_copy(const Baselines& b, CUdeviceptr src, CUdeviceptr dst, long long float4s,
                 CUstream s) {
  void* args[] = {&src, &dst, &float4s};
  const auto blocks = static_cast<unsigned>(std::min<long long>((float4s + 255) / 256, 132 * 16));
  WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(b.copy), blocks, 1, 1, 256, 1, 1, 0, s,
                                args, nullptr));
}

double measure_copy_gbs(const BenchDevice& device, const Baselines& baselines, CUstream stream) {
  const std::size_t big = std::size_t{2} << 30;
  Buffer src(big), dst(big);
  fill_f32(src, big / 4, 1.5f);
  const double us = graph_us_per_call(stream, 1, 10, [&](int) {
    launch_copy(baselines, src.ptr, dst.ptr, static_cast<long long>(big / 16), stream);
  });
  const double us_memcpy = graph_us_per_call(stream, 1, 10, [&](int) {
    WYJIT_CU_CHECK(cuMemcpyDtoDAsync(dst.ptr, src.ptr, big, stream));
  });
  const double copy_gbs = 2.0 * big / (std::min(us, us_memcpy) * 1e3);
  std::printf(
      "device: %s (sm_%d%d)\ncopy 4 GiB: kernel %.1f GB/s, cuMemcpyDtoD %.1f GB/s -> floor uses "
      "%.1f GB/s\n",
      device.name.c_str(), device.major, device.minor, 2.0 * big / (us * 1e3),
      2.0 * big / (us_memcpy * 1e3), copy_gbs);
  return copy_gbs;
}

}  // namespace wyjit::bench
