// SPDX-License-Identifier: Apache-2.0
// Variant names through the C API (wyjit/wyjit.h) on the CPU: names validate and their fields
// read back, names built from field values, and the families and their fields as the library
// describes them; bad names and values are refused, naming the field.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "capi_test_support.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

using wyjit::test::last_error;

/// The value of `field` in the variant `name` (wyjit_spec_field), or the status's name.
std::string field_of(const char* name, const char* field) {
  char buffer[64];
  const wyjit_status status = wyjit_spec_field(name, field, buffer, sizeof buffer, nullptr);
  return status == WYJIT_OK ? std::string(buffer) : wyjit_status_name(status);
}

/// wyjit_spec_build of `family` with `fields`, or the status's name.
std::string build(const char* family, std::vector<const char*> fields,
                  std::vector<const char*> values) {
  char buffer[128];
  const wyjit_status status = wyjit_spec_build(family, fields.data(), values.data(), fields.size(),
                                               buffer, sizeof buffer, nullptr);
  return status == WYJIT_OK ? std::string(buffer) : wyjit_status_name(status);
}

}  // namespace

TEST_CASE("C API: names validate, their fields read back, bad ones name the field", "[capi]") {
  for (const char* text : {"gdn_verify.k17.io_f16.st_bf16.table.kv.dk64.dv256.l2norm",
                           "gdn_verify.k1.io_f32.st_f32.slot.vk.d256.gating",
                           "conv1d_update.k4.io_bf16.w4.wt_f32.window.strided.bias.silu"}) {
    CHECK(wyjit_spec_validate(text) == WYJIT_OK);
    CHECK(wyjit::format_spec(wyjit::parse_spec(text)) == text);
  }
  const char* name = "gdn_verify.k17.io_f16.st_bf16.table.kv.dk64.dv256.l2norm";
  CHECK(field_of(name, "family") == "gdn_verify");
  CHECK(field_of(name, "k") == "17");
  CHECK(field_of(name, "io") == "f16");
  CHECK(field_of(name, "state") == "bf16");
  CHECK(field_of(name, "addressing") == "table");
  CHECK(field_of(name, "layout") == "kv");
  CHECK(field_of(name, "dk") == "64");
  CHECK(field_of(name, "dv") == "256");
  CHECK(field_of(name, "l2norm") == "on");
  CHECK(field_of(name, "gating") == "off");
  const char* conv = "conv1d_update.k3.io_f16.w4.wt_f32.window.strided.silu";
  CHECK(field_of(conv, "family") == "conv1d_update");
  CHECK(field_of(conv, "k") == "3");
  CHECK(field_of(conv, "width") == "4");
  CHECK(field_of(conv, "weight") == "f32");
  CHECK(field_of(conv, "rollback") == "window");
  CHECK(field_of(conv, "bias") == "off");
  CHECK(field_of(conv, "silu") == "on");
  CHECK(field_of(conv, "layout") == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("conv1d_update has no field 'layout'"));

  CHECK(wyjit_spec_validate("gdn_verify.k0.io_f16.st_f32.strided.vk.d128") ==
        WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("wyjit_spec_validate") && Catch::Contains("K is 0"));
  CHECK(wyjit_spec_validate(nullptr) == WYJIT_ERROR_INVALID_ARGUMENT);
  CHECK_THAT(last_error(), Catch::Contains("name is NULL"));
}

TEST_CASE("C API: names built from field values; bad values are refused by field and value",
          "[capi]") {
  CHECK(build("gdn_verify", {}, {}) == "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128");
  CHECK(build("gdn_verify", {"k", "layout", "dv", "l2norm"}, {"17", "kv", "64", "on"}) ==
        "gdn_verify.k17.io_bf16.st_f32.strided.kv.dk128.dv64.l2norm");
  CHECK(
      build("conv1d_update", {"io", "weight", "rollback", "silu"}, {"f16", "io", "window", "on"}) ==
      "conv1d_update.k4.io_f16.w4.wt_f16.window.strided.silu");
  CHECK(build("gdn_verify", {"io"}, {"f64"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'f64'") && Catch::Contains("f32, f16, bf16"));
  CHECK(build("gdn_verify", {"addressing"}, {"paged"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'paged'") && Catch::Contains("strided, table, slot"));
  CHECK(build("gdn_verify", {"l2norm"}, {"2"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("expected on or off"));
  CHECK(build("conv1d_update", {"rollback"}, {"undo"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("'undo'"));
  CHECK(build("gdn_verifx", {}, {}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("family is 'gdn_verifx'"));
  CHECK(build("gdn_verify", {"dk"}, {"96"}) == "invalid_spec");
  CHECK_THAT(last_error(), Catch::Contains("dk is 96"));
  CHECK(build("conv1d_update", {"io", "weight"}, {"bf16", "f16"}) == "invalid_spec");
  CHECK_THAT(last_error(),
             Catch::Contains("weight is f16") && Catch::Contains("bf16 (the io dtype)"));
}

TEST_CASE("C API: the families and their fields are described by the library", "[capi]") {
  REQUIRE(wyjit_family_count() == wyjit::family_names().size());
  CHECK(wyjit_family_name(wyjit_family_count()) == nullptr);
  for (size_t f = 0; f < wyjit_family_count(); ++f) {
    const std::string family = wyjit_family_name(f);
    const std::span<const wyjit::FieldInfo> fields = wyjit::family_fields(family);
    size_t count = 0;
    REQUIRE(wyjit_family_field_count(family.c_str(), &count) == WYJIT_OK);
    REQUIRE(count == fields.size());
    std::vector<const char*> names;
    std::vector<std::string> defaults;
    for (size_t i = 0; i < count; ++i) {
      wyjit_field_info info{};
      info.struct_size = sizeof info;
      REQUIRE(wyjit_family_field(family.c_str(), i, &info) == WYJIT_OK);
      CHECK(std::string(info.name) == fields[i].name);
      CHECK(std::string(info.label) == fields[i].label);
      CHECK(info.kind == static_cast<int32_t>(fields[i].kind));
      CHECK(info.num_choices == fields[i].choices.size());
      CHECK(info.default_value == fields[i].default_value);
      names.push_back(info.name);
      // The default as text, from the description alone: what a binding would do.
      switch (info.kind) {
        case WYJIT_FIELD_INTEGER:
          defaults.push_back(std::to_string(info.default_value));
          break;
        case WYJIT_FIELD_CHOICE:
          REQUIRE(static_cast<size_t>(info.default_value) < info.num_choices);
          defaults.emplace_back(info.choices[info.default_value]);
          break;
        case WYJIT_FIELD_FLAG:
          defaults.emplace_back(info.default_value != 0 ? "on" : "off");
          break;
        default:
          FAIL("unknown field kind " << info.kind);
      }
    }
    // Every default given explicitly names the default variant.
    std::vector<const char*> values;
    for (const std::string& d : defaults) values.push_back(d.c_str());
    CHECK(build(family.c_str(), names, values) == build(family.c_str(), {}, {}));
    wyjit_field_info info{};
    info.struct_size = sizeof info;
    CHECK(wyjit_family_field(family.c_str(), count, &info) == WYJIT_ERROR_INVALID_ARGUMENT);
    info.struct_size = 8;
    CHECK(wyjit_family_field(family.c_str(), 0, &info) == WYJIT_ERROR_INVALID_ARGUMENT);
    CHECK_THAT(last_error(), Catch::Contains("wyjit_field_info.struct_size is 8"));
  }
  size_t count = 0;
  CHECK(wyjit_family_field_count("nope", &count) == WYJIT_ERROR_INVALID_SPEC);
  CHECK_THAT(last_error(), Catch::Contains("family is 'nope'"));
}
