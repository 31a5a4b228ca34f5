// SPDX-License-Identifier: Apache-2.0
// The disk-cache key: everything that changes the bytes of a binary, and nothing else.
#pragma once

#include <string>

#include "stamp/stamp.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::detail {

inline constexpr int kKeySchemaVersion = 2;

struct CacheKey {
  std::string text;       ///< canonical multi-line key text (stored in the entry header)
  std::string hash;       ///< hex SHA-256 of text
  std::string file_name;  ///< <variant>.<hash16>.cubin (or .ptx)
};

/// Schema version, variant, SHA-256 of the stamped source (which embeds every kernel_src file
/// it uses), the canonical option list, the target, the NVRTC version and build. No paths, no
/// environment, no driver version.
CacheKey make_cache_key(const KernelSpec& spec, const StampedSource& source, const Target& target);

}  // namespace wyjit::detail
