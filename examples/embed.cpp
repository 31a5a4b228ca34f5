// SPDX-License-Identifier: Apache-2.0
// Embedding wyjit in a C++ engine: the example of docs/embedding.md, compiled and run by CTest.
// Without a GPU it does everything up to the launch (spec, compile, cache, argument checks) and
// says so.
//
//   embed [CACHE_DIR]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <variant>
#include <vector>
#include <wyjit/wyjit.hpp>  // the whole C++ API

#define CUDA_OK(call)                                                               \
  do {                                                                              \
    const cudaError_t cuda_ok_status_ = (call);                                     \
    if (cuda_ok_status_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(cuda_ok_status_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

namespace {

constexpr int kBatch = 2;  // sequences
constexpr int kHeads = 2;  // HK = HV: one key head per value head
constexpr int kK = 4;      // tokens verified per sequence (the variant's K)
constexpr int kD = 128;    // dk = dv

// The sequential recurrence in double, for one (sequence, head): what the kernel must match.
// Layout vk: element (i over dk, j over dv) of a state at j*dk + i.
void reference(const float* q, const float* k, const float* v, const float* g, const float* beta,
               float scale, std::vector<double>& s, double* out /* [K][dv], row stride */,
               int row_stride) {
  for (int t = 0; t < kK; ++t) {
    const float* qt = q + t * kHeads * kD;  // consecutive tokens are consecutive rows
    const float* kt = k + t * kHeads * kD;
    const float* vt = v + t * kHeads * kD;
    for (double& x : s) x *= std::exp(double{g[t * kHeads]});
    for (int j = 0; j < kD; ++j) {
      double pred = 0;
      for (int i = 0; i < kD; ++i) pred += s[j * kD + i] * kt[i];
      const double u = beta[t * kHeads] * (vt[j] - pred);
      for (int i = 0; i < kD; ++i) s[j * kD + i] += kt[i] * u;
    }
    for (int j = 0; j < kD; ++j) {
      double o = 0;
      for (int i = 0; i < kD; ++i) o += s[j * kD + i] * scale * qt[i];
      out[t * row_stride + j] = o;
    }
  }
}

int run(int argc, char** argv) {
  // 1. One manager per process; it is thread-safe. Options come from the environment
  //    (WYJIT_CACHE_DIR, WYJIT_CACHE_RO_DIRS, WYJIT_NO_JIT, ...) unless set here.
  wyjit::JitOptions options = wyjit::JitOptions::from_env();
  if (argc > 1) options.cache_dir = argv[1];
  wyjit::Jit jit(options);

  // 2. The variant the engine needs: by its canonical name, or typed as its family's spec (the
  //    fields not named keep their defaults: state f32, strided addressing, layout vk, d128).
  const wyjit::KernelSpec spec = wyjit::parse_spec("gdn_verify.k4.io_f32.st_f32.strided.vk.d128");
  const wyjit::KernelSpec typed = wyjit::GdnVerifySpec{.k = kK, .io = wyjit::DType::f32};
  if (typed != spec) return 1;

  // 3. Ahead of time, for a deployment target: needs no GPU (`wyjit precompile` does this).
  const auto compiled = jit.compile(spec, wyjit::Target::parse("sm_90"));
  std::printf("%s for sm_90: %zu bytes, %s\n", wyjit::format_spec(spec).c_str(),
              compiled->binary.size(), compiled->from_disk ? "from the disk cache" : "compiled");

  // The launch's checks need no GPU either (an engine can check its shapes at start-up).
  try {
    wyjit::check_gdn_verify_args(std::get<wyjit::GdnVerifySpec>(spec), wyjit::GdnVerifyArgs{});
    return 1;  // arguments left empty must be refused
  } catch (const wyjit::Error& e) {
    std::printf("refused as expected: %s\n", e.what());  // names the argument and its value
  }

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipping the launch\n");
    return 0;
  }

  // 4. On the GPU: a current context (the runtime's, here), then the kernel, once per variant
  //    and device, before any graph capture.
  CUDA_OK(cudaSetDevice(0));
  CUDA_OK(cudaFree(nullptr));  // makes the primary context current
  const wyjit::Kernel kernel = jit.kernel(spec);

  // 5. Inputs: row (b, t) of q/k/v/out is b*K + t; heads side by side in a row.
  const int rows = kBatch * kK;
  const int row = kHeads * kD;        // q, k, v and out row length (dense)
  const int tile = kHeads * kD * kD;  // one sequence's state
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> q(rows * row), k(rows * row), v(rows * row), out(rows * row);
  std::vector<float> g(rows * kHeads), beta(rows * kHeads), state(kBatch * tile);
  for (float* x : {q.data(), k.data()}) {  // unit rows per head (the kernel can also normalise)
    for (int r = 0; r < rows * kHeads; ++r) {
      float norm = 0;
      for (int i = 0; i < kD; ++i) {
        x[r * kD + i] = normal(rng);
        norm += x[r * kD + i] * x[r * kD + i];
      }
      for (int i = 0; i < kD; ++i) x[r * kD + i] /= std::sqrt(norm);
    }
  }
  for (float& x : v) x = normal(rng);
  for (float& x : g) x = -0.01f - 0.99f * uniform(rng);  // log-decay <= 0
  for (float& x : beta) x = 0.05f + 0.9f * uniform(rng);
  for (float& x : state) x = 0.5f * normal(rng);

  float *d_q, *d_k, *d_v, *d_out, *d_g, *d_beta, *d_state, *d_inter;
  const auto upload = [](float** dst, const std::vector<float>& src) {
    CUDA_OK(cudaMalloc(dst, src.size() * sizeof(float)));
    CUDA_OK(cudaMemcpy(*dst, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice));
  };
  upload(&d_q, q);
  upload(&d_k, k);
  upload(&d_v, v);
  upload(&d_out, out);
  upload(&d_g, g);
  upload(&d_beta, beta);
  upload(&d_state, state);
  CUDA_OK(cudaMalloc(&d_inter, sizeof(float) * kBatch * (kK - 1) * tile));  // Hi_0..Hi_{K-2}

  // 6. The launch: every argument checked (values in the message), nothing allocated, nothing
  //    synchronised, so it is CUDA-graph capturable.
  wyjit::GdnVerifyArgs args;
  args.batch = kBatch;
  args.num_k_heads = kHeads;
  args.num_v_heads = kHeads;
  args.k = kK;
  args.dk = kD;
  args.dv = kD;
  args.scale = 1.0f / std::sqrt(float{kD});
  args.q = d_q;
  args.k_in = d_k;
  args.v = d_v;
  args.g = d_g;
  args.beta = d_beta;
  args.out = d_out;
  args.qk_stride = row;
  args.v_stride = row;
  args.gb_stride = kHeads;
  args.o_stride = row;
  // The states (wyjit/state_refs.h), strided: S_b = state + b*state_seq_stride is read, then
  // overwritten by the final state; the state after token t < K-1 goes to
  // inter + b*inter_seq_stride + t*inter_tok_stride.
  args.states.state = d_state;
  args.states.state_seq_stride = tile;
  args.states.inter = d_inter;
  args.states.inter_seq_stride = std::int64_t{kK - 1} * tile;
  args.states.inter_tok_stride = tile;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  wyjit::launch_gdn_verify(kernel, args, stream);  // a cudaStream_t is a CUstream
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // 7. Compare with the CPU recurrence.
  double worst = 0;
  double largest = 0;
  std::vector<double> expected(rows * row);
  for (int b = 0; b < kBatch; ++b) {
    for (int h = 0; h < kHeads; ++h) {
      std::vector<double> s(state.begin() + b * tile + h * kD * kD,
                            state.begin() + b * tile + (h + 1) * kD * kD);
      const int first = b * kK * row + h * kD;  // row b*K, head h
      reference(&q[first], &k[first], &v[first], &g[b * kK * kHeads + h],
                &beta[b * kK * kHeads + h], args.scale, s, &expected[first], row);
    }
  }
  for (int i = 0; i < rows * row; ++i) {
    worst = std::max(worst, std::fabs(out[i] - expected[i]));
    largest = std::max(largest, std::fabs(expected[i]));
  }
  std::printf("launched on device 0: max relative error %.2e\n", worst / largest);
  for (float* p : {d_q, d_k, d_v, d_out, d_g, d_beta, d_state, d_inter}) CUDA_OK(cudaFree(p));
  CUDA_OK(cudaStreamDestroy(stream));
  return worst / largest <= 1e-4 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const wyjit::Error& e) {  // every wyjit error: a code and a message with the values
    std::fprintf(stderr, "wyjit error (%s): %s\n", wyjit::to_string(e.code()), e.what());
    return 1;
  }
}
