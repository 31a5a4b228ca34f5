// SPDX-License-Identifier: Apache-2.0
#include "stamp/stamp.hpp"

#include <set>

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

const char* kernel_type(DType t) {
  switch (t) {
    case DType::f32:
      return "float";
    case DType::f16:
      return "wyjit_kernels::Half";
    case DType::bf16:
      return "wyjit_kernels::Bf16";
  }
  return "?";
}

const char* kernel_layout(Layout l) {
  switch (l) {
    case Layout::vk:
      return "wyjit_kernels::kLayoutVK";
    case Layout::kv:
      return "wyjit_kernels::kLayoutKV";
  }
  return "?";
}

const char* kernel_addressing(Addressing a) {
  switch (a) {
    case Addressing::strided:
      return "wyjit_kernels::kAddrStrided";
    case Addressing::table:
      return "wyjit_kernels::kAddrTable";
    case Addressing::slot:
      return "wyjit_kernels::kAddrSlot";
  }
  return "?";
}

const char* conv_addressing(Addressing a) {
  switch (a) {
    case Addressing::strided:
      return "wyjit_kernels::kConvAddrStrided";
    case Addressing::table:
      return "wyjit_kernels::kConvAddrTable";
    case Addressing::slot:
      return "wyjit_kernels::kConvAddrSlot";
  }
  return "?";
}

const char* conv_rollback(Rollback r) {
  switch (r) {
    case Rollback::intermediate:
      return "wyjit_kernels::kRollbackIntermediate";
    case Rollback::window:
      return "wyjit_kernels::kRollbackWindow";
  }
  return "?";
}

const char* family_file(Family f) {
  switch (f) {
    case Family::gdn_verify:
      return "gdn_verify.cuh";
    case Family::conv1d_update:
      return "conv1d_update.cuh";
  }
  return "?";
}

// The type of the kernel's one parameter, for the explicit instantiation.
const char* params_type(Family f) {
  switch (f) {
    case Family::gdn_verify:
      return "wyjit_kernels::GdnVerifyParams";
    case Family::conv1d_update:
      return "wyjit_kernels::Conv1dUpdateParams";
  }
  return "?";
}

std::string name_expression(const KernelSpec& s) {
  switch (s.family) {
    case Family::gdn_verify:
      return "wyjit_kernels::gdn_verify_kernel<wyjit_kernels::GdnVerifyConfig<" +
             std::to_string(s.k) + ", " + std::to_string(s.dk) + ", " + std::to_string(s.dv) +
             ", " + kernel_type(s.io) + ", " + kernel_type(s.state) + ", " +
             kernel_layout(s.layout) + ", " + kernel_addressing(s.addressing) + ", " +
             (s.l2norm_qk ? "true" : "false") + ", " + (s.fused_gating ? "true" : "false") + "> >";
    case Family::conv1d_update:
      return "wyjit_kernels::conv1d_update_kernel<wyjit_kernels::Conv1dUpdateConfig<" +
             std::to_string(s.k) + ", " + std::to_string(s.width) + ", " + kernel_type(s.io) +
             ", " + kernel_type(s.weight) + ", " + conv_addressing(s.addressing) + ", " +
             conv_rollback(s.rollback) + ", " + (s.bias ? "true" : "false") + ", " +
             (s.silu ? "true" : "false") + "> >";
  }
  return "?";
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
  StampedSource result;
  result.program_name = format_spec(spec) + ".cu";
  result.name_expression = name_expression(spec);
  result.text = "// wyjit stamped source for " + format_spec(spec) + "\n" +
                inline_kernel_file(family_file(spec.family));
  // NOTE: the only per-variant text: one explicit instantiation.
  result.text += "\n// ---- variant\ntemplate __global__ void " + result.name_expression +
                 "(const " + params_type(spec.family) + ");\n";
  return result;
}

}  // namespace wyjit::detail
