// SPDX-License-Identifier: Apache-2.0
// gdn_verify benchmark: graph-replayed kernel time on buffers rotated past L2, against the copy
// floor measured in the same run, a graph-replayed copy kernel moving the same bytes, and a
// naive sequential-per-token kernel. Not a test: it prints numbers.
//
//   bench_gdn_verify [--variant NAME] [--n 1,8,32,128] [--k 2,4,8,16] [--json FILE]
//
// The variant's K is replaced by each --k value. Shapes: Qwen3-Next GDN (HK=16, HV=32, d=128).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <fstream>
#include <string>
#include <vector>

#include "bench/bench_kernels.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "driver/driver_api.hpp"
#include "jit/target_select.hpp"
#include "launch/launch_geometry.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::bench {
namespace {

using detail::driver;

struct Buffer {
  CUdeviceptr ptr = 0;
  explicit Buffer(std::size_t bytes) {
    WYJIT_CU_CHECK(cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 16)));
  }
  ~Buffer() { driver().cuMemFree(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return reinterpret_cast<void*>(ptr); }
};

std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

void fill_f32(const Buffer& b, std::size_t count, float value) {
  WYJIT_CU_CHECK(cuMemsetD32(b.ptr, float_bits(value), count));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median milliseconds of one replay of `graph_exec` (after two warm-ups).
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

// Captures `body(i)` for i < count into one graph and returns the median time per body, in us.
template <typename Body>
double graph_us_per_call(CUstream stream, int count, int replays, Body body) {
  WYJIT_CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < count; ++i) body(i);
  CUgraph graph;
  WYJIT_CU_CHECK(cuStreamEndCapture(stream, &graph));
  CUgraphExec exec;
  WYJIT_CU_CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  const double ms = time_graph(exec, stream, replays);
  driver().cuGraphExecDestroy(exec);
  driver().cuGraphDestroy(graph);
  return ms * 1000.0 / count;
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

struct Baselines {
  CUlibrary library = nullptr;
  CUkernel copy = nullptr;
  CUkernel naive = nullptr;
};

Baselines load_baselines(const Target& target) {
  const detail::NvrtcResult r =
      detail::nvrtc_compile(kBaselineSource, "bench_baselines.cu", "copy_f4", target, "bench");
  Baselines b;
  WYJIT_CU_CHECK(
      cuLibraryLoadData(&b.library, r.binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  WYJIT_CU_CHECK(cuLibraryGetKernel(&b.copy, b.library, "copy_f4"));
  WYJIT_CU_CHECK(cuLibraryGetKernel(&b.naive, b.library, "naive_verify"));
  return b;
}

void launch_copy(const Baselines& b, CUdeviceptr src, CUdeviceptr dst, long long float4s,
                 CUstream s) {
  void* args[] = {&src, &dst, &float4s};
  const auto blocks = static_cast<unsigned>(std::min<long long>((float4s + 255) / 256, 132 * 16));
  WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(b.copy), blocks, 1, 1, 256, 1, 1, 0, s,
                                args, nullptr));
}

int run(int argc, char** argv) {
  std::string variant = "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.l2norm";
  std::vector<int> ns{1, 8, 32, 128}, ks{2, 4, 8, 16};
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--variant")
      variant = argv[i + 1];
    else if (flag == "--n")
      ns = parse_list(argv[i + 1]);
    else if (flag == "--k")
      ks = parse_list(argv[i + 1]);
    else if (flag == "--json")
      json_path = argv[i + 1];
    else
      throw Error(ErrorCode::invalid_argument, "unknown option " + flag);
  }
  const int HK = 16, HV = 32, replays = 25;

  CUdevice device;
  CUcontext context;
  WYJIT_CU_CHECK(cuDeviceGet(&device, 0));
  WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context, device));
  WYJIT_CU_CHECK(cuCtxSetCurrent(context));
  char name[256] = {};
  WYJIT_CU_CHECK(cuDeviceGetName(name, sizeof(name), device));
  int major = 0, minor = 0;
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  WYJIT_CU_CHECK(
      cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  const Target target = detail::select_target(major * 10 + minor);
  const Baselines baselines = load_baselines(target);
  CUstream stream;
  WYJIT_CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  // ---- the copy yardstick: 2 GiB read + 2 GiB written ----
  const std::size_t big = std::size_t{2} << 30;
  double copy_gbs = 0;
  {
    Buffer src(big), dst(big);
    fill_f32(src, big / 4, 1.5f);
    const double us = graph_us_per_call(stream, 1, 10, [&](int) {
      launch_copy(baselines, src.ptr, dst.ptr, static_cast<long long>(big / 16), stream);
    });
    const double us_memcpy = graph_us_per_call(stream, 1, 10, [&](int) {
      WYJIT_CU_CHECK(cuMemcpyDtoDAsync(dst.ptr, src.ptr, big, stream));
    });
    copy_gbs = 2.0 * big / (std::min(us, us_memcpy) * 1e3);
    std::printf(
        "device: %s (sm_%d%d)\ncopy 4 GiB: kernel %.1f GB/s, cuMemcpyDtoD %.1f GB/s -> floor uses "
        "%.1f GB/s\n",
        name, major, minor, 2.0 * big / (us * 1e3), 2.0 * big / (us_memcpy * 1e3), copy_gbs);
  }

  Jit jit(JitOptions{.cache_dir = "/tmp/wyjit-bench-cache"});
  std::ofstream json;
  if (!json_path.empty()) json.open(json_path);
  std::printf("\n%-58s %4s %4s %9s %9s %7s %10s %8s %9s\n", "variant", "N", "K", "verify_us",
              "floor_us", "%copy", "copyK_us", "x_copyK", "naive_us");
  for (const int K : ks) {
    KernelSpec spec = parse_spec(variant);
    spec.k = K;
    const Kernel kernel = jit.kernel(spec);
    const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
    const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
    for (const int N : ns) {
      const std::size_t tile = std::size_t(HV) * spec.dk * spec.dv;
      const std::size_t rows = std::size_t(N) * K;
      const std::size_t state_bytes = N * tile * st;
      const std::size_t io_bytes =
          rows * (2 * HK * spec.dk + 2 * HV * spec.dv) * io + rows * HV * 8;
      const std::size_t moved = state_bytes * (1 + K) + io_bytes;
      const int sets =
          static_cast<int>(std::clamp<std::size_t>((std::size_t{512} << 20) / moved + 1, 1, 48));
      std::vector<std::unique_ptr<Buffer>> keep;
      std::vector<GdnVerifyArgs> args(sets);
      const auto alloc = [&](std::size_t bytes, float value) {
        keep.push_back(std::make_unique<Buffer>(bytes));
        fill_f32(*keep.back(), bytes / 4, value);
        return keep.back()->get();
      };
      for (GdnVerifyArgs& a : args) {
        a.batch = N;
        a.num_k_heads = HK;
        a.num_v_heads = HV;
        a.k = K;
        a.dk = spec.dk;
        a.dv = spec.dv;
        a.scale = 1.0f / std::sqrt(static_cast<float>(spec.dk));
        a.qk_stride = HK * spec.dk;
        a.v_stride = HV * spec.dv;
        a.gb_stride = HV;
        a.o_stride = HV * spec.dv;
        a.q = alloc(rows * HK * spec.dk * io, 0.03f);
        a.k_in = alloc(rows * HK * spec.dk * io, 0.02f);
        a.v = alloc(rows * HV * spec.dv * io, 0.5f);
        a.g = static_cast<const float*>(alloc(rows * HV * 4, -0.05f));
        a.beta = static_cast<const float*>(alloc(rows * HV * 4, 0.4f));
        a.out = alloc(rows * HV * spec.dv * io, 0.0f);
        a.state = alloc(state_bytes, 0.01f);
        a.state_seq_stride = static_cast<std::int64_t>(tile);
        a.inter = K > 1 ? alloc(state_bytes * (K - 1), 0.0f) : nullptr;
        a.inter_tok_stride = static_cast<std::int64_t>(tile);
        a.inter_seq_stride = static_cast<std::int64_t>(tile) * (K - 1);
      }
      const double verify_us = graph_us_per_call(
          stream, sets, replays, [&](int i) { launch_gdn_verify(kernel, args[i], stream); });
      // A copy kernel moving the same bytes (half read, half written), rotated the same way.
      const std::size_t half = (moved / 2 + 15) / 16 * 16;
      Buffer pool(half * 2 * static_cast<std::size_t>(sets));
      const double copy_us = graph_us_per_call(stream, sets, replays, [&](int i) {
        const CUdeviceptr base = pool.ptr + 2 * half * static_cast<std::size_t>(i);
        launch_copy(baselines, base, base + half, static_cast<long long>(half / 16), stream);
      });
      double naive_us = NAN;
      if (spec.io == DType::bf16 && spec.state == DType::f32 && spec.layout == Layout::vk &&
          spec.dk == 128 && spec.dv == 128 && spec.addressing == Addressing::strided) {
        naive_us = graph_us_per_call(stream, sets, replays, [&](int i) {
          GdnVerifyArgs& a = args[i];
          int k_ = K, hk_ = HK, hv_ = HV;
          float scale = a.scale;
          void* p[] = {&a.q,     &a.k_in,  &a.v, &a.g, &a.beta, &a.out,
                       &a.state, &a.inter, &k_,  &hk_, &hv_,    &scale};
          WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(baselines.naive),
                                        static_cast<unsigned>(N * HV), 1, 1, 128, 1, 1, 0, stream,
                                        p, nullptr));
        });
      }
      WYJIT_CU_CHECK(cuStreamSynchronize(stream));
      const double floor_us = static_cast<double>(moved) / (copy_gbs * 1e3);
      std::printf("%-58s %4d %4d %9.2f %9.2f %6.1f%% %10.2f %8.2f %9.2f\n",
                  format_spec(spec).c_str(), N, K, verify_us, floor_us,
                  100.0 * floor_us / verify_us, copy_us, verify_us / copy_us, naive_us);
      if (json.is_open()) {
        json << "{\"variant\":\"" << format_spec(spec) << "\",\"n\":" << N << ",\"k\":" << K
             << ",\"bytes\":" << moved << ",\"verify_us\":" << verify_us
             << ",\"floor_us\":" << floor_us << ",\"copy_kernel_us\":" << copy_us
             << ",\"naive_us\":" << (std::isnan(naive_us) ? -1.0 : naive_us)
             << ",\"copy_gbs\":" << copy_gbs << ",\"sets\":" << sets << "}\n";
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace wyjit::bench

int main(int argc, char** argv) {
  try {
    return wyjit::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gdn_verify: %s\n", e.what());
    return 1;
  }
}
