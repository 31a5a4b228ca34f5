// SPDX-License-Identifier: Apache-2.0
// conv1d_update benchmark: graph-replayed kernel time on buffers rotated past L2, against the
// copy floor measured in the same run and a graph-replayed copy kernel moving the same bytes.
// Not a test: it prints numbers.
//
//   bench_conv1d [--variant NAME[,NAME..]] [--n 1,8,32,128] [--k 2,4,8,16] [--channels 8192]
//                [--layout ct,tc] [--path auto|wide|narrow] [--json FILE]
//
// Each variant's K is replaced by each --k value; any addressing (table and slot tiles: see
// bench_states.hpp). The default variants are the Qwen3-Next conv (W = 4, bf16 weights, no
// bias, SiLU) in both rollback forms, strided, 8192 channels. Layouts
// of the state tiles: ct = [channels][cols] (a channel's columns contiguous), tc =
// [cols][channels] (channels contiguous).
//
// Bytes moved (the floor): x and y, the weights (and bias), the W-1 history columns read, and
// the states written: K tiles of W-1 columns (intermediate) or one window of W-1+K columns.
// NOTE: the window form reads W-1 of every W-1+K columns; in ct tiles DRAM moves whole 32-byte
// sectors, so it reads about the whole window, which the floor does not count.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/bench_states.hpp"
#include "driver/driver_api.hpp"
#include "wyjit/conv1d_update.hpp"
#include "wyjit/error.hpp"

namespace wyjit::bench {
namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    out.push_back(text.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// Bytes one launch must move at least.
std::size_t moved_bytes(const Conv1dUpdateSpec& s, std::size_t n, std::size_t channels) {
  const std::size_t io = static_cast<std::size_t>(dtype_size(s.io));
  const std::size_t wt = static_cast<std::size_t>(dtype_size(s.weight));
  const std::size_t K = static_cast<std::size_t>(s.k), H = static_cast<std::size_t>(s.width) - 1;
  const std::size_t xy = 2 * n * K * channels * io;
  const std::size_t params = channels * (static_cast<std::size_t>(s.width) + (s.bias ? 1 : 0)) * wt;
  const std::size_t read = n * channels * H * io;
  const std::size_t written =
      s.rollback == Rollback::window ? n * channels * (H + K) * io : n * K * channels * H * io;
  return xy + params + read + written + (s.rollback == Rollback::window ? n * 4 : 0);
}

struct Context {
  CUstream stream = nullptr;
  Baselines baselines;
  double copy_gbs = 0;
  int channels = 0;
  int replays = 25;
  std::int32_t path = WYJIT_CONV1D_PATH_AUTOMATIC;
  std::ofstream json;
};

std::int32_t parse_path(const std::string& name) {
  if (name == "auto") return WYJIT_CONV1D_PATH_AUTOMATIC;
  if (name == "wide") return WYJIT_CONV1D_PATH_WIDE;
  if (name == "narrow") return WYJIT_CONV1D_PATH_NARROW;
  throw Error(ErrorCode::invalid_argument, "--path " + name + ": use auto, wide or narrow");
}

// One (variant, layout, N) point: the conv time and a copy of the same bytes, both graph-replayed.
void bench_one(Context& ctx, const Kernel& kernel, const std::string& layout, int N) {
  const Conv1dUpdateSpec& spec = std::get<Conv1dUpdateSpec>(kernel.spec());
  const int K = spec.k;
  const bool window = spec.rollback == Rollback::window;
  const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
  const std::size_t wt = static_cast<std::size_t>(dtype_size(spec.weight));
  const std::int64_t cols = window ? spec.width - 1 + K : spec.width - 1;
  const std::size_t C = static_cast<std::size_t>(ctx.channels);
  const std::size_t tile = C * static_cast<std::size_t>(cols);
  const std::size_t rows = static_cast<std::size_t>(N) * static_cast<std::size_t>(K);
  const std::size_t moved = moved_bytes(spec, static_cast<std::size_t>(N), C);
  // NOTE: sets rotate the buffers so that one replay of the graph moves >= 512 MiB, far past
  // L2: every launch reads from DRAM, as it would between the layers of a model.
  const int sets =
      static_cast<int>(std::clamp<std::size_t>((std::size_t{512} << 20) / moved + 1, 1, 128));
  std::vector<std::unique_ptr<Buffer>> keep;
  std::vector<std::unique_ptr<BenchStates>> states;
  std::vector<Conv1dUpdateArgs> args(static_cast<std::size_t>(sets));
  const auto alloc = [&](std::size_t bytes, float value) {
    keep.push_back(filled_buffer(bytes, value));
    return keep.back()->get();
  };
  for (Conv1dUpdateArgs& a : args) {
    a.batch = N;
    a.channels = ctx.channels;
    a.k = K;
    a.width = spec.width;
    a.path = ctx.path;
    a.x = alloc(rows * C * io, 0.25f);
    a.y = alloc(rows * C * io, 0.0f);
    a.x_stride = ctx.channels;
    a.y_stride = ctx.channels;
    a.weight = alloc(C * static_cast<std::size_t>(spec.width) * wt, 0.125f);
    a.bias = spec.bias ? alloc(C * wt, 0.5f) : nullptr;
    a.state_cols = cols;
    a.state_channel_stride = layout == "ct" ? cols : 1;
    a.state_col_stride = layout == "ct" ? 1 : ctx.channels;
    states.push_back(std::make_unique<BenchStates>(spec.addressing,
                                                   StateShape{.batch = N,
                                                              .tile_elems = tile,
                                                              .elem_bytes = io,
                                                              .inter_tiles = window ? 0 : K - 1,
                                                              .slot_writes = window ? 1 : K,
                                                              .fill = 0.5f},
                                                   ctx.stream));
    a.states = states.back()->refs();
    if (window) {
      // Offset 1 every step: a window that accepted one token last time.
      const void* offsets = alloc(static_cast<std::size_t>(N) * 4, 0.0f);
      WYJIT_CU_CHECK(
          cuMemsetD32(reinterpret_cast<CUdeviceptr>(offsets), 1, static_cast<std::size_t>(N)));
      a.window_offset = static_cast<const std::int32_t*>(offsets);
    }
  }
  const double conv_us = graph_us_per_call(ctx.stream, sets, ctx.replays, [&](int i) {
    launch_conv1d_update(kernel, args[static_cast<std::size_t>(i)], ctx.stream);
  });
  // A copy kernel moving the same bytes (half read, half written), rotated the same way.
  const std::size_t half = (moved / 2 + 15) / 16 * 16;
  Buffer pool(half * 2 * static_cast<std::size_t>(sets));
  const double copy_us = graph_us_per_call(ctx.stream, sets, ctx.replays, [&](int i) {
    const CUdeviceptr base = pool.ptr + 2 * half * static_cast<std::size_t>(i);
    launch_copy(ctx.baselines, base, base + half, static_cast<long long>(half / 16), ctx.stream);
  });
  WYJIT_CU_CHECK(cuStreamSynchronize(ctx.stream));
  const double floor_us = static_cast<double>(moved) / (ctx.copy_gbs * 1e3);
  std::printf("%-62s %6s %4d %4d %9zu %9.2f %9.2f %6.1f%% %10.2f %8.2f\n",
              format_spec(spec).c_str(), layout.c_str(), N, K, moved, conv_us, floor_us,
              100.0 * floor_us / conv_us, copy_us, conv_us / copy_us);
  if (ctx.json.is_open()) {
    ctx.json << "{\"variant\":\"" << format_spec(spec) << "\",\"layout\":\"" << layout
             << "\",\"n\":" << N << ",\"k\":" << K << ",\"channels\":" << ctx.channels
             << ",\"bytes\":" << moved << ",\"conv_us\":" << conv_us << ",\"floor_us\":" << floor_us
             << ",\"copy_kernel_us\":" << copy_us << ",\"copy_gbs\":" << ctx.copy_gbs
             << ",\"sets\":" << sets << "}\n";
  }
}

int run(int argc, char** argv) {
  std::vector<std::string> variants{
      "conv1d_update.k4.io_bf16.w4.wt_bf16.intermediate.strided.silu",
      "conv1d_update.k4.io_bf16.w4.wt_bf16.window.strided.silu",
  };
  std::vector<int> ns{1, 8, 32, 128}, ks{2, 4, 8, 16};
  std::vector<std::string> layouts{"ct", "tc"};
  Context ctx;
  ctx.channels = 8192;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--variant")
      variants = split_names(argv[i + 1]);
    else if (flag == "--n")
      ns = parse_list(argv[i + 1]);
    else if (flag == "--k")
      ks = parse_list(argv[i + 1]);
    else if (flag == "--layout")
      layouts = split_names(argv[i + 1]);
    else if (flag == "--channels")
      ctx.channels = std::stoi(argv[i + 1]);
    else if (flag == "--json")
      json_path = argv[i + 1];
    else if (flag == "--path")
      ctx.path = parse_path(argv[i + 1]);
    else
      throw Error(ErrorCode::invalid_argument, "unknown option " + flag);
  }
  for (const std::string& layout : layouts) {
    if (layout != "ct" && layout != "tc") {
      throw Error(ErrorCode::invalid_argument, "--layout " + layout + ": use ct or tc");
    }
  }

  const BenchDevice device = open_device();
  ctx.baselines = load_baselines(device.target);
  WYJIT_CU_CHECK(cuStreamCreate(&ctx.stream, CU_STREAM_NON_BLOCKING));
  ctx.copy_gbs = measure_copy_gbs(device, ctx.baselines, ctx.stream);
  if (!json_path.empty()) ctx.json.open(json_path);

  {
    // NOTE: what any launch costs in a graph of back-to-back launches: a copy of 16 bytes.
    Buffer tiny(32);
    const double us = graph_us_per_call(ctx.stream, 128, ctx.replays, [&](int) {
      launch_copy(ctx.baselines, tiny.ptr, tiny.ptr + 16, 1, ctx.stream);
    });
    std::printf("launch floor (graph-replayed copy of 16 bytes): %.2f us\n", us);
  }

  Jit jit(JitOptions{.cache_dir = "/tmp/wyjit-bench-cache"});
  std::printf("\n%-62s %6s %4s %4s %9s %9s %9s %7s %10s %8s\n", "variant", "layout", "N", "K",
              "bytes", "conv_us", "floor_us", "%copy", "copyK_us", "x_copyK");
  for (const std::string& variant : variants) {
    for (const std::string& layout : layouts) {
      for (const int K : ks) {
        Conv1dUpdateSpec spec = std::get<Conv1dUpdateSpec>(parse_spec(variant));
        spec.k = K;
        const Kernel kernel = jit.kernel(spec);
        for (const int N : ns) bench_one(ctx, kernel, layout, N);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace wyjit::bench

int main(int argc, char** argv) {
  return wyjit::bench::bench_main("bench_conv1d", wyjit::bench::run, argc, argv);
}
