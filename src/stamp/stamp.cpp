// SPDX-License-Identifier: Apache-2.0
#include "stamp/stamp.hpp"

#include <algorithm>
#include <set>

#include "spec/family.hpp"
#include "stamp/embedded_sources.hpp"
#include "wyjit/error.hpp"

namespace wyjit::detail {

namespace {

std::string_view embedded_text(std::string_view name) {
  for (const EmbeddedFile& f : embedded_kernel_sources()) {
    if (f.name == name) return f.text;
  }
  throw Error(ErrorCode::internal,
              "kernel_src file '" + std::string(name) + "' is not embedded in this build");
}

void append_inlined(std::string_view name, std::set<std::string, std::less<>>& seen,
                    std::string& out) {
  if (!seen.insert(std::string(name)).second) return;
  const std::string_view text = embedded_text(name);
  out += "// ---- kernel_src/" + std::string(name) + "\n";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    constexpr std::string_view kInclude = "#include \"";
    if (line.starts_with(kInclude) && line.ends_with("\"")) {
      append_inlined(line.substr(kInclude.size(), line.size() - kInclude.size() - 1), seen, out);
    } else if (line != "#pragma once") {
      out.append(line);
      out += '\n';
    }
    pos = end + 1;
  }
}

}  // namespace

std::string inline_kernel_file(std::string_view file) {
  std::set<std::string, std::less<>> seen;
  std::string out;
  append_inlined(file, seen, out);
  return out;
}

StampedSource stamp(const KernelSpec& spec) {
  validate_spec(spec);
  const Family& family = family_of(spec);
  const std::string variant = format_spec(spec);
  StampedSource result;
  result.program_name = variant + ".cu";
  result.text =
      "// wyjit stamped source for " + variant + "\n" + inline_kernel_file(family.kernel_file());
  // NOTE: the only per-variant text: one explicit instantiation per kernel, in role order. Two
  // roles may name one kernel (gdn_replay's kv layout has one verify form): it is instantiated
  // once, since a second explicit instantiation would not compile.
  result.text += "\n// ---- variant\n";
  for (std::size_t role = 0; role < family.roles().size(); ++role) {
    std::string name = family.name_expression(spec, role);
    if (std::find(result.name_expressions.begin(), result.name_expressions.end(), name) ==
        result.name_expressions.end()) {
      result.text += "template __global__ void " + name + "(const " +
                     std::string(family.params_type()) + ");\n";
    }
    result.name_expressions.push_back(std::move(name));
  }
  return result;
}

}  // namespace wyjit::detail
