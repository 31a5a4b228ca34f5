// SPDX-License-Identifier: Apache-2.0
// One manager, two GPUs: the same variants run on devices 0 and 1 (kernels are context-
// independent CUlibrary handles, prepared per device), on every kernel of the variant, checked on
// both and compared bit for bit. Reported as skipped ("SKIPPED: ") on a machine with one GPU.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"
#include "jit/target_select.hpp"

namespace wyjit::test::conformance {

namespace {

int compute_capability(int ordinal) {
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
  return detail::device_arch(device);
}

struct DeviceRun {
  int ordinal = 0;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<LaunchRig> rig;
};

void two_gpus(const FamilyCase& family) {
  const int devices = device_count();
  if (devices < 2) {
    WARN("SKIPPED: needs 2 CUDA devices, this machine has " << devices);
    return;
  }
  const std::vector<Sample> samples = usable_samples(family, Suite::multi_gpu);
  REQUIRE(!samples.empty());
  for (const Sample& sample : samples) {
    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      INFO(format_spec(sample.spec) << " launch mode " << mode);
      std::vector<DeviceRun> runs(2);
      // Enqueue on both devices before waiting for either.
      for (int d = 0; d < 2; ++d) {
        const ScopedDevice use(d);
        DeviceRun& run = runs[static_cast<std::size_t>(d)];
        run.ordinal = d;
        run.stream = std::make_unique<Stream>();
        run.rig = std::make_unique<LaunchRig>(family, sample,
                                              RigOptions{.padded = mode % 2 == 1, .mode = mode});
        const Kernel kernel = test_jit().kernel(sample.spec);
        run.rig->prepare(77, run.stream->get(), Padding{.middle = true});
        run.rig->launch(kernel, run.stream->get());
      }
      std::vector<std::vector<std::vector<std::uint8_t>>> written(2);
      for (DeviceRun& run : runs) {
        const ScopedDevice use(run.ordinal);
        run.stream->synchronize();
        const RigResult result = run.rig->result();
        check_result(*run.rig, result, "device " + std::to_string(run.ordinal));
        written[static_cast<std::size_t>(run.ordinal)] = result.canonical;
        // Free in the device's own context.
        run.rig.reset();
        run.stream.reset();
      }
      CHECK(check_same_items(written[0], written[1]) > 0);
    }
  }

  // The C API: one manager, a handle per device (the same one for devices of one architecture).
  const CJit jit;
  const std::string name = format_spec(samples.front().spec);
  wyjit_kernel* handles[2] = {nullptr, nullptr};
  for (int d = 0; d < 2; ++d) {
    REQUIRE(wyjit_device_make_current(d) == WYJIT_OK);
    const wyjit_status got = wyjit_jit_get_kernel(jit.get(), name.c_str(), &handles[d]);
    INFO("device " << d << ": " << wyjit_last_error());
    CHECK(got == WYJIT_OK);
  }
  REQUIRE(wyjit_device_make_current(0) == WYJIT_OK);  // back to device 0 for later tests
  if (compute_capability(0) == compute_capability(1)) CHECK(handles[0] == handles[1]);
  CHECK(handles[0] != nullptr);
  CHECK(handles[1] != nullptr);
}

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "two GPUs (needs 2 GPUs): one Jit runs the same variants on devices 0 and 1 at once",
    "[multi_gpu]", two_gpus);

}  // namespace wyjit::test::conformance
