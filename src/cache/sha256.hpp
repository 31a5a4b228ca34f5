// SPDX-License-Identifier: Apache-2.0
/// @file sha256.hpp
/// @brief Self-contained SHA-256 (FIPS 180-4) for cache keys and entry checksums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace wyjit::detail {

/// A SHA-256 digest: 32 raw bytes.
using Digest = std::array<std::uint8_t, 32>;

/// Incremental SHA-256: feed bytes with update() in any pieces, then finish() once.
class Sha256 {
 public:
  /// Starts a fresh hash (the FIPS 180-4 initial state). Uses the CPU's SHA instructions
  /// (x86 SHA-NI) when present and `allow_hardware`; the digest is the same either way.
  explicit Sha256(bool allow_hardware = true);
  /// Appends `size` bytes at `data` to the message; `data` may be null when `size` is 0.
  void update(const void* data, std::size_t size);
  /// Appends the bytes of `text` to the message.
  void update(std::string_view text);
  /// Pads, returns the digest, and resets to a fresh hash.
  Digest finish();

 private:
  using CompressFn = void (*)(std::uint32_t* state, const std::uint8_t* blocks, std::size_t count);

  CompressFn compress_ = nullptr;
  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

/// True when Sha256 uses the CPU's SHA instructions on this machine.
bool sha256_hardware_available() noexcept;

/// One-shot SHA-256 of `size` bytes at `data`.
Digest sha256(const void* data, std::size_t size);

/// Lowercase hexadecimal text of `bytes` (two characters per byte).
std::string to_hex(std::span<const std::uint8_t> bytes);

/// Lowercase hexadecimal SHA-256 of `text` (64 characters).
std::string sha256_hex(std::string_view text);

}  // namespace wyjit::detail
