// SPDX-License-Identifier: Apache-2.0
// Canonical names of specs and their parts: format_spec / parse_spec.
#include <charconv>
#include <string>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

const char* to_string(Family f) noexcept {
  switch (f) {
    case Family::gdn_verify:
      return "gdn_verify";
  }
  return "?";
}

const char* to_string(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

const char* to_string(Addressing a) noexcept {
  switch (a) {
    case Addressing::strided:
      return "strided";
    case Addressing::table:
      return "table";
    case Addressing::slot:
      return "slot";
  }
  return "?";
}

const char* to_string(Layout l) noexcept {
  switch (l) {
    case Layout::vk:
      return "vk";
    case Layout::kv:
      return "kv";
  }
  return "?";
}

int dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
  }
  return 0;
}

std::string format_spec(const KernelSpec& s) {
  std::string name = std::string(to_string(s.family)) + ".k" + std::to_string(s.k) + ".io_" +
                     to_string(s.io) + ".st_" + to_string(s.state) + "." + to_string(s.addressing) +
                     "." + to_string(s.layout) + ".";
  if (s.dk == s.dv) {
    name += "d" + std::to_string(s.dk);
  } else {
    name += "dk" + std::to_string(s.dk) + ".dv" + std::to_string(s.dv);
  }
  if (s.l2norm_qk) name += ".l2norm";
  if (s.fused_gating) name += ".gating";
  return name;
}

namespace {

[[noreturn]] void reject(std::string_view name, std::string_view field, std::string_view got,
                         std::string_view allowed) {
  throw Error(ErrorCode::invalid_spec, "invalid variant name '" + std::string(name) +
                                           "': " + std::string(field) + " is '" + std::string(got) +
                                           "', allowed: " + std::string(allowed));
}

std::vector<std::string_view> split_dots(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// Parses the decimal number after `prefix` in `part`; false when the shape does not match.
bool parse_prefixed_int(std::string_view part, std::string_view prefix, int& value) {
  if (!part.starts_with(prefix) || part.size() == prefix.size()) return false;
  const std::string_view digits = part.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return false;  // canonical: no leading zeros
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

template <typename Enum, std::size_t N>
bool parse_enum(std::string_view text, const Enum (&values)[N], Enum& out) {
  for (Enum e : values) {
    if (text == to_string(e)) {
      out = e;
      return true;
    }
  }
  return false;
}

constexpr Family kFamilies[] = {Family::gdn_verify};
constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
constexpr Addressing kAddressings[] = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr Layout kLayouts[] = {Layout::vk, Layout::kv};

}  // namespace

KernelSpec parse_spec(std::string_view name) {
  const std::vector<std::string_view> parts = split_dots(name);
  const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : std::string_view(); };
  KernelSpec s;
  if (!parse_enum(part(0), kFamilies, s.family)) reject(name, "family", part(0), "gdn_verify");
  if (!parse_prefixed_int(part(1), "k", s.k)) reject(name, "K", part(1), "k1..k32");
  if (!part(2).starts_with("io_") || !parse_enum(part(2).substr(3), kDTypes, s.io)) {
    reject(name, "io dtype", part(2), "io_f32, io_f16, io_bf16");
  }
  if (!part(3).starts_with("st_") || !parse_enum(part(3).substr(3), kDTypes, s.state)) {
    reject(name, "state dtype", part(3), "st_f32, st_f16, st_bf16");
  }
  if (!parse_enum(part(4), kAddressings, s.addressing)) {
    reject(name, "addressing", part(4), "strided, table, slot");
  }
  if (!parse_enum(part(5), kLayouts, s.layout)) reject(name, "layout", part(5), "vk, kv");
  std::size_t next = 7;
  if (parse_prefixed_int(part(6), "d", s.dk)) {
    s.dv = s.dk;
  } else if (parse_prefixed_int(part(6), "dk", s.dk) && parse_prefixed_int(part(7), "dv", s.dv)) {
    next = 8;
  } else {
    reject(name, "head dims", part(6), "dD (dk = dv = D) or dkA.dvB");
  }
  // Options, each at most once, in canonical order.
  if (next < parts.size() && parts[next] == "l2norm") {
    s.l2norm_qk = true;
    ++next;
  }
  if (next < parts.size() && parts[next] == "gating") {
    s.fused_gating = true;
    ++next;
  }
  if (next < parts.size()) {
    reject(name, "option", parts[next], "l2norm, gating (at most once each, in that order)");
  }
  validate_spec(s);
  // NOTE: a name that parses but is not canonical (e.g. "dk128.dv128") would give two names
  // for one variant; refuse it so names are unique.
  if (format_spec(s) != name)
    reject(name, "spelling", name, "the canonical name " + format_spec(s));
  return s;
}

}  // namespace wyjit
