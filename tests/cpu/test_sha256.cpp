// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cache/sha256.hpp"

using wyjit::detail::Digest;
using wyjit::detail::Sha256;
using wyjit::detail::sha256;
using wyjit::detail::sha256_hex;
using wyjit::detail::to_hex;

TEST_CASE("sha256 matches the NIST FIPS 180-4 examples", "[cache]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(
      sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                 "klmnopqrlmnopqrsmnopqrstnopqrstu") ==
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 pads correctly around the block boundary", "[cache]") {
  // Lengths where the length field just fits, just does not fit, or fills a block.
  const std::vector<std::pair<std::size_t, const char*>> cases = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [length, expected] : cases) {
    INFO("length " << length);
    CHECK(sha256_hex(std::string(length, 'a')) == expected);
  }
}

TEST_CASE("sha256 incremental updates in odd-sized pieces equal one shot", "[cache]") {
  std::vector<std::uint8_t> message(3001);
  std::uint32_t state = 12345;
  for (auto& byte : message) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<std::uint8_t>(state >> 24);
  }
  const Digest expected = sha256(message.data(), message.size());

  for (const std::size_t piece : {1u, 3u, 7u, 13u, 55u, 63u, 64u, 65u, 127u, 1000u, 4096u}) {
    INFO("piece size " << piece);
    Sha256 hasher;
    for (std::size_t offset = 0; offset < message.size(); offset += piece) {
      hasher.update(message.data() + offset, std::min(piece, message.size() - offset));
    }
    CHECK(hasher.finish() == expected);
  }

  // Irregular pieces, zero-length updates included.
  Sha256 hasher;
  std::size_t offset = 0;
  for (std::size_t i = 0; offset < message.size(); ++i) {
    const std::size_t piece = std::min((i * 37 + 11) % 150, message.size() - offset);
    hasher.update(message.data() + offset, piece);
    offset += piece;
  }
  CHECK(hasher.finish() == expected);
}

TEST_CASE("sha256 finish resets the hasher and string_view update is byte-wise", "[cache]") {
  Sha256 hasher;
  hasher.update(std::string_view("ab"));
  hasher.update("c", 1);
  CHECK(to_hex(hasher.finish()) == sha256_hex("abc"));
  hasher.update(std::string_view("abc"));
  CHECK(to_hex(hasher.finish()) == sha256_hex("abc"));
  CHECK(to_hex(hasher.finish()) == sha256_hex(""));
  hasher.update(nullptr, 0);
  CHECK(to_hex(hasher.finish()) == sha256_hex(""));
}

TEST_CASE("to_hex writes lowercase pairs", "[cache]") {
  const std::vector<std::uint8_t> bytes = {0x00, 0x0f, 0xa0, 0xff, 0x5c};
  CHECK(to_hex(bytes) == "000fa0ff5c");
  CHECK(to_hex({}) == "");
}
