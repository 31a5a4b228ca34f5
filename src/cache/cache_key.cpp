// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_key.hpp"

#include "cache/sha256.hpp"
#include "compile/nvrtc_compiler.hpp"

namespace wyjit::detail {

CacheKey make_cache_key(const KernelSpec& spec, const StampedSource& source, const Target& target) {
  CacheKey key;
  key.text = "wyjit-cache-key " + std::to_string(kKeySchemaVersion) + "\n";
  key.text += "variant " + format_spec(spec) + "\n";
  key.text += "target " + target.name() + "\n";
  key.text += "nvrtc " + nvrtc_identity() + "\n";
  for (const std::string& option : nvrtc_options(target)) key.text += "option " + option + "\n";
  for (const std::string& name : source.name_expressions)
    key.text += "name-expression " + name + "\n";
  key.text += "source-sha256 " + sha256_hex(source.text) + "\n";
  key.hash = sha256_hex(key.text);
  key.file_name =
      format_spec(spec) + "." + key.hash.substr(0, 16) + (target.ptx ? ".ptx" : ".cubin");
  return key;
}

}  // namespace wyjit::detail
