// SPDX-License-Identifier: Apache-2.0
// gdn_verify benchmark: graph-replayed kernel time on buffers rotated past L2, against the copy
// floor measured in the same run, a graph-replayed copy kernel moving the same bytes, and a
// naive sequential-per-token kernel, and verify's state traffic with no arithmetic (fanout_us).
// Not a test: it prints numbers.
//
//   bench_gdn_verify [--variant NAME] [--n 1,8,32,128] [--k 2,4,8,16] [--json FILE]
//
// The variant's K is replaced by each --k value; any io, state dtype, layout, addressing (table
// and slot tiles: see bench_states.hpp), head dims and gating. Heads: Qwen3-Next GDN (HK=16,
// HV=32). The naive and fanout baselines run only for the strided d128 variants they were
// written for.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/bench_gdn_tokens.hpp"
#include "bench/bench_states.hpp"
#include "driver/driver_api.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::bench {
namespace {

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

  const BenchDevice device = open_device();
  const Baselines baselines = load_baselines(device.target);
  CUstream stream;
  WYJIT_CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  // ---- the copy yardstick: 2 GiB read + 2 GiB written ----
  const double copy_gbs = measure_copy_gbs(device, baselines, stream);

  Jit jit(JitOptions{.cache_dir = "/tmp/wyjit-bench-cache"});
  std::ofstream json;
  if (!json_path.empty()) json.open(json_path);
  std::printf("\n%-58s %4s %4s %9s %9s %7s %10s %8s %9s %9s\n", "variant", "N", "K", "verify_us",
              "floor_us", "%copy", "copyK_us", "x_copyK", "naive_us", "fanout_us");
  for (const int K : ks) {
    GdnVerifySpec spec = std::get<GdnVerifySpec>(parse_spec(variant));
    spec.k = K;
    const Kernel kernel = jit.kernel(spec);
    const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
    const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
    for (const int N : ns) {
      const std::size_t tile = std::size_t(HV) * spec.dk * spec.dv;
      const std::size_t rows = std::size_t(N) * K;
      const std::size_t state_bytes = N * tile * st;
      // g and beta (fp32), or with fused gating a and b (io dtype) and a_log, dt_bias.
      const std::size_t gating_bytes =
          spec.fused_gating ? rows * HV * 2 * io + std::size_t{HV} * 8 : rows * HV * 8;
      const std::size_t io_bytes = rows * (2 * HK * spec.dk + 2 * HV * spec.dv) * io + gating_bytes;
      const std::size_t moved = state_bytes * (1 + K) + io_bytes;
      const int sets =
          static_cast<int>(std::clamp<std::size_t>((std::size_t{512} << 20) / moved + 1, 1, 48));
      std::vector<std::unique_ptr<Buffer>> keep;
      std::vector<std::unique_ptr<BenchStates>> states;
      std::vector<GdnVerifyArgs> args(sets);
      const auto alloc = [&](std::size_t bytes, float value) {
        keep.push_back(filled_buffer(bytes, value));
        return keep.back()->get();
      };
      for (GdnVerifyArgs& a : args) {
        fill_gdn_token_args(a, spec, N, HK, HV, alloc);
        states.push_back(std::make_unique<BenchStates>(spec.addressing,
                                                       StateShape{.batch = N,
                                                                  .tile_elems = tile,
                                                                  .elem_bytes = st,
                                                                  .inter_tiles = K - 1,
                                                                  .slot_writes = K,
                                                                  .fill = 0.01f},
                                                       stream));
        a.states = states.back()->refs();
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
      double fanout_us = NAN;
      if (spec.state == DType::f32 && spec.layout == Layout::vk && spec.dk == 128 &&
          spec.dv == 128 && spec.addressing == Addressing::strided) {
        fanout_us = graph_us_per_call(stream, sets, replays, [&](int i) {
          GdnVerifyArgs& a = args[i];
          int k_ = K, hv_ = HV;
          void* p[] = {&a.states.state, &a.states.inter, &k_, &hv_};
          WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(baselines.fanout),
                                        static_cast<unsigned>(N * HV * 8), 1, 1, 128, 1, 1, 0,
                                        stream, p, nullptr));
        });
      }
      if (spec.io == DType::bf16 && spec.state == DType::f32 && spec.layout == Layout::vk &&
          spec.dk == 128 && spec.dv == 128 && spec.addressing == Addressing::strided &&
          !spec.fused_gating) {
        naive_us = graph_us_per_call(stream, sets, replays, [&](int i) {
          GdnVerifyArgs& a = args[i];
          int k_ = K, hk_ = HK, hv_ = HV;
          float scale = a.scale;
          void* p[] = {
              &a.q, &a.k_in, &a.v, &a.g,  &a.beta, &a.out, &a.states.state, &a.states.inter,
              &k_,  &hk_,    &hv_, &scale};
          WYJIT_CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(baselines.naive),
                                        static_cast<unsigned>(N * HV), 1, 1, 128, 1, 1, 0, stream,
                                        p, nullptr));
        });
      }
      WYJIT_CU_CHECK(cuStreamSynchronize(stream));
      const double floor_us = static_cast<double>(moved) / (copy_gbs * 1e3);
      std::printf("%-58s %4d %4d %9.2f %9.2f %6.1f%% %10.2f %8.2f %9.2f %9.2f\n",
                  format_spec(spec).c_str(), N, K, verify_us, floor_us,
                  100.0 * floor_us / verify_us, copy_us, verify_us / copy_us, naive_us, fanout_us);
      if (json.is_open()) {
        json << "{\"variant\":\"" << format_spec(spec) << "\",\"n\":" << N << ",\"k\":" << K
             << ",\"bytes\":" << moved << ",\"verify_us\":" << verify_us
             << ",\"floor_us\":" << floor_us << ",\"copy_kernel_us\":" << copy_us
             << ",\"naive_us\":" << (std::isnan(naive_us) ? -1.0 : naive_us)
             << ",\"fanout_us\":" << (std::isnan(fanout_us) ? -1.0 : fanout_us)
             << ",\"copy_gbs\":" << copy_gbs << ",\"sets\":" << sets << "}\n";
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace wyjit::bench

int main(int argc, char** argv) {
  return wyjit::bench::bench_main("bench_gdn_verify", wyjit::bench::run, argc, argv);
}
