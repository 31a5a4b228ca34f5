// SPDX-License-Identifier: Apache-2.0
// CPU tests of the GPU-test support's fp16/bf16 conversions (common/half_types.hpp): known bit
// patterns, round-to-nearest-even ties, NaN and infinity, every 16-bit pattern, the compiler's
// _Float16, and the packed io helpers.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/half_types.hpp"

using namespace wyjit::test;

namespace {

float bits_to_float(std::uint32_t u) {
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace

TEST_CASE("f16 conversion matches known bit patterns", "[reference][half]") {
  CHECK(float_to_f16_bits(1.0f) == 0x3C00);
  CHECK(float_to_f16_bits(-2.5f) == 0xC100);
  CHECK(float_to_f16_bits(65504.0f) == 0x7BFF);
  CHECK(float_to_f16_bits(65519.0f) == 0x7BFF);  // below the midpoint to 65536
  CHECK(float_to_f16_bits(65520.0f) == 0x7C00);  // midpoint: ties to even = inf
  CHECK(float_to_f16_bits(1e6f) == 0x7C00);
  CHECK(float_to_f16_bits(-1e6f) == 0xFC00);
  CHECK(float_to_f16_bits(1.0f / 3.0f) == 0x3555);
  CHECK(float_to_f16_bits(0x1.0p-24f) == 0x0001);    // smallest subnormal
  CHECK(float_to_f16_bits(0x1.0p-25f) == 0x0000);    // half of it: ties to even (0)
  CHECK(float_to_f16_bits(0x1.8p-25f) == 0x0001);    // above half: rounds up
  CHECK(float_to_f16_bits(0x1.8p-24f) == 0x0002);    // 1.5 ulp: ties to even (2)
  CHECK(float_to_f16_bits(0x1.ffcp-15f) == 0x0400);  // 1023.5 ulp: ties to even = smallest normal
  CHECK(float_to_f16_bits(0x1.ff4p-15f) == 0x03FE);  // 1022.5 ulp: ties to even (1022)
  CHECK(float_to_f16_bits(1023.0f * 0x1.0p-24f) == 0x03FF);
  CHECK(float_to_f16_bits(0x1.0p-14f) == 0x0400);
  CHECK(float_to_f16_bits(1.0f + 0x1.0p-11f) == 0x3C00);      // tie, even is 1.0
  CHECK(float_to_f16_bits(1.0f + 3 * 0x1.0p-11f) == 0x3C02);  // tie, even is up
  CHECK(float_to_f16_bits(-0.0f) == 0x8000);
  CHECK(float_to_f16_bits(1e-10f) == 0x0000);
  CHECK(float_to_f16_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
  const std::uint16_t nan = float_to_f16_bits(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x03FF) != 0);
  CHECK(std::isnan(f16_bits_to_float(float_to_f16_bits(bits_to_float(0x7F800001u)))));

  CHECK(f16_bits_to_float(0x3C00) == 1.0f);
  CHECK(f16_bits_to_float(0xC100) == -2.5f);
  CHECK(f16_bits_to_float(0x7BFF) == 65504.0f);
  CHECK(f16_bits_to_float(0x0001) == 0x1.0p-24f);
  CHECK(f16_bits_to_float(0x03FF) == 1023.0f * 0x1.0p-24f);
  CHECK(f16_bits_to_float(0x3555) == 0.333251953125f);
  CHECK(std::isinf(f16_bits_to_float(0xFC00)));
  CHECK(std::isnan(f16_bits_to_float(0x7E00)));
}

TEST_CASE("bf16 conversion matches known bit patterns", "[reference][half]") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3F80);
  CHECK(float_to_bf16_bits(-2.5f) == 0xC020);
  CHECK(float_to_bf16_bits(65504.0f) == 0x4780);  // rounds up to 65536
  CHECK(float_to_bf16_bits(1.0f / 3.0f) == 0x3EAB);
  CHECK(float_to_bf16_bits(1.0f + 0x1.0p-8f) == 0x3F80);                   // tie, even is 1.0
  CHECK(float_to_bf16_bits(1.0f + 3 * 0x1.0p-8f) == 0x3F82);               // tie, even is up
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // overflow to inf
  CHECK(float_to_bf16_bits(-std::numeric_limits<float>::infinity()) == 0xFF80);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
  // A NaN whose payload sits only in the low bits must not truncate to inf.
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(bits_to_float(0x7F800001u)))));
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(bits_to_float(0xFFFFFFFFu)))));
  CHECK(bf16_bits_to_float(0x3F80) == 1.0f);
  CHECK(bf16_bits_to_float(0xC020) == -2.5f);
}

TEST_CASE("every 16-bit pattern round-trips", "[reference][half]") {
  for (std::uint32_t u = 0; u < 0x10000u; ++u) {
    const auto h = static_cast<std::uint16_t>(u);
    const float f16 = f16_bits_to_float(h), b16 = bf16_bits_to_float(h);
    if (std::isnan(f16)) {
      REQUIRE(std::isnan(f16_bits_to_float(float_to_f16_bits(f16))));
    } else {
      REQUIRE(float_to_f16_bits(f16) == h);
    }
    if (std::isnan(b16)) {
      REQUIRE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(b16))));
    } else {
      REQUIRE(float_to_bf16_bits(b16) == h);
    }
  }
}

#if defined(__FLT16_MAX__)
TEST_CASE("f16 conversion agrees with the compiler's _Float16", "[reference][half]") {
  std::mt19937 gen(7);
  for (int n = 0; n < 200000; ++n) {
    // Random bit patterns concentrated on the binary16 range (exponents 100..145).
    std::uint32_t u = static_cast<std::uint32_t>(gen());
    u = (u & 0x807FFFFFu) | ((100u + (u >> 23) % 46u) << 23);
    const float x = bits_to_float(u);
    const _Float16 h = static_cast<_Float16>(x);
    std::uint16_t hb = 0;
    std::memcpy(&hb, &h, 2);
    REQUIRE(float_to_f16_bits(x) == hb);
  }
}
#endif

TEST_CASE("store_io / load_io / pack_io", "[reference][half]") {
  for (IoType t : {IoType::f32, IoType::f16, IoType::bf16}) {
    const std::vector<float> x{1.0f, -2.5f, 1.0f / 3.0f, 1e-3f};
    const auto bytes = pack_io(x, t);
    REQUIRE(bytes.size() == x.size() * io_size(t));
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(load_io(bytes.data(), i, t) == round_to_io(x[i], t));
    }
    CHECK(unpack_io(bytes.data(), x.size(), t)[2] == round_to_io(x[2], t));
  }
  std::uint16_t buf[2] = {0, 0};
  store_io(buf, 1, 1.0f, IoType::f16);
  CHECK(buf[0] == 0);
  CHECK(buf[1] == 0x3C00);
  CHECK(io_size(IoType::f32) == 4);
  CHECK(round_to_io(1.0f / 3.0f, IoType::f32) == 1.0f / 3.0f);
}
