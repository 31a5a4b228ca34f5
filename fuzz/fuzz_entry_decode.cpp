// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the cache entry decoder (format v2, src/cache/entry_file.cpp), which reads
// files that other processes and machines write into shared and read-only roots.
//
// Input: the bytes of an entry file (the corpus starts from real entries of every family and
// several targets). Each input is decoded twice: as given, and with its trailing checksum
// recomputed, so that mutations of the header and payload also reach the checks behind the
// checksum (libFuzzer cannot forge a SHA-256). Properties:
//   - decoding returns ok or corrupt with a reason, never throws (nor uses its backstop);
//   - what decodes has a checksum equal to the SHA-256 of everything before it, a header whose
//     key_sha256 is the SHA-256 of its key text, and fields, roles and payload that an
//     independent reading of the layout finds at their documented places;
//   - what decodes is accepted against its own key text and refused against any other;
//   - what decodes encodes again and decodes to the same entry.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/entry_file.hpp"
#include "cache/sha256.hpp"
#include "fuzz_support.hpp"

namespace {

using wyjit::detail::CacheEntry;
using wyjit::detail::EntryRead;
using Json = nlohmann::json;

constexpr std::size_t kPreamble = 16;
constexpr std::size_t kChecksum = 32;

std::uint32_t u32_at(std::span<const std::uint8_t> b, std::size_t at) {
  return std::uint32_t{b[at]} | std::uint32_t{b[at + 1]} << 8 | std::uint32_t{b[at + 2]} << 16 |
         std::uint32_t{b[at + 3]} << 24;
}

bool same_entry(const CacheEntry& a, const CacheEntry& b) {
  return a.key_text == b.key_text && a.variant == b.variant && a.target == b.target &&
         a.roles == b.roles && a.payload == b.payload;
}

// The header field `name` as a string ("" when it is not one).
std::string text_of(const Json& header, const char* name) {
  const auto it = header.find(name);
  return it != header.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void check_read(std::span<const std::uint8_t> bytes, const EntryRead& read) {
  if (read.status != EntryRead::Status::ok) {
    WYJIT_FUZZ_REQUIRE(read.status == EntryRead::Status::corrupt, "bytes are ok or corrupt");
    WYJIT_FUZZ_REQUIRE(!read.reason.empty(), "a corrupt entry says why");
    // NOTE: the decoder validates before every access; its catch-all is only a backstop.
    WYJIT_FUZZ_REQUIRE(!read.reason.starts_with("undecodable"), read.reason);
    return;
  }
  const CacheEntry& e = read.entry;

  // The layout, read independently of the decoder.
  WYJIT_FUZZ_REQUIRE(bytes.size() >= kPreamble + kChecksum, "long enough");
  WYJIT_FUZZ_REQUIRE(std::memcmp(bytes.data(), "WYJITCE\0", 8) == 0, "magic");
  WYJIT_FUZZ_REQUIRE(u32_at(bytes, 8) == wyjit::detail::kEntryFormatVersion, "version");
  const std::size_t header_size = u32_at(bytes, 12);
  WYJIT_FUZZ_REQUIRE(kPreamble + header_size + e.payload.size() + kChecksum == bytes.size(),
                     "preamble, header, payload and checksum make up the file");
  const wyjit::detail::Digest digest =
      wyjit::detail::sha256(bytes.data(), bytes.size() - kChecksum);
  WYJIT_FUZZ_REQUIRE(std::equal(digest.begin(), digest.end(), bytes.end() - kChecksum),
                     "the checksum is the SHA-256 of everything before it");
  const auto header_bytes = bytes.subspan(kPreamble, header_size);
  const Json header = Json::parse(header_bytes.begin(), header_bytes.end(), nullptr, false);
  WYJIT_FUZZ_REQUIRE(header.is_object(), "the header is a JSON object");
  WYJIT_FUZZ_REQUIRE(text_of(header, "key_sha256") == wyjit::detail::sha256_hex(e.key_text),
                     "key_sha256 is the SHA-256 of the key text");
  WYJIT_FUZZ_REQUIRE(text_of(header, "key_text") == e.key_text, "key text");
  WYJIT_FUZZ_REQUIRE(text_of(header, "variant") == e.variant, "variant");
  WYJIT_FUZZ_REQUIRE(text_of(header, "target") == e.target, "target");
  WYJIT_FUZZ_REQUIRE(header.at("payload_size").get<std::uint64_t>() == e.payload.size(),
                     "payload size");
  const Json& roles = header.at("roles");
  WYJIT_FUZZ_REQUIRE(roles.size() == e.roles.size(), "every role");
  for (std::size_t i = 0; i < e.roles.size(); ++i) {
    WYJIT_FUZZ_REQUIRE(roles[i][0] == e.roles[i].role && roles[i][1] == e.roles[i].lowered_name,
                       "role " + std::to_string(i));
  }
  WYJIT_FUZZ_REQUIRE(
      std::equal(e.payload.begin(), e.payload.end(),
                 bytes.begin() + static_cast<std::ptrdiff_t>(kPreamble + header_size)),
      "the payload follows the header");

  // A lookup compares key texts: exactly this one is a hit, any other a miss.
  const EntryRead same = wyjit::detail::decode_entry(bytes, e.key_text);
  WYJIT_FUZZ_REQUIRE(same.status == EntryRead::Status::ok && same_entry(same.entry, e),
                     same.reason);
  const EntryRead other = wyjit::detail::decode_entry(bytes, e.key_text + "\n");
  WYJIT_FUZZ_REQUIRE(other.status == EntryRead::Status::corrupt && other.reason == "key mismatch",
                     other.reason);

  // NOTE: encode_entry throws on text JSON cannot hold; what the decoder let in must not be such.
  const std::vector<std::uint8_t> again = wyjit::detail::encode_entry(e);
  const EntryRead reread = wyjit::detail::decode_entry(again, e.key_text);
  WYJIT_FUZZ_REQUIRE(reread.status == EntryRead::Status::ok && same_entry(reread.entry, e),
                     reread.reason);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  check_read(bytes, wyjit::detail::decode_entry(bytes, std::nullopt));
  if (size < kChecksum) return 0;
  std::vector<std::uint8_t> resealed(bytes.begin(), bytes.end());
  const wyjit::detail::Digest digest = wyjit::detail::sha256(resealed.data(), size - kChecksum);
  std::copy(digest.begin(), digest.end(), resealed.end() - kChecksum);
  check_read(resealed, wyjit::detail::decode_entry(resealed, std::nullopt));
  return 0;
}
