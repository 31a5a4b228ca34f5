// SPDX-License-Identifier: Apache-2.0
// What every benchmark shares: device setup, device buffers, graph-replayed timing, the copy
// kernel that is the bandwidth yardstick, and the measured copy floor.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::bench {

/// A device allocation (at least 16 bytes), freed on destruction.
struct Buffer {
  CUdeviceptr ptr = 0;
  explicit Buffer(std::size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return reinterpret_cast<void*>(ptr); }
};

std::uint32_t float_bits(float x);

/// Sets `count` 32-bit words of `b` to the bits of `value`.
void fill_f32(const Buffer& b, std::size_t count, float value);

/// A buffer of `bytes` (rounded up to whole 32-bit words) with every word the bits of `value`.
std::unique_ptr<Buffer> filled_buffer(std::size_t bytes, float value);

double median(std::vector<double> v);

/// Median milliseconds of one replay of `exec` (after two warm-ups).
double time_graph(CUgraphExec exec, CUstream stream, int replays);

/// Captures `body(i)` for i < count into one graph and returns the median time per body, in us.
template <typename Body>
double graph_us_per_call(CUstream stream, int count, int replays, Body body) {
  WYJIT_CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < count; ++i) body(i);
  CUgraph graph;
  WYJIT_CU_CHECK(cuStreamEndCapture(stream, &graph));
  CUgraphExec exec;
  WYJIT_CU_CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  const double ms = time_graph(exec, stream, replays);
  detail::driver().cuGraphExecDestroy(exec);
  detail::driver().cuGraphDestroy(graph);
  return ms * 1000.0 / count;
}

/// "1,8,32" -> {1, 8, 32}.
std::vector<int> parse_list(const std::string& text);

/// A benchmark's main: runs `run`, printing "<name>: <what>" and returning 1 on an exception.
int bench_main(const char* name, int (*run)(int, char**), int argc, char** argv);

/// Device 0 with its primary context current on the calling thread.
struct BenchDevice {
  std::string name;
  int major = 0;
  int minor = 0;
  Target target;  ///< what Jit::kernel picks for this device
};
BenchDevice open_device();

/// The baseline kernels of bench_kernels.hpp, compiled for the device.
struct Baselines {
  CUlibrary library = nullptr;
  CUkernel copy = nullptr;
  CUkernel naive = nullptr;
  CUkernel fanout = nullptr;
};
Baselines load_baselines(const Target& target);

/// Copies `float4s` 16-byte words from `src` to `dst` with the copy kernel.
void launch_copy(const Baselines& b, CUdeviceptr src, CUdeviceptr dst, long long float4s,
                 CUstream s);

/// Measures the copy floor on 2 GiB read + 2 GiB written (the copy kernel and cuMemcpyDtoD,
/// the faster one wins), prints the device and both rates, and returns the floor in GB/s.
double measure_copy_gbs(const BenchDevice& device, const Baselines& baselines, CUstream stream);

}  // namespace wyjit::bench
