// SPDX-License-Identifier: Apache-2.0
/// @file half_types.hpp
/// @brief Bit-exact host conversions between fp32 and the 16-bit io dtypes (fp16, bf16),
///        plus typed load/store helpers for host arrays of an io dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace wyjit::test {

/// The element type of q, k, v, a, b and the output as the GPU reads or writes it.
enum class IoType { f32, f16, bf16 };

/// fp32 -> bf16 bits, round to nearest even; overflow rounds to inf; NaN stays a (quiet) NaN.
std::uint16_t float_to_bf16_bits(float x);
/// bf16 bits -> fp32 (exact).
float bf16_bits_to_float(std::uint16_t bits);
/// fp32 -> IEEE binary16 bits, round to nearest even, with subnormals; overflow gives inf;
/// NaN stays a (quiet) NaN.
std::uint16_t float_to_f16_bits(float x);
/// IEEE binary16 bits -> fp32 (exact, subnormals included).
float f16_bits_to_float(std::uint16_t bits);

/// Size in bytes of one element of type `t`.
std::size_t io_size(IoType t);
/// `x` rounded through type `t` and back to fp32 (identity for f32).
float round_to_io(float x, IoType t);

/// Stores `x`, rounded to `t`, as element `index` of the array of type `t` at `dst`.
void store_io(void* dst, std::size_t index, float x, IoType t);
/// Loads element `index` of the array of type `t` at `src`, widened to fp32.
float load_io(const void* src, std::size_t index, IoType t);

/// Packs `values` into a byte buffer holding an array of type `t` (values.size() * io_size(t)
/// bytes).
std::vector<std::uint8_t> pack_io(std::span<const float> values, IoType t);
/// Unpacks `count` elements of type `t` at `src` into fp32.
std::vector<float> unpack_io(const void* src, std::size_t count, IoType t);

}  // namespace wyjit::test
