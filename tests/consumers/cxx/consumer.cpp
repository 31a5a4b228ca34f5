// SPDX-License-Identifier: Apache-2.0
// A C++ program built against an installed wyjit through find_package(wyjit): parses and builds
// a spec, compiles the variant with NVRTC into a fresh cache, checks launch arguments (all of
// that needs no GPU), and where a CUDA device exists launches one small verify through the C++
// API and checks it against a CPU loop.
//
//   consumer_shared CACHE_DIR      (or consumer_static)
#include <wyjit/wyjit.h>  // device helpers: this program has no CUDA runtime of its own

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>
#include <wyjit/wyjit.hpp>

namespace {

constexpr int kBatch = 3;
constexpr int kK = 2;
constexpr int kD = 64;
constexpr int kRows = kBatch * kK;
constexpr int kTile = kD * kD;
constexpr const char* kVariant = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";

void expect(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("check failed: ") + what);
}

void c_check(wyjit_status status, const char* call) {
  if (status != WYJIT_OK) {
    throw std::runtime_error(std::string(call) + ": " + wyjit_last_error());
  }
}

// Runs `call`, which must throw wyjit::Error(`code`) with `needle` in its message.
template <class Call>
void expect_error(Call&& call, wyjit::ErrorCode code, const char* needle, const char* what) {
  try {
    call();
  } catch (const wyjit::Error& e) {
    expect(e.code() == code, what);
    expect(std::string(e.what()).find(needle) != std::string::npos, what);
    return;
  }
  expect(false, what);
}

// Where the launch's buffers are (device memory, or host memory for checks that never launch).
struct Buffers {
  const float* q;
  const float* k;
  const float* v;
  const float* g;
  const float* beta;
  float* out;
  float* state;
  float* inter;
};

// One strided launch of kVariant over `p`, HK = HV = 1.
wyjit::GdnVerifyArgs verify_args(const Buffers& p) {
  wyjit::GdnVerifyArgs args;
  args.batch = kBatch;
  args.num_k_heads = 1;
  args.num_v_heads = 1;
  args.k = kK;
  args.dk = kD;
  args.dv = kD;
  args.scale = 1.0f / std::sqrt(static_cast<float>(kD));
  args.q = p.q;
  args.k_in = p.k;
  args.v = p.v;
  args.g = p.g;
  args.beta = p.beta;
  args.out = p.out;
  args.qk_stride = kD;
  args.v_stride = kD;
  args.gb_stride = 1;
  args.o_stride = kD;
  args.states.state = p.state;  // S_b = state + b*state_seq_stride; the final state goes there
  args.states.state_seq_stride = kTile;
  args.states.inter = p.inter;  // the state after token t < K-1
  args.states.inter_seq_stride = (kK - 1) * kTile;
  args.states.inter_tok_stride = kTile;
  return args;
}

// A device copy of a host vector, freed on scope exit.
struct DeviceVector {
  float* ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceVector(const std::vector<float>& host) : bytes(host.size() * sizeof(float)) {
    void* p = nullptr;
    c_check(wyjit_mem_alloc(bytes, &p), "wyjit_mem_alloc");
    ptr = static_cast<float*>(p);
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

// The variant's checks without a GPU: good arguments pass, a bad one is named, and a Kernel that
// did not come from Jit::kernel is refused after the guards, before the driver is touched.
void check_without_gpu(const wyjit::GdnVerifySpec& spec) {
  std::vector<float> rows(kRows * kD), gates(kRows), tiles(kBatch * kK * kTile);
  const Buffers host{rows.data(),  rows.data(), rows.data(),  gates.data(),
                     gates.data(), rows.data(), tiles.data(), tiles.data() + kBatch * kTile};
  wyjit::GdnVerifyArgs args = verify_args(host);
  wyjit::check_gdn_verify_args(spec, args);
  expect_error([&] { wyjit::launch_gdn_verify(wyjit::Kernel(spec), args, nullptr); },
               wyjit::ErrorCode::invalid_argument, "Jit::kernel",
               "a Kernel without handles is refused, pointing at Jit::kernel");
  args.states.inter_tok_stride = 1;
  expect_error([&] { wyjit::check_gdn_verify_args(spec, args); },
               wyjit::ErrorCode::invalid_argument, "inter_tok_stride",
               "a bad inter_tok_stride is refused, named");
  std::printf("launch guards: good arguments pass, a bad stride is named\n");
}

void launch_and_check(wyjit::Jit& jit, const wyjit::KernelSpec& spec) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> q(kRows * kD), k(kRows * kD), v(kRows * kD), g(kRows), beta(kRows);
  std::vector<float> state(kBatch * kTile), inter(kBatch * (kK - 1) * kTile);
  std::vector<float> out(kRows * kD, std::numeric_limits<float>::quiet_NaN());
  for (int r = 0; r < kRows; ++r) {
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
    std::vector<double> s(state.begin() + b * kTile, state.begin() + (b + 1) * kTile);
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
      double* dst = t < kK - 1 ? &want_inter[(b * (kK - 1) + t) * kTile] : &want_state[b * kTile];
      std::copy(s.begin(), s.end(), dst);
    }
  }

  c_check(wyjit_device_make_current(0), "wyjit_device_make_current");
  const DeviceVector d_q(q), d_k(k), d_v(v), d_g(g), d_beta(beta), d_state(state), d_inter(inter),
      d_out(out);
  const wyjit::Kernel kernel = jit.kernel(spec);
  expect(kernel.spec() == spec && kernel.roles().size() == 1 && kernel.handle(0) != nullptr,
         "the kernel holds its one role, loaded");
  wyjit::GdnVerifyArgs args = verify_args(
      {d_q.ptr, d_k.ptr, d_v.ptr, d_g.ptr, d_beta.ptr, d_out.ptr, d_state.ptr, d_inter.ptr});
  wyjit::launch_gdn_verify(kernel, args, nullptr);
  c_check(wyjit_device_synchronize(), "wyjit_device_synchronize");
  const double e_out = max_rel_err(d_out.download(), want_out);
  const double e_state = max_rel_err(d_state.download(), want_state);
  const double e_inter = max_rel_err(d_inter.download(), want_inter);
  std::printf("launch: relative error out %.3g, final state %.3g, intermediate states %.3g\n",
              e_out, e_state, e_inter);
  expect(e_out <= 1e-4 && e_state <= 1e-4 && e_inter <= 1e-4, "launch matches the reference");

  // A bad launch is an exception naming the argument.
  args.states.inter_tok_stride = 1;
  expect_error([&] { wyjit::launch_gdn_verify(kernel, args, nullptr); },
               wyjit::ErrorCode::invalid_argument, "inter_tok_stride",
               "a bad inter_tok_stride is refused at launch, named");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  try {
    // A spec is one family's typed struct; its canonical name round-trips.
    const wyjit::KernelSpec spec = wyjit::parse_spec(kVariant);
    const auto* verify = std::get_if<wyjit::GdnVerifySpec>(&spec);
    expect(verify != nullptr && wyjit::family_name(spec) == "gdn_verify", "a gdn_verify spec");
    expect(verify->k == kK && verify->io == wyjit::DType::f32 && verify->dk == kD &&
               verify->dv == kD && verify->addressing == wyjit::Addressing::strided,
           "the parsed fields");
    expect(wyjit::format_spec(spec) == kVariant, "the name round-trips");
    wyjit::GdnVerifySpec typed;
    typed.k = kK;
    typed.io = wyjit::DType::f32;
    typed.dk = kD;
    typed.dv = kD;
    expect(wyjit::KernelSpec(typed) == spec, "the typed spec is the parsed one");
    const std::vector<std::pair<std::string, std::string>> fields = {
        {"k", "2"}, {"io", "f32"}, {"dk", "64"}, {"dv", "64"}};
    expect(wyjit::make_spec("gdn_verify", fields) == spec, "make_spec from field values");
    expect(wyjit::field_value(spec, "io") == "f32", "field_value");
    expect_error([] { wyjit::parse_spec("gdn_verify.k4.io_f64.st_f32.strided.vk.d128"); },
                 wyjit::ErrorCode::invalid_spec, "f64", "io_f64 is refused, named");

    wyjit::JitOptions options = wyjit::JitOptions::from_env();
    options.cache_dir = argv[1];
    options.no_jit = false;
    wyjit::Jit jit(options);
    const auto compiled = jit.compile(spec, wyjit::Target::parse("sm_90"));
    std::printf("compiled %s for sm_90: %zu bytes at %s\n", kVariant, compiled->binary.size(),
                compiled->path.c_str());
    expect(!compiled->from_disk && jit.counters().compiles == 1, "an NVRTC compile happened");
    expect(!compiled->binary.empty(), "a cubin came back");
    expect(compiled->roles.size() == 1 && compiled->roles[0].role == "verify" &&
               !compiled->roles[0].lowered_name.empty(),
           "the entry names its verify kernel");

    check_without_gpu(*verify);

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
