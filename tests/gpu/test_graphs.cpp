// SPDX-License-Identifier: Apache-2.0
// CUDA graphs: verify launches of every addressing mode captured once (global capture mode) and
// replayed with new inputs and restaged tables; launches during capture; the table stager's
// checks.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "gpu/graph_support.hpp"
#include "wyjit/error.hpp"
#include "wyjit/gdn_verify.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::test {

namespace {

void check_rig(const VerifyRig& rig, const std::string& when) {
  INFO(when << ": " << rig.describe());
  for (const RigCheck& c : rig.check()) {
    INFO(c.comparison.describe(c.name) << " tolerance " << c.tolerance);
    CHECK(c.passed());
  }
}

// One rig per addressing mode this build supports, each a different variant.
std::vector<std::unique_ptr<VerifyRig>> rigs_for_every_mode() {
  std::vector<std::unique_ptr<VerifyRig>> rigs;
  rigs.push_back(std::make_unique<VerifyRig>(
      KernelSpec{.k = 4, .io = DType::bf16, .addressing = Addressing::strided}, 3, 2, 4));
  if (addressing_supported(Addressing::table)) {
    rigs.push_back(std::make_unique<VerifyRig>(
        KernelSpec{.k = 3, .io = DType::f32, .addressing = Addressing::table, .layout = Layout::kv},
        4, 2, 2));
  } else {
    WARN("table addressing is not accepted by validate_spec in this build: not captured");
  }
  if (addressing_supported(Addressing::slot)) {
    rigs.push_back(std::make_unique<VerifyRig>(
        KernelSpec{.k = 5, .io = DType::f16, .addressing = Addressing::slot, .l2norm_qk = true}, 3,
        1, 2));
  } else {
    WARN("slot addressing is not accepted by validate_spec in this build: not captured");
  }
  return rigs;
}

// Replay r pads the last sequence of table and slot rigs every third replay, so staging fewer
// sequences than the graph was captured for is exercised too.
int padding_for(const VerifyRig& rig, int replay) {
  return rig.spec().addressing != Addressing::strided && replay % 3 == 2 ? 1 : 0;
}

}  // namespace

TEST_CASE(
    "graphs: verify launches of every addressing mode captured in global mode replay 100 "
    "times with new inputs and restaged tables",
    "[gpu][graph]") {
  make_context_current();
  const Stream stream;
  std::vector<std::unique_ptr<VerifyRig>> rigs = rigs_for_every_mode();
  std::vector<Kernel> kernels;
  for (const auto& rig : rigs) kernels.push_back(test_jit().kernel(rig->spec()));

  // A plain launch first: a failure here is the kernel's, not the graph's.
  for (std::size_t i = 0; i < rigs.size(); ++i) {
    rigs[i]->prepare(1, stream.get());
    launch_gdn_verify(kernels[i], rigs[i]->args(), stream.get());
  }
  stream.synchronize();
  for (const auto& rig : rigs) check_rig(*rig, "plain launch");

  const CapturedGraph graph(stream.get(), [&] {
    for (std::size_t i = 0; i < rigs.size(); ++i) {
      launch_gdn_verify(kernels[i], rigs[i]->args(), stream.get());
    }
  });
  for (int replay = 0; replay < 100; ++replay) {
    for (const auto& rig : rigs) {
      rig->prepare(1000 + static_cast<std::uint64_t>(replay), stream.get(),
                   padding_for(*rig, replay));
    }
    graph.launch(stream.get());
    stream.synchronize();
    for (const auto& rig : rigs) check_rig(*rig, "replay " + std::to_string(replay));
  }
}

TEST_CASE("graphs: a launch during global-mode capture allocates and synchronises nothing",
          "[gpu][graph]") {
  make_context_current();
  const Stream stream;
  const KernelSpec spec_a{.k = 6, .io = DType::f32, .layout = Layout::kv};
  const KernelSpec spec_b{.k = 2, .io = DType::bf16};
  VerifyRig rig_a(spec_a, 2, 2, 2);
  VerifyRig rig_b(spec_b, 3, 1, 2);
  const Kernel kernel_a = test_jit().kernel(spec_a);

  // The C API's launch too, through its own manager (sharing the test cache on disk).
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  const std::string cache = std::string(WYJIT_BINARY_DIR) + "/test-cache";
  options.cache_dir = cache.c_str();
  wyjit_jit* c_jit = nullptr;
  REQUIRE(wyjit_jit_create(&options, &c_jit) == WYJIT_OK);
  const std::unique_ptr<wyjit_jit, decltype(&wyjit_jit_destroy)> c_jit_owner(c_jit,
                                                                             wyjit_jit_destroy);
  const std::string name_b = format_spec(spec_b);
  wyjit_kernel* kernel_b = nullptr;
  const wyjit_status got = wyjit_jit_get_kernel_by_name(c_jit, name_b.c_str(), &kernel_b);
  INFO(wyjit_last_error());
  REQUIRE(got == WYJIT_OK);

  rig_a.prepare(7, stream.get());
  rig_b.prepare(8, stream.get());
  stream.synchronize();

  REQUIRE(detail::driver().cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) ==
          CUDA_SUCCESS);
  const std::string cpp_failure =
      failure_of([&] { launch_gdn_verify(kernel_a, rig_a.args(), stream.get()); });
  wyjit_gdn_verify_args c_args;
  wyjit_gdn_verify_args_init(&c_args);
  {
    const GdnVerifyArgs& a = rig_b.args();
    c_args.batch = a.batch;
    c_args.num_k_heads = a.num_k_heads;
    c_args.num_v_heads = a.num_v_heads;
    c_args.k = a.k;
    c_args.dk = a.dk;
    c_args.dv = a.dv;
    c_args.scale = a.scale;
    c_args.q = a.q;
    c_args.k_in = a.k_in;
    c_args.v = a.v;
    c_args.g = a.g;
    c_args.beta = a.beta;
    c_args.out = a.out;
    c_args.qk_stride = a.qk_stride;
    c_args.v_stride = a.v_stride;
    c_args.gb_stride = a.gb_stride;
    c_args.o_stride = a.o_stride;
    c_args.state = a.state;
    c_args.state_seq_stride = a.state_seq_stride;
    c_args.inter = a.inter;
    c_args.inter_seq_stride = a.inter_seq_stride;
    c_args.inter_tok_stride = a.inter_tok_stride;
  }
  const wyjit_status c_status = wyjit_launch_gdn_verify(kernel_b, &c_args, stream.get());
  const std::string c_failure = c_status == WYJIT_OK ? "" : wyjit_last_error();
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult queried = detail::driver().cuStreamIsCapturing(stream.get(), &capture);
  CUgraph graph = nullptr;
  const CUresult ended = detail::driver().cuStreamEndCapture(stream.get(), &graph);

  CHECK(cpp_failure == "");
  CHECK(c_failure == "");
  CHECK(queried == CUDA_SUCCESS);
  // An allocation or a synchronisation in global mode would have invalidated the capture.
  CHECK(capture == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  REQUIRE(ended == CUDA_SUCCESS);
  REQUIRE(graph != nullptr);
  CUgraphExec exec = nullptr;
  const CUresult instantiated = detail::driver().cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (instantiated == CUDA_SUCCESS) {
    CHECK(detail::driver().cuGraphLaunch(exec, stream.get()) == CUDA_SUCCESS);
    stream.synchronize();
    detail::driver().cuGraphExecDestroy(exec);
  }
  detail::driver().cuGraphDestroy(graph);
  REQUIRE(instantiated == CUDA_SUCCESS);
  check_rig(rig_a, "C++ launch captured");
  check_rig(rig_b, "C API launch captured");
}

TEST_CASE(
    "table stager: stages K slabs, nulls the tail, stages null entries (padding) anywhere, "
    "refuses null arrays naming them and copies nothing then, refuses a capturing stream",
    "[gpu][graph][stager]") {
  make_context_current();
  const Stream stream;
  constexpr int kK = 3;
  constexpr int kMaxBatch = 4;
  GdnTableStager stager(kK, kMaxBatch);
  CHECK(stager.k() == kK);
  CHECK(stager.slab_stride() == kMaxBatch);
  const auto fake = [](std::uintptr_t slab, std::uintptr_t b) {
    return reinterpret_cast<void*>(0x100000 * (slab + 1) + 0x1000 * (b + 1));
  };
  const auto download = [&] {
    std::vector<std::uintptr_t> host(kK * kMaxBatch, 1);
    REQUIRE(detail::driver().cuMemcpyDtoH(host.data(),
                                          reinterpret_cast<CUdeviceptr>(stager.device_tables()),
                                          host.size() * sizeof(void*)) == CUDA_SUCCESS);
    return host;
  };
  CHECK(download() == std::vector<std::uintptr_t>(kK * kMaxBatch, 0));  // null until staged

  std::vector<void*> states{fake(0, 0), fake(0, 1), fake(0, 2), fake(0, 3)};
  std::vector<void*> inter0{fake(1, 0), fake(1, 1), fake(1, 2), fake(1, 3)};
  std::vector<void*> inter1{fake(2, 0), fake(2, 1), fake(2, 2), fake(2, 3)};
  void* const* inter[] = {inter0.data(), inter1.data()};

  // What slab s entry b must hold after staging `batch` entries of states/inter0/inter1.
  const auto expect_staged = [&](int batch) {
    const std::vector<std::uintptr_t> got = download();
    const std::vector<void*>* slabs[] = {&states, &inter0, &inter1};
    for (int s = 0; s < kK; ++s) {
      for (int b = 0; b < kMaxBatch; ++b) {
        INFO("slab " << s << " entry " << b << " after staging batch " << batch);
        CHECK(got[s * kMaxBatch + b] ==
              (b < batch ? reinterpret_cast<std::uintptr_t>((*slabs[s])[b]) : 0));
      }
    }
  };
  stager.stage(states.data(), inter, kMaxBatch, stream.get());
  stream.synchronize();
  expect_staged(kMaxBatch);
  stager.stage(states.data(), inter, 2, stream.get());
  stream.synchronize();
  expect_staged(2);

  // Null entries are padding, staged as they are: a padded sequence in the middle, a skipped
  // intermediate state of another sequence.
  states[1] = nullptr;
  inter1[2] = nullptr;
  stager.stage(states.data(), inter, 3, stream.get());
  stream.synchronize();
  expect_staged(3);
  states[1] = fake(0, 1);
  inter1[2] = fake(2, 2);
  stager.stage(states.data(), inter, 2, stream.get());
  stream.synchronize();
  expect_staged(2);

  // Refusals: the message names the argument; nothing is copied.
  void* const* missing_row[] = {inter0.data(), nullptr};
  CHECK_THROWS_WITH(stager.stage(states.data(), missing_row, 3, stream.get()),
                    Catch::Contains("inter[1] is null"));
  CHECK_THROWS_WITH(stager.stage(states.data(), nullptr, 3, stream.get()),
                    Catch::Contains("inter is null"));
  CHECK_THROWS_WITH(stager.stage(states.data(), inter, 5, stream.get()),
                    Catch::Contains("batch is 5, must be 1..max_batch (4)"));
  CHECK_THROWS_WITH(stager.stage(states.data(), inter, 0, stream.get()),
                    Catch::Contains("batch is 0"));
  CHECK_THROWS_WITH(stager.stage(nullptr, inter, 1, stream.get()),
                    Catch::Contains("states is null"));
  std::optional<ErrorCode> code;
  try {
    stager.stage(states.data(), inter, 9, stream.get());
  } catch (const Error& e) {
    code = e.code();
  }
  CHECK(code == ErrorCode::invalid_argument);
  stream.synchronize();
  expect_staged(2);

  // During capture: refused, and the capture survives (nothing illegal was attempted).
  REQUIRE(detail::driver().cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) ==
          CUDA_SUCCESS);
  const std::string during =
      failure_of([&] { stager.stage(states.data(), inter, 4, stream.get()); });
  CUgraph graph = nullptr;
  const CUresult ended = detail::driver().cuStreamEndCapture(stream.get(), &graph);
  if (graph != nullptr) detail::driver().cuGraphDestroy(graph);
  CHECK_THAT(during, Catch::Contains("is being captured"));
  CHECK(ended == CUDA_SUCCESS);
  expect_staged(2);

  // The C API wraps the same object.
  wyjit_table_stager* c_stager = nullptr;
  REQUIRE(wyjit_table_stager_create(kK, kMaxBatch, &c_stager) == WYJIT_OK);
  CHECK(wyjit_table_stager_slab_stride(c_stager) == kMaxBatch);
  CHECK(wyjit_table_stager_tables(c_stager) != nullptr);
  CHECK(wyjit_table_stager_stage(c_stager, states.data(), missing_row, 4, stream.get()) ==
        WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(wyjit_last_error(), Catch::Contains("inter[1] is null"));
  states[3] = nullptr;
  CHECK(wyjit_table_stager_stage(c_stager, states.data(), inter, 4, stream.get()) == WYJIT_OK);
  stream.synchronize();
  wyjit_table_stager_destroy(c_stager);
}

}  // namespace wyjit::test
