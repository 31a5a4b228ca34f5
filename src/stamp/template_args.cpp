// SPDX-License-Identifier: Apache-2.0
#include "stamp/template_args.hpp"

namespace wyjit::detail {

const char* kernel_type(DType t) noexcept {
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

const char* kernel_addressing(Addressing a) noexcept {
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

const char* kernel_layout(Layout l) noexcept {
  switch (l) {
    case Layout::vk:
      return "wyjit_kernels::kLayoutVK";
    case Layout::kv:
      return "wyjit_kernels::kLayoutKV";
  }
  return "?";
}

std::string template_id(const std::string& name, std::initializer_list<std::string> args) {
  std::string out = name + "<";
  bool first = true;
  for (const std::string& a : args) {
    if (!first) out += ", ";
    out += a;
    first = false;
  }
  if (out.back() == '>') out += ' ';
  return out + ">";
}

}  // namespace wyjit::detail
