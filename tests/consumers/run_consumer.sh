#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds and runs one consumer of an installed wyjit (CTest: the install step is a fixture the
# three consumers require).
#
#   run_consumer.sh install BUILD_DIR PREFIX     cmake --install BUILD_DIR into a fresh PREFIX
#   run_consumer.sh cxx  PREFIX WORK_DIR         C++ via find_package(wyjit), shared and static
#   run_consumer.sh c    PREFIX WORK_DIR         C via pkg-config
#   run_consumer.sh rust PREFIX WORK_DIR         Rust via cargo --offline (no outside crates)
#
# Each consumer compiles a variant with NVRTC into a fresh cache; where a CUDA device exists it
# also launches one verify and checks it. The C++ step also checks that the installed
# libwyjit.so exports the public API and no wyjit::detail symbol. Exit status 77 (CTest:
# skipped) when the tool a consumer needs (pkg-config, cargo) is missing.
#
# Environment: WYJIT_CONSUMER_PREFIX_PATH (':'-separated, passed on as CMAKE_PREFIX_PATH),
# CUDAToolkit_ROOT, WYJIT_CONSUMER_CXX, WYJIT_CONSUMER_GENERATOR, CC (default cc; the Rust
# consumer's build.rs also compiles a C program with it, to check its struct layouts).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kind="${1:?usage: run_consumer.sh install|cxx|c|rust ...}"

log() { echo "run_consumer($kind): $*"; }
skip() {
  echo "SKIPPED: $*"
  exit 77
}

# The folder holding libwyjit.so in PREFIX (lib, lib64 or lib/<multiarch>).
lib_dir() {
  local found
  found="$(find "$1" -name 'libwyjit.so' -print -quit)"
  [[ -n "$found" ]] || {
    echo "no libwyjit.so under $1: did the install step run?" >&2
    exit 1
  }
  dirname "$found"
}

# libwyjit.so exports the public API only (hidden visibility): wyjit:: and wyjit_* symbols, never
# wyjit::detail (the private classes may change in any release without a SONAME bump).
check_exports() {
  local lib="$1" symbols detail
  command -v nm >/dev/null 2>&1 || {
    echo "nm (binutils) is needed to check what $lib exports"
    exit 1
  }
  # Captured first: see the note on ldd below.
  symbols="$(nm -DC --defined-only "$lib")"
  detail="$(grep -F 'wyjit::detail' <<<"$symbols" || true)"
  if [[ -n "$detail" ]]; then
    echo "$lib exports $(wc -l <<<"$detail") wyjit::detail symbols, e.g.:"
    head -n 10 <<<"$detail"
    exit 1
  fi
  # NOTE: the positive checks keep an empty or unreadable symbol list from passing.
  for want in 'wyjit::parse_spec(' 'wyjit::Jit::kernel(' 'wyjit::launch_gdn_verify(' \
    'wyjit_jit_create' 'wyjit_launch_gdn_verify' 'wyjit_family_field'; do
    [[ "$symbols" == *"$want"* ]] || {
      echo "$lib does not export $want"
      exit 1
    }
  done
  log "$lib: $(grep -c -F ' T ' <<<"$symbols") functions exported, none of wyjit::detail"
}

case "$kind" in
  install)
    build="$2"
    prefix="$3"
    rm -rf "$prefix"
    mkdir -p "$(dirname "$prefix")"
    cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || {
      cat "$prefix.log"
      exit 1
    }
    for f in include/wyjit/wyjit.h include/wyjit/gdn_verify.h include/wyjit/conv1d_update.h \
      include/wyjit/state_refs.h include/wyjit/wyjit.hpp include/wyjit/jit.hpp bin/wyjit; do
      [[ -e "$prefix/$f" ]] || {
        echo "missing after install: $prefix/$f"
        exit 1
      }
    done
    libdir="$(lib_dir "$prefix")"
    for f in libwyjit.a libwyjit.so cmake/wyjit/wyjitConfig.cmake pkgconfig/wyjit.pc; do
      [[ -e "$libdir/$f" ]] || {
        echo "missing after install: $libdir/$f"
        exit 1
      }
    done
    log "installed into $prefix ($(readlink "$libdir/libwyjit.so"))"
    # The installed CLI runs from the prefix.
    "$prefix/bin/wyjit" --version
    ;;

  cxx)
    prefix="$2"
    work="$3/cxx"
    rm -rf "$work"
    mkdir -p "$work"
    prefix_path="$prefix"
    if [[ -n "${WYJIT_CONSUMER_PREFIX_PATH:-}" ]]; then
      prefix_path="$prefix;${WYJIT_CONSUMER_PREFIX_PATH//:/;}"
    fi
    args=(-S "$here/cxx" -B "$work/build" -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_PREFIX_PATH=$prefix_path")
    [[ -n "${WYJIT_CONSUMER_GENERATOR:-}" ]] && args+=(-G "$WYJIT_CONSUMER_GENERATOR")
    [[ -n "${WYJIT_CONSUMER_CXX:-}" ]] && args+=("-DCMAKE_CXX_COMPILER=$WYJIT_CONSUMER_CXX")
    [[ -n "${CUDAToolkit_ROOT:-}" ]] && args+=("-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT")
    cmake "${args[@]}" >"$work/configure.log" 2>&1 || {
      cat "$work/configure.log"
      exit 1
    }
    cmake --build "$work/build" --parallel 2
    check_exports "$(lib_dir "$prefix")/libwyjit.so"
    # The shared build must run on the installed library, not the build tree's.
    # ldd's output is captured first: under pipefail, `ldd | grep -q` fails at random when grep
    # exits on its first match and ldd dies of SIGPIPE (CI failed that way once).
    loaded="$(ldd "$work/build/consumer_shared" | grep libwyjit)"
    echo "$loaded"
    [[ "$loaded" == *"$prefix/"* ]] || {
      echo "consumer_shared does not load libwyjit.so from $prefix"
      exit 1
    }
    "$work/build/consumer_shared" "$work/cache-shared"
    "$work/build/consumer_static" "$work/cache-static"
    ;;

  c)
    prefix="$2"
    work="$3/c"
    command -v pkg-config >/dev/null 2>&1 || skip "pkg-config is not installed"
    cc="${CC:-cc}"
    command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ($cc)"
    rm -rf "$work"
    mkdir -p "$work"
    PKG_CONFIG_PATH="$(lib_dir "$prefix")/pkgconfig"
    export PKG_CONFIG_PATH
    log "pkg-config wyjit $(pkg-config --modversion wyjit): $(pkg-config --cflags --libs wyjit)"
    # shellcheck disable=SC2046 # pkg-config output is a list of flags
    "$cc" -std=c99 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags wyjit) \
      "$here/c/consumer.c" -o "$work/consumer" $(pkg-config --libs wyjit) \
      "-Wl,-rpath,$(pkg-config --variable=libdir wyjit)" -lm
    "$work/consumer" "$work/cache"
    ;;

  rust)
    prefix="$2"
    work="$3/rust"
    command -v cargo >/dev/null 2>&1 || skip "cargo is not installed"
    rm -rf "$work"
    mkdir -p "$work"
    # NOTE: build a copy: cargo writes Cargo.lock next to Cargo.toml.
    cp -r "$here/rust" "$work/crate"
    WYJIT_LIB_DIR="$(lib_dir "$prefix")" WYJIT_INCLUDE_DIR="$prefix/include" \
      CARGO_TARGET_DIR="$work/target" RUSTFLAGS="-D warnings" \
      cargo build --offline --quiet --manifest-path "$work/crate/Cargo.toml"
    "$work/target/debug/wyjit-consumer" "$work/cache"
    ;;

  *)
    echo "unknown consumer '$kind': install, cxx, c or rust" >&2
    exit 2
    ;;
esac
