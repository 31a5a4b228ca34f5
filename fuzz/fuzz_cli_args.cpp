// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the `wyjit` CLI's argument parsing (tools/cli/): the argument reader, byte
// sizes and `precompile`'s command line with its selectors.
//
// Input: one mode byte, then
//   0  `precompile` arguments, separated by NUL bytes (`--arch`, `--set FIELD=LIST`, `--FIELD
//      LIST`, ranges such as `1-17`, `--family`, `-j4`, ...): refused with a UsageError of
//      `precompile`, or options whose targets, families and selectors are each valid, and whose
//      matrix holds only valid variants, each once, of those families, with the selected values
//   1  a byte size (`512M`, `1G`, `1073741824`): refused with a UsageError, or the number times
//      a power of 1024, the same whatever the case of the suffix
//   2  arguments, separated by NUL bytes, walked with the argument reader the way `wyjit
//      compile` reads its own: every step consumes at least one argument or throws a UsageError
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_env.hpp"
#include "cli/cli.hpp"
#include "cli/precompile_matrix.hpp"
#include "fuzz_support.hpp"
#include "spec/family.hpp"
#include "spec/field_values.hpp"

namespace {

using wyjit::KernelSpec;
using wyjit::cli::UsageError;
using wyjit::detail::Family;
using wyjit::detail::FieldValue;

// NOTE: a matrix is built (and every variant of it checked) only up to this many variants, so
// that one input stays fast; `--set k=1-32 --io f32,f16,bf16 ...` would otherwise name 10^5.
constexpr std::size_t kMaxMatrix = 2048;

// The values selector `s` gives field `i` of `family`, as precompile reads them.
std::vector<FieldValue> selector_values(const Family& family, std::size_t i,
                                        const wyjit::cli::FieldSelector& s) {
  return wyjit::detail::parse_value_list(family, i, s.values.empty() ? "on" : s.values);
}

// Per family of `opt`, per field, the values the matrix takes (the last selector of a field wins).
std::vector<std::vector<std::vector<FieldValue>>> matrix_values(
    const wyjit::cli::PrecompileOptions& opt) {
  std::vector<std::vector<std::vector<FieldValue>>> out;
  for (const std::string& name : opt.families) {
    const Family& family = *wyjit::detail::find_family(name);
    std::vector<std::vector<FieldValue>> values;
    for (std::size_t i = 0; i < family.fields().size(); ++i) {
      values.push_back(wyjit::detail::standard_values(family, i));
    }
    for (const wyjit::cli::FieldSelector& s : opt.selectors) {
      const int i = wyjit::detail::field_index(family, s.field);
      if (i >= 0) {
        values[static_cast<std::size_t>(i)] =
            selector_values(family, static_cast<std::size_t>(i), s);
      }
    }
    out.push_back(std::move(values));
  }
  return out;
}

void check_matrix(const wyjit::cli::PrecompileOptions& opt) {
  const auto values = matrix_values(opt);
  std::size_t total = 0;
  for (const auto& family : values) {
    std::size_t n = 1;
    for (const auto& field : family) n = std::min(n * field.size(), kMaxMatrix + 1);
    total += n;
  }
  if (total > kMaxMatrix) return;
  const std::vector<KernelSpec> specs = wyjit::cli::selected_specs(opt);
  std::set<KernelSpec> seen;
  for (const KernelSpec& spec : specs) {
    wyjit::validate_spec(spec);
    const std::string name = wyjit::format_spec(spec);
    WYJIT_FUZZ_REQUIRE(seen.insert(spec).second, name + " is selected once");
    WYJIT_FUZZ_REQUIRE(wyjit::parse_spec(name) == spec, name);
    const auto at = std::find(opt.families.begin(), opt.families.end(), wyjit::family_name(spec));
    WYJIT_FUZZ_REQUIRE(at != opt.families.end(), name + " is of a selected family");
    const auto& fields = values[static_cast<std::size_t>(at - opt.families.begin())];
    const Family& family = wyjit::detail::family_of(spec);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const bool listed = std::any_of(fields[i].begin(), fields[i].end(), [&](const FieldValue& v) {
        const int want =
            v.same_as >= 0 ? family.get(spec, static_cast<std::size_t>(v.same_as)) : v.value;
        return family.get(spec, i) == want;
      });
      WYJIT_FUZZ_REQUIRE(listed, name + ": field " + family.fields()[i].name);
    }
  }
}

void check_precompile(const std::vector<std::string>& args) {
  wyjit::cli::PrecompileOptions opt;
  try {
    opt = wyjit::cli::parse_precompile_options(args);
  } catch (const UsageError& e) {
    WYJIT_FUZZ_REQUIRE(e.command() == "precompile" && *e.what() != '\0', e.what());
    return;
  }
  WYJIT_FUZZ_REQUIRE(!opt.targets.empty(), "--arch is required");
  for (std::size_t i = 0; i < opt.targets.size(); ++i) {
    const std::string name = opt.targets[i].name();
    WYJIT_FUZZ_REQUIRE(wyjit::Target::parse(name) == opt.targets[i], name);
    WYJIT_FUZZ_REQUIRE(std::count(opt.targets.begin(), opt.targets.end(), opt.targets[i]) == 1,
                       name + " once");
  }
  WYJIT_FUZZ_REQUIRE(opt.jobs >= 1 && opt.jobs <= 1024, std::to_string(opt.jobs));
  if (opt.all) {
    WYJIT_FUZZ_REQUIRE(opt.selectors.empty() && opt.families.empty(), "--all stands alone");
    return;
  }
  WYJIT_FUZZ_REQUIRE(!opt.families.empty(), "some family is built");
  for (const std::string& name : opt.families) {
    WYJIT_FUZZ_REQUIRE(wyjit::detail::find_family(name) != nullptr, name);
    WYJIT_FUZZ_REQUIRE(std::count(opt.families.begin(), opt.families.end(), name) == 1, name);
  }
  for (const wyjit::cli::FieldSelector& s : opt.selectors) {
    const bool taken = std::any_of(opt.families.begin(), opt.families.end(), [&](const auto& f) {
      return wyjit::detail::field_index(*wyjit::detail::find_family(f), s.field) >= 0;
    });
    WYJIT_FUZZ_REQUIRE(taken, s.option + ": a built family has the field");
  }
  check_matrix(opt);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

void check_bytes(const std::string& text) {
  std::uint64_t bytes = 0;
  try {
    bytes = wyjit::cli::parse_bytes("prune", "--max-bytes", text);
  } catch (const UsageError& e) {
    WYJIT_FUZZ_REQUIRE(e.command() == "prune", e.what());
    WYJIT_FUZZ_REQUIRE(!wyjit::detail::parse_byte_size(lower(text)), "case does not matter");
    return;
  }
  WYJIT_FUZZ_REQUIRE(wyjit::detail::parse_byte_size(lower(text)) == bytes, "case does not matter");
  // The number in front, times a power of 1024.
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  WYJIT_FUZZ_REQUIRE(ec == std::errc() && end != text.data(), text);
  bool power = false;
  for (int shift = 0; shift <= 40 && !power; shift += 10) {
    power = number <= (bytes >> shift) && (number << shift) == bytes;
  }
  WYJIT_FUZZ_REQUIRE(power, text + " -> " + std::to_string(bytes));
  WYJIT_FUZZ_REQUIRE(wyjit::detail::parse_byte_size(std::to_string(bytes)) == bytes, text);
}

// `wyjit compile`'s reading: VARIANT --arch A [--cache-dir DIR] [--save-source] [-j N].
void check_reader(const std::vector<std::string>& args) {
  wyjit::cli::ArgReader reader("compile", args);
  std::string value;
  std::size_t left = args.size();
  try {
    while (!reader.done()) {
      if (reader.flag("--save-source")) {
        --left;
      } else if (reader.option("--arch", value) || reader.option("--cache-dir", value) ||
                 reader.option("--jobs", value, "-j")) {
        const std::string& arg = args[args.size() - left];
        const bool glued =
            arg != "--arch" && arg != "--cache-dir" && arg != "--jobs" && arg != "-j";
        WYJIT_FUZZ_REQUIRE(glued || left >= 2, arg + ": a value follows");
        WYJIT_FUZZ_REQUIRE(!glued || arg.ends_with(value), arg + ": its glued value");
        left -= glued ? 1 : 2;
      } else {
        const std::string arg = reader.positional();
        WYJIT_FUZZ_REQUIRE(arg == args[args.size() - left], arg);
        --left;
      }
    }
  } catch (const UsageError& e) {
    WYJIT_FUZZ_REQUIRE(e.command() == "compile" && *e.what() != '\0', e.what());
    return;
  }
  WYJIT_FUZZ_REQUIRE(left == 0, "every argument read once");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = wyjit::fuzz::as_text({data + 1, size - 1});
  switch (data[0] % 3) {
    case 0:
      check_precompile(rest.empty() ? std::vector<std::string>{}
                                    : wyjit::fuzz::split_at(rest, '\0'));
      break;
    case 1:
      check_bytes(std::string(rest));
      break;
    default:
      check_reader(rest.empty() ? std::vector<std::string>{} : wyjit::fuzz::split_at(rest, '\0'));
      break;
  }
  return 0;
}
