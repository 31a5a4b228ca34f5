# SPDX-License-Identifier: Apache-2.0
# Warnings (and sanitizers) for wyjit's own targets only: never directory-wide.
function(wyjit_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion)
  # NOTE: GCC 12 at -O2 reports std::string and std::vector copies as overlapping or
  # overflowing (GCC bugs 105329, 105651): false positives in libstdc++ itself.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-stringop-overflow)
  endif()
  if(WYJIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(WYJIT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${WYJIT_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${WYJIT_SANITIZE})
  endif()
endfunction()
