// SPDX-License-Identifier: Apache-2.0
// One manager, two GPUs: the same variants run on devices 0 and 1 (kernels are context-
// independent CUlibrary handles, prepared per device), checked on both and compared bit for bit.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "driver/driver_api.hpp"
#include "gpu/graph_support.hpp"
#include "jit/target_select.hpp"
#include "wyjit/gdn_verify.hpp"
#include "wyjit/wyjit.h"

namespace wyjit::test {

namespace {

int compute_capability(int ordinal) {
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
  return detail::device_arch(device);
}

struct DeviceRun {
  int ordinal = 0;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<VerifyRig> rig;
};

}  // namespace

TEST_CASE("two GPUs (needs 2 GPUs): one Jit runs the same variants on devices 0 and 1 at once",
          "[gpu][multi_gpu]") {
  const int devices = device_count();
  if (devices < 2) {
    WARN("SKIPPED: needs 2 CUDA devices, this machine has " << devices);
    return;
  }
  // K = 32 with the kv layout needs more than 48 KiB of shared memory: the opt-in attribute is
  // per device, so this also checks that Jit::kernel prepares each device it is asked for.
  std::vector<KernelSpec> specs{KernelSpec{.k = 32, .io = DType::f32, .layout = Layout::kv},
                                KernelSpec{.k = 4, .io = DType::bf16}};
  if (addressing_supported(Addressing::table)) {
    specs.push_back(KernelSpec{.k = 5, .io = DType::f16, .addressing = Addressing::table});
  }
  for (const KernelSpec& spec : specs) {
    INFO(format_spec(spec));
    std::vector<DeviceRun> runs(2);
    // Enqueue on both devices before waiting for either.
    for (int d = 0; d < 2; ++d) {
      const ScopedDevice use(d);
      runs[d].ordinal = d;
      runs[d].stream = std::make_unique<Stream>();
      runs[d].rig = std::make_unique<VerifyRig>(spec, 3, 2, 4);
      const Kernel kernel = test_jit().kernel(spec);
      runs[d].rig->prepare(77, runs[d].stream->get());
      launch_gdn_verify(kernel, runs[d].rig->args(), runs[d].stream->get());
    }
    std::vector<std::vector<std::uint8_t>> outputs(2);
    for (DeviceRun& run : runs) {
      const ScopedDevice use(run.ordinal);
      run.stream->synchronize();
      INFO("device " << run.ordinal << ": " << run.rig->describe());
      for (const RigCheck& c : run.rig->check()) {
        INFO(c.comparison.describe(c.name) << " tolerance " << c.tolerance);
        CHECK(c.passed());
      }
      outputs[run.ordinal] = run.rig->output_bytes();
      // Free in the device's own context.
      run.rig.reset();
      run.stream.reset();
    }
    CHECK(outputs[0] == outputs[1]);
  }

  // The C API: one manager, a handle per device (the same one for devices of one architecture).
  wyjit_jit_options options;
  wyjit_jit_options_init(&options);
  const std::string cache = std::string(WYJIT_BINARY_DIR) + "/test-cache";
  options.cache_dir = cache.c_str();
  wyjit_jit* jit = nullptr;
  REQUIRE(wyjit_jit_create(&options, &jit) == WYJIT_OK);
  const std::unique_ptr<wyjit_jit, decltype(&wyjit_jit_destroy)> owner(jit, wyjit_jit_destroy);
  const std::string name = format_spec(specs.front());
  wyjit_kernel* handles[2] = {nullptr, nullptr};
  for (int d = 0; d < 2; ++d) {
    REQUIRE(wyjit_device_make_current(d) == WYJIT_OK);
    const wyjit_status got = wyjit_jit_get_kernel_by_name(jit, name.c_str(), &handles[d]);
    INFO("device " << d << ": " << wyjit_last_error());
    CHECK(got == WYJIT_OK);
  }
  REQUIRE(wyjit_device_make_current(0) == WYJIT_OK);  // back to device 0 for later tests
  if (compute_capability(0) == compute_capability(1)) CHECK(handles[0] == handles[1]);
  CHECK(handles[0] != nullptr);
  CHECK(handles[1] != nullptr);
}

}  // namespace wyjit::test
