// SPDX-License-Identifier: Apache-2.0
// Replay mode step by step: the example of docs/replay.md, compiled and run by CTest. Two
// layers, two sequences: enter replay mode from a prefill state, run steps of (verify every
// layer, sample, commit), materialize S_cur, and compare with the sequential recurrence in
// double. Without a GPU it does everything up to the launches (compile, argument checks).
//
//   replay_step [CACHE_DIR]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <variant>
#include <vector>
#include <wyjit/wyjit.hpp>

#define CUDA_OK(call)                                                               \
  do {                                                                              \
    const cudaError_t cuda_ok_status_ = (call);                                     \
    if (cuda_ok_status_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(cuda_ok_status_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

namespace {

constexpr int kLayers = 2;
constexpr int kBatch = 2;  // sequences
constexpr int kHeads = 2;  // HK = HV
constexpr int kK = 4;      // draft tokens verified per step
constexpr int kD = 128;    // dk = dv
constexpr int kSteps = 40;
constexpr int kRow = kHeads * kD;        // q, k, v, out row
constexpr int kTile = kHeads * kD * kD;  // one sequence's state (vk: [HV][dv][dk])

float* device_copy(const std::vector<float>& host) {
  float* d = nullptr;
  CUDA_OK(cudaMalloc(&d, host.size() * sizeof(float)));
  CUDA_OK(cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

// One layer's tokens for one step: rows b*K + t, random unit q and k rows.
struct Tokens {
  std::vector<float> q, k, v, g, beta;
};

Tokens draw_tokens(std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Tokens x{std::vector<float>(kBatch * kK * kRow), std::vector<float>(kBatch * kK * kRow),
           std::vector<float>(kBatch * kK * kRow), std::vector<float>(kBatch * kK * kHeads),
           std::vector<float>(kBatch * kK * kHeads)};
  for (std::vector<float>* rows : {&x.q, &x.k}) {
    for (int r = 0; r < kBatch * kK * kHeads; ++r) {
      float norm = 0;
      for (int i = 0; i < kD; ++i) norm += std::pow((*rows)[r * kD + i] = normal(rng), 2.0f);
      for (int i = 0; i < kD; ++i) (*rows)[r * kD + i] /= std::sqrt(norm);
    }
  }
  for (float& e : x.v) e = normal(rng);
  for (float& e : x.g) e = -0.01f - 0.2f * uniform(rng);
  for (float& e : x.beta) e = 0.05f + 0.9f * uniform(rng);
  return x;
}

// The sequential recurrence in double over the first `accepted` tokens of sequence b: what the
// layer's state is after the step (S_cur of the next one). s: [HV][dv][dk].
void advance(const Tokens& x, int b, int accepted, std::vector<double>& s) {
  for (int t = 0; t < accepted; ++t) {
    const int r = b * kK + t;
    for (int h = 0; h < kHeads; ++h) {
      double* sh = &s[static_cast<std::size_t>(h) * kD * kD];
      const float* k = &x.k[r * kRow + h * kD];
      for (int e = 0; e < kD * kD; ++e) sh[e] *= std::exp(double{x.g[r * kHeads + h]});
      for (int j = 0; j < kD; ++j) {
        double pred = 0;
        for (int i = 0; i < kD; ++i) pred += sh[j * kD + i] * k[i];
        const double u = x.beta[r * kHeads + h] * (x.v[r * kRow + h * kD + j] - pred);
        for (int i = 0; i < kD; ++i) sh[j * kD + i] += k[i] * u;
      }
    }
  }
}

int run(int argc, char** argv) {
  wyjit::JitOptions options = wyjit::JitOptions::from_env();
  if (argc > 1) options.cache_dir = argv[1];
  wyjit::Jit jit(options);

  // One variant serves every layer: K = 4 tokens a step, a log of L = 16 entries.
  const wyjit::GdnReplaySpec spec{.k = kK, .log = 16, .io = wyjit::DType::f32};
  const auto compiled = jit.compile(spec, wyjit::Target::parse("sm_90"));
  std::printf("%s: %zu bytes for sm_90, kernels:", wyjit::format_spec(spec).c_str(),
              compiled->binary.size());
  for (const auto& role : compiled->roles) std::printf(" %s", role.role.c_str());
  std::printf("\n");
  const std::int64_t log_floats = wyjit::gdn_replay_log_floats(spec, kHeads, kHeads);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipping the launches\n");
    return 0;
  }
  CUDA_OK(cudaSetDevice(0));
  CUDA_OK(cudaFree(nullptr));
  const wyjit::Kernel kernel = jit.kernel(spec);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));

  // ---- enter replay mode: the prefill state becomes the checkpoint, every log is empty ----
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float*> checkpoint(kLayers), log(kLayers);
  std::vector<std::vector<double>> expected(kLayers * kBatch);  // S_cur per (layer, sequence)
  for (int l = 0; l < kLayers; ++l) {
    std::vector<float> prefill(kBatch * kTile);
    for (float& e : prefill) e = 0.5f * normal(rng);
    checkpoint[l] = device_copy(prefill);
    CUDA_OK(cudaMalloc(&log[l], sizeof(float) * kBatch * log_floats));  // never read unwritten
    for (int b = 0; b < kBatch; ++b) {
      expected[l * kBatch + b].assign(prefill.begin() + b * kTile,
                                      prefill.begin() + (b + 1) * kTile);
    }
  }
  // One cursor {base, len} per sequence, shared by every layer; {0, 0}: an empty log.
  std::int32_t *cursor, *accepted;
  CUDA_OK(cudaMalloc(&cursor, sizeof(std::int32_t) * kBatch * 2));
  CUDA_OK(cudaMemset(cursor, 0, sizeof(std::int32_t) * kBatch * 2));
  CUDA_OK(cudaMalloc(&accepted, sizeof(std::int32_t) * kBatch));
  float* out = device_copy(std::vector<float>(kBatch * kK * kRow));

  wyjit::GdnReplayVerifyArgs verify;
  verify.batch = kBatch;
  verify.num_k_heads = kHeads;
  verify.num_v_heads = kHeads;
  verify.k = kK;
  verify.dk = kD;
  verify.dv = kD;
  verify.scale = 1.0f / std::sqrt(float{kD});
  verify.qk_stride = kRow;
  verify.v_stride = kRow;
  verify.gb_stride = kHeads;
  verify.o_stride = kRow;
  verify.out = out;
  verify.states.state_seq_stride = kTile;  // strided: checkpoint of b at state + b*kTile
  verify.log.state_seq_stride = log_floats;
  verify.cursor = cursor;
  verify.cursor_stride = 2;
  wyjit::GdnReplayCommitArgs commit;
  commit.batch = kBatch;
  commit.k = kK;
  commit.cursor = cursor;
  commit.cursor_stride = 2;
  commit.accepted = accepted;

  // ---- steps: verify every layer, sample, one commit for all layers ----
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Tokens> tokens;
    std::vector<float*> uploaded;
    for (int l = 0; l < kLayers; ++l) {
      tokens.push_back(draw_tokens(rng));
      for (const std::vector<float>* x : {&tokens[l].q, &tokens[l].k, &tokens[l].v,
                                          &tokens[l].g, &tokens[l].beta}) {
        uploaded.push_back(device_copy(*x));
      }
      verify.q = uploaded[5 * l];
      verify.k_in = uploaded[5 * l + 1];
      verify.v = uploaded[5 * l + 2];
      verify.g = uploaded[5 * l + 3];
      verify.beta = uploaded[5 * l + 4];
      verify.states.state = checkpoint[l];
      verify.log.state = log[l];
      // Reads the cursor, S0 and the live log; writes out and K log entries; folds when due.
      wyjit::launch_gdn_replay_verify(kernel, verify, stream);
    }
    // The engine's sampler decides how many draft tokens each sequence keeps (1..K), on the
    // device; here the host draws them (accepted with probability 0.7 until a rejection).
    std::int32_t kept[kBatch];
    for (int b = 0; b < kBatch; ++b) {
      kept[b] = 1;
      while (kept[b] < kK && uniform(rng) < 0.7f) ++kept[b];
      for (int l = 0; l < kLayers; ++l) advance(tokens[l], b, kept[b], expected[l * kBatch + b]);
    }
    CUDA_OK(cudaMemcpyAsync(accepted, kept, sizeof kept, cudaMemcpyHostToDevice, stream));
    wyjit::launch_gdn_replay_commit(kernel, commit, stream);  // moves every layer's cursor
    CUDA_OK(cudaStreamSynchronize(stream));
    for (float* p : uploaded) CUDA_OK(cudaFree(p));
  }

  // ---- materialize S_cur (prefix caching, or leaving replay mode for classic verify) ----
  float* current = device_copy(std::vector<float>(kBatch * kTile));
  wyjit::GdnReplayMaterializeArgs materialize;
  materialize.batch = kBatch;
  materialize.num_k_heads = kHeads;
  materialize.num_v_heads = kHeads;
  materialize.dk = kD;
  materialize.dv = kD;
  materialize.states.state_seq_stride = kTile;
  materialize.log.state_seq_stride = log_floats;
  materialize.cursor = cursor;
  materialize.cursor_stride = 2;
  materialize.out.state = current;
  materialize.out.state_seq_stride = kTile;
  double worst = 0, largest = 0;
  std::vector<float> got(kBatch * kTile);
  for (int l = 0; l < kLayers; ++l) {
    materialize.states.state = checkpoint[l];
    materialize.log.state = log[l];
    wyjit::launch_gdn_replay_materialize(kernel, materialize, stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(got.data(), current, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int b = 0; b < kBatch; ++b) {
      for (int e = 0; e < kTile; ++e) {
        const double want = expected[l * kBatch + b][e];
        worst = std::max(worst, std::fabs(got[b * kTile + e] - want));
        largest = std::max(largest, std::fabs(want));
      }
    }
  }
  std::printf("%d steps, %d layers: S_cur max relative error %.2e\n", kSteps, kLayers,
              worst / largest);
  for (int l = 0; l < kLayers; ++l) {
    CUDA_OK(cudaFree(checkpoint[l]));
    CUDA_OK(cudaFree(log[l]));
  }
  for (void* p : {static_cast<void*>(cursor), static_cast<void*>(accepted),
                  static_cast<void*>(out), static_cast<void*>(current)}) {
    CUDA_OK(cudaFree(p));
  }
  CUDA_OK(cudaStreamDestroy(stream));
  return worst / largest <= 1e-4 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const wyjit::Error& e) {
    std::fprintf(stderr, "wyjit error (%s): %s\n", wyjit::to_string(e.code()), e.what());
    return 1;
  }
}
