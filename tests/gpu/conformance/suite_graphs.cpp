// SPDX-License-Identifier: Apache-2.0
// CUDA graphs, for every family and every kernel of its variants: launches of every addressing
// mode captured once (global capture mode) and replayed with new inputs, restaged tables, new
// slots and padded sequences; launches through the C++ and the C API during a capture, which
// must neither allocate nor synchronise.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"

namespace wyjit::test::conformance {

namespace {

// Every third replay pads the last sequence (table: staged as a shorter batch than the graph
// was captured for; slot: a read slot past the pool; strided: where the family can).
Padding padding_for(const LaunchRig& rig, int replay) {
  return Padding{.tail = replay % 3 == 2 && rig.sample().batch > 1 ? 1 : 0};
}

void capture_and_replay(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::graphs);
  make_context_current();
  const Stream stream;
  std::vector<std::unique_ptr<LaunchRig>> rigs;
  std::vector<Kernel> kernels;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    for (int mode = 0; mode < mode_count(family, samples[i].spec); ++mode) {
      const bool padded = (i + static_cast<std::size_t>(mode)) % 2 == 1;
      rigs.push_back(std::make_unique<LaunchRig>(
          family, samples[i], RigOptions{.padded = padded, .mode = mode, .token_major = !padded}));
      kernels.push_back(test_jit().kernel(samples[i].spec));
    }
  }
  REQUIRE(!rigs.empty());

  // A plain launch first: a failure here is the kernel's, not the graph's.
  for (std::size_t i = 0; i < rigs.size(); ++i) {
    rigs[i]->prepare(1, stream.get());
    rigs[i]->launch(kernels[i], stream.get());
  }
  stream.synchronize();
  for (const auto& rig : rigs) check_result(*rig, rig->result(), "plain launch");

  const CapturedGraph graph(stream.get(), [&] {
    for (std::size_t i = 0; i < rigs.size(); ++i) rigs[i]->launch(kernels[i], stream.get());
  });
  for (int replay = 0; replay < 100; ++replay) {
    for (const auto& rig : rigs) {
      rig->prepare(1000 + static_cast<std::uint64_t>(replay), stream.get(),
                   padding_for(*rig, replay));
    }
    graph.launch(stream.get());
    stream.synchronize();
    for (const auto& rig : rigs) {
      check_result(*rig, rig->result(), "replay " + std::to_string(replay));
    }
  }
}

void launch_during_capture(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::graphs);
  REQUIRE(samples.size() >= 2);
  make_context_current();
  const Stream stream;
  const Sample& sample_a = samples[0];  // launched through the C++ API
  const Sample& sample_b = samples[1];  // launched through the C API
  std::vector<std::unique_ptr<LaunchRig>> rigs_a, rigs_b;
  for (int mode = 0; mode < mode_count(family, sample_a.spec); ++mode) {
    rigs_a.push_back(std::make_unique<LaunchRig>(family, sample_a, RigOptions{.mode = mode}));
  }
  for (int mode = 0; mode < mode_count(family, sample_b.spec); ++mode) {
    rigs_b.push_back(
        std::make_unique<LaunchRig>(family, sample_b, RigOptions{.padded = true, .mode = mode}));
  }
  const Kernel kernel_a = test_jit().kernel(sample_a.spec);

  // The C API's launch through its own manager (sharing the test cache on disk).
  const CJit c_jit;
  const std::string name_b = format_spec(sample_b.spec);
  wyjit_kernel* kernel_b = nullptr;
  const wyjit_status got = wyjit_jit_get_kernel(c_jit.get(), name_b.c_str(), &kernel_b);
  INFO(wyjit_last_error());
  REQUIRE(got == WYJIT_OK);

  for (const auto& rig : rigs_a) rig->prepare(7, stream.get());
  for (const auto& rig : rigs_b) rig->prepare(8, stream.get(), Padding{.middle = true});
  stream.synchronize();

  REQUIRE(detail::driver().cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) ==
          CUDA_SUCCESS);
  const std::string cpp_failure = failure_of([&] {
    for (const auto& rig : rigs_a) rig->launch(kernel_a, stream.get());
  });
  std::string c_failure;
  for (const auto& rig : rigs_b) {
    if (rig->launch_c(kernel_b, stream.get()) != WYJIT_OK) c_failure += wyjit_last_error();
  }
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
  for (const auto& rig : rigs_a) check_result(*rig, rig->result(), "C++ launch captured");
  for (const auto& rig : rigs_b) check_result(*rig, rig->result(), "C API launch captured");
}

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "graphs: launches of every addressing mode and kernel captured in global mode replay 100 "
    "times with new inputs, restaged tables, new slots and padded sequences",
    "[graph]", capture_and_replay);

WYJIT_CONFORMANCE_SUITE(
    "graphs: a C++ and a C API launch during global-mode capture allocate and synchronise "
    "nothing",
    "[graph]", launch_during_capture);

}  // namespace wyjit::test::conformance
