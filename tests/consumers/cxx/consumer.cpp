// SPDX-License-Identifier: Apache-2.0
// A C++ program built against an installed wyjit through find_package(wyjit): parses a spec,
// compiles the variant with NVRTC into a fresh cache (no GPU needed), and where a CUDA device
// exists launches one small verify through the C++ API and checks it against a CPU loop.
//
//   consumer_shared CACHE_DIR      (or consumer_static)
#include <wyjit/wyjit.h>  // device helpers: this program has no CUDA runtime of its own

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>
#include <wyjit/error.hpp>
#include <wyjit/gdn_verify.hpp>
#include <wyjit/jit.hpp>
#include <wyjit/spec.hpp>

namespace {

constexpr int kBatch = 3;
constexpr int kK = 2;
constexpr int kD = 64;
constexpr const char* kVariant = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";

void expect(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("check failed: ") + what);
}

void c_check(wyjit_status status, const char* call) {
  if (status != WYJIT_OK) {
    throw std::runtime_error(std::string(call) + ": " + wyjit_last_error());
  }
}

// A device copy of a host vector, freed on scope exit.
struct DeviceVector {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceVector(const std::vector<float>& host) : bytes(host.size() * sizeof(float)) {
    c_check(wyjit_mem_alloc(bytes, &ptr), "wyjit_mem_alloc");
    c_check(wyjit_memcpy_htod(ptr, host.data(), bytes), "wyjit_memcpy_htod");
  }
  ~DeviceVector() { wyjit_mem_free(ptr); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  std::vector<float> download() const {
    std::vector<float> host(bytes / sizeof(float));
    c_check(wyjit_memcpy_dtoh(host.data(), ptr, bytes), "wyjit_memcpy_dtoh");
    return host;
  }
};

double max_rel_err(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0;
  double ref = 1e-30;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::fabs(got[i] - want[i]);
    if (!(e <= err)) err = e;  // NaN propagates
    ref = std::max(ref, std::fabs(want[i]));
  }
  return err / ref;
}

void launch_and_check(wyjit::Jit& jit, const wyjit::KernelSpec& spec) {
  constexpr int rows = kBatch * kK;
  constexpr int tile = kD * kD;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> q(rows * kD), k(rows * kD), v(rows * kD), g(rows), beta(rows);
  std::vector<float> state(kBatch * tile), inter(kBatch * (kK - 1) * tile);
  std::vector<float> out(rows * kD, std::numeric_limits<float>::quiet_NaN());
  for (int r = 0; r < rows; ++r) {
    for (float* row : {&q[r * kD], &k[r * kD]}) {
      double norm = 0;
      for (int i = 0; i < kD; ++i) {
        row[i] = unit(rng);
        norm += double{row[i]} * row[i];
      }
      for (int i = 0; i < kD; ++i) row[i] = static_cast<float>(row[i] / std::sqrt(norm));
    }
    for (int j = 0; j < kD; ++j) v[r * kD + j] = unit(rng);
    g[r] = -0.5f + 0.49f * unit(rng);
    beta[r] = 0.5f + 0.45f * unit(rng);
  }
  for (float& x : state) x = 0.5f * unit(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));

  // Reference: the sequential recurrence in double; layout vk puts (i over dk, j over dv) at
  // j*dk + i.
  std::vector<double> want_out(out.size()), want_state(state.size()), want_inter(inter.size());
  for (int b = 0; b < kBatch; ++b) {
    std::vector<double> s(state.begin() + b * tile, state.begin() + (b + 1) * tile);
    for (int t = 0; t < kK; ++t) {
      const int r = b * kK + t;
      for (double& x : s) x *= std::exp(double{g[r]});
      std::vector<double> u(kD);
      for (int j = 0; j < kD; ++j) {
        double pred = 0;
        for (int i = 0; i < kD; ++i) pred += s[j * kD + i] * k[r * kD + i];
        u[j] = beta[r] * (v[r * kD + j] - pred);
      }
      for (int j = 0; j < kD; ++j)
        for (int i = 0; i < kD; ++i) s[j * kD + i] += k[r * kD + i] * u[j];
      for (int j = 0; j < kD; ++j) {
        double o = 0;
        for (int i = 0; i < kD; ++i) o += s[j * kD + i] * scale * q[r * kD + i];
        want_out[r * kD + j] = o;
      }
      double* dst = t < kK - 1 ? &want_inter[(b * (kK - 1) + t) * tile] : &want_state[b * tile];
      std::copy(s.begin(), s.end(), dst);
    }
  }

  c_check(wyjit_device_make_current(0), "wyjit_device_make_current");
  const DeviceVector d_q(q), d_k(k), d_v(v), d_g(g), d_beta(beta), d_state(state), d_inter(inter),
      d_out(out);
  const wyjit::Kernel kernel = jit.kernel(spec);
  wyjit::GdnVerifyArgs args;
  args.batch = kBatch;
  args.num_k_heads = 1;
  args.num_v_heads = 1;
  args.k = kK;
  args.dk = kD;
  args.dv = kD;
  args.scale = scale;
  args.q = d_q.ptr;
  args.k_in = d_k.ptr;
  args.v = d_v.ptr;
  args.g = static_cast<const float*>(d_g.ptr);
  args.beta = static_cast<const float*>(d_beta.ptr);
  args.out = d_out.ptr;
  args.qk_stride = kD;
  args.v_stride = kD;
  args.gb_stride = 1;
  args.o_stride = kD;
  args.state = d_state.ptr;
  args.state_seq_stride = tile;
  args.inter = d_inter.ptr;
  args.inter_seq_stride = (kK - 1) * tile;
  args.inter_tok_stride = tile;
  wyjit::launch_gdn_verify(kernel, args, nullptr);
  c_check(wyjit_device_synchronize(), "wyjit_device_synchronize");
  const double e_out = max_rel_err(d_out.download(), want_out);
  const double e_state = max_rel_err(d_state.download(), want_state);
  const double e_inter = max_rel_err(d_inter.download(), want_inter);
  std::printf("launch: relative error out %.3g, final state %.3g, intermediate states %.3g\n",
              e_out, e_state, e_inter);
  expect(e_out <= 1e-4 && e_state <= 1e-4 && e_inter <= 1e-4, "launch matches the reference");

  // A bad launch is an exception naming the argument.
  args.inter_tok_stride = 1;
  try {
    wyjit::launch_gdn_verify(kernel, args, nullptr);
    expect(false, "a bad inter_tok_stride is refused");
  } catch (const wyjit::Error& e) {
    expect(e.code() == wyjit::ErrorCode::invalid_argument, "invalid_argument");
    expect(std::string(e.what()).find("inter_tok_stride") != std::string::npos,
           "the message names inter_tok_stride");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  try {
    const wyjit::KernelSpec spec = wyjit::parse_spec(kVariant);
    expect(wyjit::format_spec(spec) == kVariant, "the name round-trips");
    try {
      wyjit::parse_spec("gdn_verify.k4.io_f64.st_f32.strided.vk.d128");
      expect(false, "io_f64 is refused");
    } catch (const wyjit::Error& e) {
      expect(e.code() == wyjit::ErrorCode::invalid_spec, "invalid_spec");
    }

    wyjit::JitOptions options = wyjit::JitOptions::from_env();
    options.cache_dir = argv[1];
    options.no_jit = false;
    wyjit::Jit jit(options);
    const auto compiled = jit.compile(spec, wyjit::Target::parse("sm_90"));
    std::printf("compiled %s for sm_90: %zu bytes at %s\n", kVariant, compiled->binary.size(),
                compiled->path.c_str());
    expect(!compiled->from_disk && jit.counters().compiles == 1, "an NVRTC compile happened");
    expect(!compiled->binary.empty(), "a cubin came back");

    std::int32_t devices = 0;
    c_check(wyjit_device_count(&devices), "wyjit_device_count");
    if (devices == 0) {
      std::printf("no CUDA device (%s): launch skipped\n", wyjit_device_unavailable_reason());
    } else {
      launch_and_check(jit, spec);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
  std::printf("C++ consumer: OK\n");
  return 0;
}
