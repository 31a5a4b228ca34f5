// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/jit.hpp"
#include "wyjit/spec.hpp"

using namespace wyjit;

namespace {

std::string rejection(const std::string& name) {
  try {
    parse_spec(name);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::invalid_spec);
    return e.what();
  }
  FAIL("'" << name << "' was accepted");
  return {};
}

}  // namespace

TEST_CASE("spec names round-trip for every supported variant", "[spec]") {
  int checked = 0;
  for (int k = 1; k <= 32; ++k) {
    for (DType io : {DType::f32, DType::f16, DType::bf16}) {
      for (Layout layout : {Layout::vk, Layout::kv}) {
        for (int dk : {64, 128, 256}) {
          for (int dv : {64, 128, 256}) {
            for (bool l2 : {false, true}) {
              const KernelSpec s = GdnVerifySpec{
                  .k = k, .io = io, .layout = layout, .dk = dk, .dv = dv, .l2norm_qk = l2};
              const std::string name = format_spec(s);
              INFO(name);
              REQUIRE(parse_spec(name) == s);
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked == 32 * 3 * 2 * 3 * 3 * 2);
}

TEST_CASE("canonical names look the way the docs say", "[spec]") {
  CHECK(format_spec(KernelSpec{}) == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128");
  CHECK(format_spec(GdnVerifySpec{.k = 17,
                                  .io = DType::f16,
                                  .layout = Layout::kv,
                                  .dk = 128,
                                  .dv = 64,
                                  .l2norm_qk = true}) ==
        "gdn_verify.k17.io_f16.st_f32.strided.kv.dk128.dv64.l2norm");
}

TEST_CASE("bad names are rejected naming the field and the allowed values", "[spec]") {
  CHECK_THAT(rejection("gdn_verfy.k4.io_bf16.st_f32.strided.vk.d128"),
             Catch::Contains("family") && Catch::Contains("gdn_verify"));
  CHECK_THAT(rejection("gdn_verify.k0.io_bf16.st_f32.strided.vk.d128"),
             Catch::Contains("K is 0") && Catch::Contains("1..32"));
  CHECK_THAT(rejection("gdn_verify.k33.io_bf16.st_f32.strided.vk.d128"),
             Catch::Contains("K is 33"));
  CHECK_THAT(rejection("gdn_verify.k04.io_bf16.st_f32.strided.vk.d128"), Catch::Contains("K"));
  CHECK_THAT(rejection("gdn_verify.k4.io_f64.st_f32.strided.vk.d128"),
             Catch::Contains("io dtype") && Catch::Contains("io_bf16"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f8.strided.vk.d128"),
             Catch::Contains("state dtype"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.paged.vk.d128"),
             Catch::Contains("addressing") && Catch::Contains("strided"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.kk.d128"), Catch::Contains("layout"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.vk.d96"),
             Catch::Contains("dk is 96") && Catch::Contains("64, 128, 256"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.vk.dk128.dv128"),
             Catch::Contains("canonical name gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.fast"),
             Catch::Contains("option") && Catch::Contains("fast"));
  CHECK_THAT(rejection("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128.l2norm.l2norm"),
             Catch::Contains("option"));
  CHECK_THAT(rejection(""), Catch::Contains("family"));
  CHECK_THAT(rejection("gdn_verify.k4"), Catch::Contains("io dtype"));
}

TEST_CASE("validate_spec rejects what this build cannot run", "[spec]") {
  const auto message = [](const KernelSpec& s) -> std::string {
    try {
      validate_spec(s);
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  CHECK_THAT(message(GdnVerifySpec{.k = 40}), Catch::Contains("K is 40"));
  CHECK_THAT(message(GdnVerifySpec{.dv = 32}), Catch::Contains("dv is 32"));
  CHECK_THAT(message(GdnVerifySpec{.dk = 512}), Catch::Contains("dk is 512"));
  CHECK(message(KernelSpec{}) == "accepted");
  CHECK(message(GdnVerifySpec{.state = DType::bf16, .addressing = Addressing::slot}) == "accepted");
  CHECK_THAT(message(GdnVerifySpec{.io = static_cast<DType>(7)}),
             Catch::Contains("io dtype is 7") && Catch::Contains("f32, f16, bf16"));
}

// Every family, from its field table: every value of every field (one field at a time) names
// a variant that parses back to itself, and make_spec / field_value agree with the name.
TEST_CASE("every family's names round-trip field by field", "[spec]") {
  int checked = 0;
  for (const std::string_view family : family_names()) {
    const std::span<const FieldInfo> fields = family_fields(family);
    for (const FieldInfo& f : fields) {
      std::vector<std::string> values;
      switch (f.kind) {
        case FieldKind::integer:
          if (f.allowed.empty()) {
            for (int v = f.min; v <= f.max; ++v) values.push_back(std::to_string(v));
          } else {
            for (const int v : f.allowed) values.push_back(std::to_string(v));
          }
          break;
        case FieldKind::choice:
          for (const char* c : f.choices) values.emplace_back(c);
          break;
        case FieldKind::flag:
          values = {"off", "on"};
          break;
      }
      for (const std::string& v : values) {
        const std::vector<std::pair<std::string, std::string>> given = {{f.name, v}};
        KernelSpec spec;
        try {
          spec = make_spec(family, given);
        } catch (const Error& e) {
          // A value the family refuses across fields (e.g. conv1d weights f16 with io bf16).
          CHECK(e.code() == ErrorCode::invalid_spec);
          continue;
        }
        const std::string name = format_spec(spec);
        INFO(name);
        CHECK(family_name(spec) == family);
        CHECK(parse_spec(name) == spec);
        CHECK(field_value(spec, f.name) == v);
        CHECK(field_value(spec, "family") == family);
        ++checked;
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("make_spec and field_value name the bad field and value", "[spec]") {
  const auto message = [](std::string_view family,
                          std::vector<std::pair<std::string, std::string>> fields) -> std::string {
    try {
      make_spec(family, fields);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::invalid_spec);
      return e.what();
    }
    return "accepted";
  };
  CHECK_THAT(message("gdn_verifx", {}), Catch::Contains("family is 'gdn_verifx'"));
  CHECK_THAT(message("gdn_verify", {{"width", "4"}}),
             Catch::Contains("gdn_verify has no field 'width'"));
  CHECK_THAT(message("gdn_verify", {{"io", "f64"}}),
             Catch::Contains("'f64'") && Catch::Contains("f32, f16, bf16"));
  CHECK_THAT(message("gdn_verify", {{"k", "40"}}), Catch::Contains("K is 40"));
  CHECK_THAT(message("gdn_verify", {{"l2norm", "yes"}}), Catch::Contains("expected on or off"));
  CHECK(message("conv1d_update", {{"io", "f16"}, {"weight", "io"}}) == "accepted");
  CHECK_THROWS_AS(field_value(KernelSpec{}, "width"), Error);
  CHECK(format_spec(make_spec(
            "conv1d_update",
            std::vector<std::pair<std::string, std::string>>{{"io", "f16"}, {"weight", "io"}})) ==
        "conv1d_update.k4.io_f16.w4.wt_f16.intermediate.strided");
}

TEST_CASE("targets parse and print", "[spec]") {
  CHECK(Target::parse("sm_90").name() == "sm_90");
  CHECK(Target::parse("sm_90a").arch_specific);
  CHECK(Target::parse("compute_90").ptx);
  CHECK(Target::parse("sm_120").arch == 120);
  for (const char* bad : {"", "sm_", "sm90", "sm_x", "gfx90a", "sm_09", "compute_"}) {
    INFO(bad);
    CHECK_THROWS_AS(Target::parse(bad), Error);
  }
}
