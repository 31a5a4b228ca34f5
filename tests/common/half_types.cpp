// SPDX-License-Identifier: Apache-2.0
#include "common/half_types.hpp"

#include <cstring>
#include <stdexcept>

namespace wyjit::test {
namespace {

std::uint32_t float_bits(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float bits_float(std::uint32_t u) {
  float x = 0;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace

std::uint16_t float_to_bf16_bits(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) {
    // NaN: keep sign and high payload, force the quiet bit so truncation cannot make it inf.
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  }
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7FFFu + lsb) >> 16);  // carry into exponent gives inf
}

float bf16_bits_to_float(std::uint16_t bits) {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_f16_bits(float x) {
  const std::uint32_t u = float_bits(x);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t exp = (u >> 23) & 0xFFu;
  const std::uint32_t mant = u & 0x007FFFFFu;

  if (exp == 0xFFu) {  // inf or NaN
    if (mant == 0) return static_cast<std::uint16_t>(sign | 0x7C00u);
    return static_cast<std::uint16_t>(sign | 0x7E00u | (mant >> 13));
  }
  const int e = static_cast<int>(exp) - 127 + 15;  // biased binary16 exponent
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (e <= 0) {
    // Subnormal result (or zero). Values below 2^-25 round to zero; exactly 2^-25 ties to 0.
    if (e < -10) return static_cast<std::uint16_t>(sign);
    const std::uint32_t m = mant | 0x00800000u;            // 24-bit significand
    const unsigned shift = static_cast<unsigned>(14 - e);  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u) != 0)) ++r;  // may become 0x400: smallest normal
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0)) ++h;  // carry may give inf: correct
  return static_cast<std::uint16_t>(sign | h);
}

float f16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1Fu;
  std::uint32_t mant = bits & 0x03FFu;
  if (exp == 0x1Fu) return bits_float(sign | 0x7F800000u | (mant << 13));
  if (exp != 0) return bits_float(sign | ((exp - 15u + 127u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  // Subnormal: normalise the significand.
  std::uint32_t e = 127u - 15u + 1u;
  while ((mant & 0x0400u) == 0) {
    mant <<= 1;
    --e;
  }
  return bits_float(sign | (e << 23) | ((mant & 0x03FFu) << 13));
}

std::size_t io_size(IoType t) {
  switch (t) {
    case IoType::f32:
      return 4;
    case IoType::f16:
    case IoType::bf16:
      return 2;
  }
  throw std::invalid_argument("io_size: unknown IoType");
}

float round_to_io(float x, IoType t) {
  switch (t) {
    case IoType::f32:
      return x;
    case IoType::f16:
      return f16_bits_to_float(float_to_f16_bits(x));
    case IoType::bf16:
      return bf16_bits_to_float(float_to_bf16_bits(x));
  }
  throw std::invalid_argument("round_to_io: unknown IoType");
}

void store_io(void* dst, std::size_t index, float x, IoType t) {
  auto* p = static_cast<unsigned char*>(dst) + index * io_size(t);
  switch (t) {
    case IoType::f32:
      std::memcpy(p, &x, 4);
      return;
    case IoType::f16: {
      const std::uint16_t h = float_to_f16_bits(x);
      std::memcpy(p, &h, 2);
      return;
    }
    case IoType::bf16: {
      const std::uint16_t h = float_to_bf16_bits(x);
      std::memcpy(p, &h, 2);
      return;
    }
  }
  throw std::invalid_argument("store_io: unknown IoType");
}

float load_io(const void* src, std::size_t index, IoType t) {
  const auto* p = static_cast<const unsigned char*>(src) + index * io_size(t);
  switch (t) {
    case IoType::f32: {
      float x = 0;
      std::memcpy(&x, p, 4);
      return x;
    }
    case IoType::f16:
    case IoType::bf16: {
      std::uint16_t h = 0;
      std::memcpy(&h, p, 2);
      return t == IoType::f16 ? f16_bits_to_float(h) : bf16_bits_to_float(h);
    }
  }
  throw std::invalid_argument("load_io: unknown IoType");
}

std::vector<std::uint8_t> pack_io(std::span<const float> values, IoType t) {
  std::vector<std::uint8_t> out(values.size() * io_size(t));
  for (std::size_t i = 0; i < values.size(); ++i) store_io(out.data(), i, values[i], t);
  return out;
}

std::vector<float> unpack_io(const void* src, std::size_t count, IoType t) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = load_io(src, i, t);
  return out;
}

}  // namespace wyjit::test
