// SPDX-License-Identifier: Apache-2.0
// Canonical names of specs and their parts: format_spec / parse_spec.
#include <charconv>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "wyjit/error.hpp"
#include "wyjit/spec.hpp"

namespace wyjit {

const char* to_string(Family f) noexcept {
  switch (f) {
    case Family::gdn_verify:
      return "gdn_verify";
    case Family::conv1d_update:
      return "conv1d_update";
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

const char* to_string(Rollback r) noexcept {
  switch (r) {
    case Rollback::intermediate:
      return "intermediate";
    case Rollback::window:
      return "window";
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

namespace {

std::string format_gdn_verify(const KernelSpec& s) {
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

std::string format_conv1d_update(const KernelSpec& s) {
  std::string name = std::string(to_string(s.family)) + ".k" + std::to_string(s.k) + ".io_" +
                     to_string(s.io) + ".w" + std::to_string(s.width) + ".wt_" +
                     to_string(s.weight) + "." + to_string(s.rollback) + "." +
                     to_string(s.addressing);
  if (s.bias) name += ".bias";
  if (s.silu) name += ".silu";
  return name;
}

}  // namespace

std::string format_spec(const KernelSpec& s) {
  switch (s.family) {
    case Family::gdn_verify:
      return format_gdn_verify(s);
    case Family::conv1d_update:
      return format_conv1d_update(s);
  }
  return "?";
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

constexpr Family kFamilies[] = {Family::gdn_verify, Family::conv1d_update};
constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
constexpr Addressing kAddressings[] = {Addressing::strided, Addressing::table, Addressing::slot};
constexpr Layout kLayouts[] = {Layout::vk, Layout::kv};
constexpr Rollback kRollbacks[] = {Rollback::intermediate, Rollback::window};

using Parts = std::vector<std::string_view>;

std::string_view part(const Parts& parts, std::size_t i) {
  return i < parts.size() ? parts[i] : std::string_view();
}

void parse_dtype(std::string_view name, std::string_view text, std::string_view prefix,
                 const char* field, const char* allowed, DType& out) {
  if (!text.starts_with(prefix) || !parse_enum(text.substr(prefix.size()), kDTypes, out)) {
    reject(name, field, text, allowed);
  }
}

// Options after `next`, each at most once, in the order of `options`.
void parse_options(std::string_view name, const Parts& parts, std::size_t next,
                   std::initializer_list<std::pair<std::string_view, bool*>> options,
                   std::string_view allowed) {
  for (const auto& [option, flag] : options) {
    if (next < parts.size() && parts[next] == option) {
      *flag = true;
      ++next;
    }
  }
  if (next < parts.size()) reject(name, "option", parts[next], allowed);
}

// gdn_verify.kK.io_T.st_T.addressing.layout.dD[.l2norm][.gating]
void parse_gdn_verify(std::string_view name, const Parts& parts, KernelSpec& s) {
  parse_dtype(name, part(parts, 3), "st_", "state dtype", "st_f32, st_f16, st_bf16", s.state);
  if (!parse_enum(part(parts, 4), kAddressings, s.addressing)) {
    reject(name, "addressing", part(parts, 4), "strided, table, slot");
  }
  if (!parse_enum(part(parts, 5), kLayouts, s.layout)) {
    reject(name, "layout", part(parts, 5), "vk, kv");
  }
  std::size_t next = 7;
  if (parse_prefixed_int(part(parts, 6), "d", s.dk)) {
    s.dv = s.dk;
  } else if (parse_prefixed_int(part(parts, 6), "dk", s.dk) &&
             parse_prefixed_int(part(parts, 7), "dv", s.dv)) {
    next = 8;
  } else {
    reject(name, "head dims", part(parts, 6), "dD (dk = dv = D) or dkA.dvB");
  }
  parse_options(name, parts, next, {{"l2norm", &s.l2norm_qk}, {"gating", &s.fused_gating}},
                "l2norm, gating (at most once each, in that order)");
}

// conv1d_update.kK.io_T.wW.wt_T.rollback.addressing[.bias][.silu]
void parse_conv1d_update(std::string_view name, const Parts& parts, KernelSpec& s) {
  if (!parse_prefixed_int(part(parts, 3), "w", s.width)) {
    reject(name, "width", part(parts, 3), "w2..w8");
  }
  parse_dtype(name, part(parts, 4), "wt_", "weight dtype", "wt_f32, wt_f16, wt_bf16", s.weight);
  if (!parse_enum(part(parts, 5), kRollbacks, s.rollback)) {
    reject(name, "rollback", part(parts, 5), "intermediate, window");
  }
  if (!parse_enum(part(parts, 6), kAddressings, s.addressing)) {
    reject(name, "addressing", part(parts, 6), "strided, table, slot");
  }
  parse_options(name, parts, 7, {{"bias", &s.bias}, {"silu", &s.silu}},
                "bias, silu (at most once each, in that order)");
}

}  // namespace

KernelSpec parse_spec(std::string_view name) {
  const Parts parts = split_dots(name);
  KernelSpec s;
  if (!parse_enum(part(parts, 0), kFamilies, s.family)) {
    reject(name, "family", part(parts, 0), "gdn_verify, conv1d_update");
  }
  if (!parse_prefixed_int(part(parts, 1), "k", s.k)) reject(name, "K", part(parts, 1), "k1..k32");
  parse_dtype(name, part(parts, 2), "io_", "io dtype", "io_f32, io_f16, io_bf16", s.io);
  switch (s.family) {
    case Family::gdn_verify:
      parse_gdn_verify(name, parts, s);
      break;
    case Family::conv1d_update:
      parse_conv1d_update(name, parts, s);
      break;
  }
  validate_spec(s);
  // NOTE: a name that parses but is not canonical (e.g. "dk128.dv128") would give two names
  // for one variant; refuse it so names are unique.
  if (format_spec(s) != name)
    reject(name, "spelling", name, "the canonical name " + format_spec(s));
  return s;
}

}  // namespace wyjit
