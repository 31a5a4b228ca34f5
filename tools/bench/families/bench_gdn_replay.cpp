// SPDX-License-Identifier: Apache-2.0
// gdn_replay benchmark: the time of one layer's verify per step, averaged over the cursors of a
// realistic run (each draft accepted with probability 0.7 until the first rejection, so the
// folds come as often as they would), on checkpoints and logs rotated past L2, plus the commit's
// time divided by the layers; against the floor of DESIGN's performance model (checkpoint read,
// the folds' writes, the live log read, the new entries written, the token rows) over the copy
// rate measured in the same run. Not a test: it prints numbers.
//
//   bench_gdn_replay [--variant NAME] [--n 1,8,32,128] [--k 2,4,8,16] [--hk 16] [--hv 32]
//                    [--layers 36] [--path auto|in_turn|wy] [--json FILE]
//
// The variant's K is replaced by each --k value (its L by max(L, 2K)).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/bench_gdn_tokens.hpp"
#include "driver/driver_api.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_replay.hpp"
#include "wyjit/spec.hpp"

namespace wyjit::bench {
namespace {

// The cursors of a run of `steps` steps from empty logs, one snapshot per step (the cursor the
// step's verify sees), and the fraction of (sequence, step) verifies that fold.
struct CursorRun {
  std::vector<std::vector<std::int32_t>> snapshots;  // [step][batch*2]
  double fold_fraction = 0.0;
  double mean_len = 0.0;
};

CursorRun simulate(int batch, int k, int log, int steps, std::uint64_t seed) {
  // NOTE: the snapshots start after a warm-up, so that they show the run's steady state and not
  // its empty logs.
  constexpr int kWarmup = 64;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int> base(static_cast<std::size_t>(batch)), len(base);
  for (int& b : base) b = static_cast<int>(rng() % static_cast<unsigned>(log));
  CursorRun run;
  long folds = 0, lens = 0;
  for (int s = -kWarmup; s < steps; ++s) {
    std::vector<std::int32_t> snap(std::size_t(batch) * 2);
    for (int b = 0; b < batch; ++b) {
      snap[2 * b] = base[b];
      snap[2 * b + 1] = len[b];
      if (s >= 0) lens += len[b];
      int a = 1;
      while (a < k && u(rng) < 0.7) ++a;
      if (len[b] + 2 * k > log) {
        if (s >= 0) ++folds;
        base[b] = (base[b] + len[b]) & (log - 1);
        len[b] = a;
      } else {
        len[b] += a;
      }
    }
    if (s >= 0) run.snapshots.push_back(std::move(snap));
  }
  run.fold_fraction = static_cast<double>(folds) / (double(steps) * batch);
  run.mean_len = static_cast<double>(lens) / (double(steps) * batch);
  return run;
}

int run(int argc, char** argv) {
  std::string variant = "gdn_replay.k4.l16.io_bf16.st_f32.strided.vk.d128.l2norm";
  std::vector<int> ns{1, 8, 32, 128}, ks{2, 4, 8, 16};
  int HK = 16, HV = 32, layers = 36;
  std::int32_t path = WYJIT_GDN_REPLAY_PATH_AUTOMATIC;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--variant") {
      variant = value;
    } else if (flag == "--n") {
      ns = parse_list(value);
    } else if (flag == "--k") {
      ks = parse_list(value);
    } else if (flag == "--hk") {
      HK = std::stoi(value);
    } else if (flag == "--hv") {
      HV = std::stoi(value);
    } else if (flag == "--layers") {
      layers = std::stoi(value);
    } else if (flag == "--path") {
      path = value == "in_turn" ? WYJIT_GDN_REPLAY_PATH_IN_TURN
             : value == "wy"    ? WYJIT_GDN_REPLAY_PATH_WY
             : value == "auto"  ? WYJIT_GDN_REPLAY_PATH_AUTOMATIC
                                : throw Error(ErrorCode::invalid_argument,
                                              "--path is " + value + ": auto, in_turn or wy");
    } else if (flag == "--json") {
      json_path = value;
    } else {
      throw Error(ErrorCode::invalid_argument, "unknown option " + flag);
    }
  }
  const int replays = 25;
  const BenchDevice device = open_device();
  const Baselines baselines = load_baselines(device.target);
  CUstream stream;
  WYJIT_CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  const double copy_gbs = measure_copy_gbs(device, baselines, stream);
  Jit jit(JitOptions{.cache_dir = "/tmp/wyjit-bench-cache"});
  std::ofstream json;
  if (!json_path.empty()) json.open(json_path);
  std::printf("\nHK %d, HV %d; commit divided by %d layers\n", HK, HV, layers);
  std::printf("%-62s %4s %4s %7s %6s %9s %9s %9s %7s %9s\n", "variant", "N", "K", "folds", "len",
              "step_us", "verify", "floor_us", "%floor", "commit_us");
  for (const int K : ks) {
    GdnReplaySpec spec = std::get<GdnReplaySpec>(parse_spec(variant));
    spec.k = K;
    spec.log = std::max(spec.log, 2 * K);
    const Kernel kernel = jit.kernel(spec);
    const std::size_t io = static_cast<std::size_t>(dtype_size(spec.io));
    const std::size_t st = static_cast<std::size_t>(dtype_size(spec.state));
    for (const int N : ns) {
      const std::size_t tile = std::size_t(HV) * spec.dk * spec.dv;
      const std::size_t log_floats = static_cast<std::size_t>(gdn_replay_log_floats(spec, HK, HV));
      const std::size_t rows = std::size_t(N) * K;
      const std::size_t entry_bytes =
          (std::size_t(HK) * spec.dk + std::size_t(HV) * spec.dv + HV) * 4;
      const std::size_t set_bytes = N * (tile * st + log_floats * 4);
      // Enough sets that one replay touches >= 512 MiB; each set a step of the run.
      const int sets = static_cast<int>(
          std::clamp<std::size_t>((std::size_t{512} << 20) / set_bytes + 1, 8, 200));
      const CursorRun cursors = simulate(N, K, spec.log, sets, 42);
      std::vector<std::unique_ptr<Buffer>> keep;
      const auto alloc = [&](std::size_t bytes, float value) {
        keep.push_back(filled_buffer(bytes, value));
        return keep.back()->get();
      };
      std::vector<GdnReplayVerifyArgs> args(static_cast<std::size_t>(sets));
      for (int i = 0; i < sets; ++i) {
        GdnReplayVerifyArgs& a = args[static_cast<std::size_t>(i)];
        a.path = path;
        fill_gdn_token_args(a, spec, N, HK, HV, alloc);
        a.states.state = alloc(N * tile * st, 0.01f);
        a.states.state_seq_stride = static_cast<std::int64_t>(tile);
        a.log.state = alloc(N * log_floats * 4, 0.001f);
        a.log.state_seq_stride = static_cast<std::int64_t>(log_floats);
        auto cursor = std::make_unique<Buffer>(std::size_t(N) * 2 * 4);
        const auto& snap = cursors.snapshots[static_cast<std::size_t>(i)];
        WYJIT_CU_CHECK(cuMemcpyHtoD(cursor->ptr, snap.data(), snap.size() * 4));
        a.cursor = static_cast<const std::int32_t*>(cursor->get());
        a.cursor_stride = 2;
        keep.push_back(std::move(cursor));
      }
      WYJIT_CU_CHECK(cuStreamSynchronize(nullptr));  // the pageable copies above have landed
      const double verify_us = graph_us_per_call(stream, sets, replays, [&](int i) {
        launch_gdn_replay_verify(kernel, args[static_cast<std::size_t>(i)], stream);
      });
      // The commit of one step (all layers' cursors at once), on copies of the cursors.
      auto commit_cursor = std::make_unique<Buffer>(std::size_t(N) * 2 * 4);
      WYJIT_CU_CHECK(cuMemcpyHtoD(commit_cursor->ptr, cursors.snapshots[0].data(),
                                  cursors.snapshots[0].size() * 4));
      std::vector<std::int32_t> ones(static_cast<std::size_t>(N), 1);
      auto accepted = std::make_unique<Buffer>(std::size_t(N) * 4);
      WYJIT_CU_CHECK(cuMemcpyHtoD(accepted->ptr, ones.data(), ones.size() * 4));
      WYJIT_CU_CHECK(cuStreamSynchronize(nullptr));
      GdnReplayCommitArgs c;
      c.batch = N;
      c.k = K;
      c.cursor = static_cast<std::int32_t*>(commit_cursor->get());
      c.cursor_stride = 2;
      c.accepted = static_cast<const std::int32_t*>(accepted->get());
      const double commit_us = graph_us_per_call(
          stream, 16, replays, [&](int) { launch_gdn_replay_commit(kernel, c, stream); });
      WYJIT_CU_CHECK(cuStreamSynchronize(stream));

      // DESIGN's model: the checkpoint read, the folds' writes, the live log read, the new
      // entries written, the token rows.
      const auto d = [](std::size_t x) { return static_cast<double>(x); };
      const double state_bytes = double(N) * d(tile) * d(st);
      const double moved = state_bytes * (1.0 + cursors.fold_fraction) +
                           double(N) * cursors.mean_len * d(entry_bytes) +
                           double(N) * K * d(entry_bytes) +
                           d(rows) * (2.0 * HK * spec.dk + 2.0 * HV * spec.dv) * d(io) +
                           d(rows) * HV * (spec.fused_gating ? 2.0 * d(io) : 8.0);
      const double floor_us = moved / (copy_gbs * 1e3);
      const double step_us = verify_us + commit_us / layers;
      std::printf("%-62s %4d %4d %6.1f%% %6.2f %9.2f %9.2f %9.2f %6.1f%% %9.2f\n",
                  format_spec(spec).c_str(), N, K, 100.0 * cursors.fold_fraction, cursors.mean_len,
                  step_us, verify_us, floor_us, 100.0 * floor_us / step_us, commit_us);
      if (json.is_open()) {
        json << "{\"variant\":\"" << format_spec(spec) << "\",\"n\":" << N << ",\"k\":" << K
             << ",\"hk\":" << HK << ",\"hv\":" << HV
             << ",\"fold_fraction\":" << cursors.fold_fraction
             << ",\"mean_len\":" << cursors.mean_len << ",\"step_us\":" << step_us
             << ",\"verify_us\":" << verify_us << ",\"commit_us\":" << commit_us
             << ",\"floor_us\":" << floor_us << ",\"bytes\":" << moved
             << ",\"copy_gbs\":" << copy_gbs << ",\"sets\":" << sets << "}\n";
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace wyjit::bench

int main(int argc, char** argv) {
  return wyjit::bench::bench_main("bench_gdn_replay", wyjit::bench::run, argc, argv);
}
