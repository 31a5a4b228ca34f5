#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs what a wyjit build needs (Debian packages; the CUDA toolkit must already be
# there), then configures and builds the repository in build/.
#
#   tools/setup-deps.sh              run everything
#   source tools/setup-deps.sh       define the functions only (the other scripts do this)
#
# Environment:
#   WYJIT_CMAKE_ARGS   extra CMake arguments, split on whitespace (e.g. -DWYJIT_WERROR=ON)
#   WYJIT_BUILD_DIR    build folder, relative to the repository root or absolute (default: build)
#   CUDAToolkit_ROOT   CUDA toolkit location (default: /usr/local/cuda)
set -euo pipefail

WYJIT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WYJIT_BUILD_DIR="${WYJIT_BUILD_DIR:-build}"
if [[ "$WYJIT_BUILD_DIR" != /* ]]; then
  WYJIT_BUILD_DIR="$WYJIT_ROOT/$WYJIT_BUILD_DIR"
fi
WYJIT_DEB_PACKAGES=(cmake g++ nlohmann-json3-dev libspdlog-dev libfmt-dev catch2 clang-format)
# What the tests need beyond the build (tools/run-tests.sh): python3-venv for the virtual
# environment the Python tests run in (tools/setup-python.sh; it also brings python3), pkg-config
# for the C consumer test (which reports skipped without it).
# shellcheck disable=SC2034 # used by tools/run-tests.sh
WYJIT_TEST_DEB_PACKAGES=(python3-venv pkg-config)

wyjit_log() { echo "setup-deps: $*" >&2; }
wyjit_die() {
  echo "setup-deps: error: $*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, else through sudo.
wyjit_as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    wyjit_die "need root to run '$*' and sudo is not installed; install the packages by hand"
  fi
}

wyjit_deb_installed() {
  # Captured, not piped into grep -q: under pipefail an early grep exit can fail dpkg with SIGPIPE.
  local status
  status="$(dpkg -s "$1" 2>/dev/null)" || return 1
  grep -qx 'Status: install ok installed' <<<"$status"
}

# Installs those of the named Debian packages that are missing.
wyjit_install_packages() {
  local wanted=("$@")
  if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    wyjit_log "not a Debian-like system: make sure these are installed: ${wanted[*]}"
    return 0
  fi
  local missing=() pkg
  for pkg in "${wanted[@]}"; do
    wyjit_deb_installed "$pkg" || missing+=("$pkg")
  done
  [[ ${#missing[@]} -gt 0 ]] || return 0
  wyjit_log "installing missing packages: ${missing[*]}"
  wyjit_as_root env DEBIAN_FRONTEND=noninteractive apt-get update ||
    wyjit_die "apt-get update failed"
  wyjit_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}" || wyjit_die "apt-get install failed for: ${missing[*]}"
}

# Fails unless the CUDA toolkit's NVRTC header is present.
wyjit_check_cuda() {
  local root="${CUDAToolkit_ROOT:-/usr/local/cuda}"
  if [[ ! -f "$root/include/nvrtc.h" ]]; then
    wyjit_die "CUDA toolkit not found: no '$root/include/nvrtc.h'." \
      "Install the CUDA toolkit (12 or newer; it is not a Debian package here) and/or" \
      "set CUDAToolkit_ROOT to its location."
  fi
}

# True when the build folder's CMake cache already holds every -DNAME[:TYPE]=VALUE given (any
# other argument, e.g. -G, counts as not held).
wyjit_cache_holds() {
  local cache="$WYJIT_BUILD_DIR/CMakeCache.txt" arg def name value line rest found
  [[ -f "$cache" ]] || return 1
  for arg in "$@"; do
    [[ "$arg" == -D*=* ]] || return 1
    def="${arg#-D}"
    name="${def%%=*}"
    name="${name%%:*}"
    value="${def#*=}"
    found=0
    while IFS= read -r line; do
      rest="${line#"$name":}"
      if [[ "$rest" != "$line" && "${rest#*=}" == "$value" ]]; then
        found=1
        break
      fi
    done <"$cache"
    [[ $found -eq 1 ]] || return 1
  done
}

# Configures the build folder when it is not configured yet, or when WYJIT_CMAKE_ARGS or the
# CMake arguments given ask for settings its cache does not hold yet; then builds with every core.
# shellcheck disable=SC2120 # tools/run-tests.sh passes CMake arguments
wyjit_configure_and_build() {
  local build="$WYJIT_BUILD_DIR"
  local extra=()
  if [[ -n "${WYJIT_CMAKE_ARGS:-}" ]]; then
    read -r -a extra <<<"$WYJIT_CMAKE_ARGS"
  fi
  if [[ -n "${CUDAToolkit_ROOT:-}" ]]; then
    extra+=("-DCUDAToolkit_ROOT=$CUDAToolkit_ROOT")
  fi
  extra+=("$@")
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    local generator=()
    if command -v ninja >/dev/null 2>&1; then
      generator=(-G Ninja)
    fi
    cmake -S "$WYJIT_ROOT" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      "${extra[@]}"
  elif [[ ${#extra[@]} -gt 0 ]] && ! wyjit_cache_holds "${extra[@]}"; then
    # NOTE: re-run so that e.g. -DWYJIT_WERROR=ON reaches a tree configured without it; skipped
    # when the cache already holds it, so that a second run costs no configure.
    cmake -S "$WYJIT_ROOT" -B "$build" "${extra[@]}"
  fi
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  cmake --build "$build" --parallel "$jobs"
}

wyjit_setup() {
  wyjit_install_packages "${WYJIT_DEB_PACKAGES[@]}"
  wyjit_check_cuda
  wyjit_configure_and_build
}

# Run everything when executed, define the functions only when sourced.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  wyjit_setup
fi
