// SPDX-License-Identifier: Apache-2.0
// The C API is the C++ API: on the same data, wyjit_launch_<family> writes the same bytes as
// launch_<family> on every kernel of the variant; wyjit_check_<family> accepts what the C++ check
// accepts, and both refuse a broken argument with the same message (broken state references,
// naming the field args.states.<field>, unless the launch has none); the C handle names its
// variant.
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "gpu/conformance/suite_registry.hpp"
#include "gpu/conformance/suite_support.hpp"
#include "gpu/support/device.hpp"
#include "wyjit/error.hpp"

namespace wyjit::test::conformance {

namespace {

void c_launch_is_cpp_launch(const FamilyCase& family) {
  const std::vector<Sample> samples = usable_samples(family, Suite::c_api);
  make_context_current();
  const Stream stream;
  const CJit c_jit;
  std::uint64_t seed = 300;
  for (const Sample& sample : samples) {
    const std::string name = format_spec(sample.spec);
    const Kernel kernel = test_jit().kernel(sample.spec);
    wyjit_kernel* c_kernel = nullptr;
    {
      const wyjit_status got = wyjit_jit_get_kernel(c_jit.get(), name.c_str(), &c_kernel);
      INFO(name << ": " << wyjit_last_error());
      REQUIRE(got == WYJIT_OK);
    }
    char text[512] = {};
    std::size_t length = 0;
    CHECK(wyjit_kernel_name(c_kernel, text, sizeof(text), &length) == WYJIT_OK);
    CHECK(std::string(text, length) == name);

    for (int mode = 0; mode < mode_count(family, sample.spec); ++mode) {
      ++seed;
      LaunchRig rig(family, sample, {.padded = true, .mode = mode});
      FamilyLaunch& args = rig.launch_args();
      INFO(rig.describe());
      CHECK(failure_of([&] { args.check_args(); }) == "");
      {
        const wyjit_status checked = args.check_args_c(name.c_str());
        INFO(wyjit_last_error());
        CHECK(checked == WYJIT_OK);
      }

      const RigResult cpp = run_launch(rig, kernel, seed, Padding{.middle = true}, stream.get());
      check_result(rig, cpp, "C++ launch");
      rig.prepare(seed, stream.get(), Padding{.middle = true});
      stream.synchronize();
      {
        const wyjit_status launched = rig.launch_c(c_kernel, stream.get());
        INFO(wyjit_last_error());
        CHECK(launched == WYJIT_OK);
      }
      stream.synchronize();
      const RigResult c = rig.result();
      check_result(rig, c, "C launch");
      CHECK(check_same_items(c.canonical, cpp.canonical) > 0);

      // The same refusal through both, before anything is launched.
      const BrokenArgument broken = args.break_argument(addressing_of(sample.spec));
      const std::string& expected = broken.refusal;
      std::optional<ErrorCode> code;
      std::string message;
      try {
        args.check_args();
      } catch (const Error& e) {
        code = e.code();
        message = e.what();
      }
      CHECK(code == ErrorCode::invalid_argument);
      CHECK_THAT(message, Catch::Contains(expected));
      CHECK(args.check_args_c(name.c_str()) == WYJIT_ERROR_INVALID_ARGUMENT);
      CHECK_THAT(wyjit_last_error(), Catch::Contains(message));
      CHECK(rig.launch_c(c_kernel, stream.get()) == WYJIT_ERROR_INVALID_ARGUMENT);
      CHECK_THAT(wyjit_last_error(), Catch::Contains(message));
      CHECK_THAT(failure_of([&] { rig.launch(kernel, stream.get()); }), Catch::Contains(expected));
      broken.mend();
      CHECK(failure_of([&] { args.check_args(); }) == "");
    }
  }
}

}  // namespace

WYJIT_CONFORMANCE_SUITE(
    "C API: wyjit_launch_<family> writes what launch_<family> writes, and both check alike",
    "[c_api]", c_launch_is_cpp_launch);

}  // namespace wyjit::test::conformance
