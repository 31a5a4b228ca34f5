#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The embedding parts of issue 5 on a GPU machine, from a build tree made elsewhere and carried
# there (nothing is compiled into it):
#   1. cmake --install BUILD_DIR into a temporary prefix, then the consumers of that installed
#      copy (tests/consumers): C++ via find_package, C via pkg-config, Rust via cargo when cargo
#      exists. Where a GPU exists each must launch a verify and check it ("launch: relative
#      error ..." in its output); a consumer that skipped its launch there fails.
#   2. the Python tests on torch tensors (tests/python/test_gpu.py, test_gpu_engines.py and the
#      harness self-test tests/python/test_gpu_harness.py), through the installed libwyjit.so;
#      pytest when it is installed, else the two GPU files on their own runner.
#   3. BUILD_DIR/bin/wyjit_gpu_tests "[multi_gpu]" (two GPUs; reports SKIPPED on one) and
#      "[stager]" (the table stager, null entries as padding).
# Every step runs whatever the others did; the exit status is non-zero when any step failed.
#
#   tools/run-gpu-embedding.sh [BUILD_DIR]        (default: build)
#
# Environment:
#   OUT                 where the logs go (default: ./gpu-embedding-out). Five files: install.log,
#                       consumers.log, python.log, gpu-tests.log, summary.txt (the device tool
#                       brings back at most 8 files from $OUT).
#   WYJIT_DEPS_PREFIX   the unpacked Debian packages (default /opt/deps). When it has no usr/
#                       and the repository has .deps/*.deb, they are unpacked there first.
#   CUDA_HOME           the CUDA toolkit (default /usr/local/cuda).
#
# The lead's command on the device machine (carry build and .deps):
#   tools/run-gpu-embedding.sh build
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" 2>/dev/null && pwd)" || {
  echo "run-gpu-embedding: no build directory ${1:-$root/build}" >&2
  exit 2
}
out="${OUT:-$root/gpu-embedding-out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
deps="${WYJIT_DEPS_PREFIX:-/opt/deps}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
work="$(mktemp -d "${TMPDIR:-/tmp}/wyjit-gpu-embedding.XXXXXX")"
prefix="$work/prefix"
summary="$out/summary.txt"
: >"$summary"
results=()
failed=0

note() { echo "run-gpu-embedding: $*" | tee -a "$summary" >&2; }
# record NAME STATUS [DETAIL]: STATUS is PASSED, FAILED or SKIPPED.
record() {
  results+=("$2  $1${3:+ ($3)}")
  [[ "$2" == FAILED ]] && failed=$((failed + 1))
  echo "run-gpu-embedding: $2 $1${3:+ ($3)}" >&2
}
# section LOG TITLE: a header in LOG, so several steps can share one file.
section() { printf '\n==== %s ====\n' "$2" >>"$1"; }

# ---- environment -----------------------------------------------------------------------------
install_log="$out/install.log"
: >"$install_log"
if [[ ! -d "$deps/usr" ]] && compgen -G "$root/.deps/*.deb" >/dev/null; then
  note "unpacking $root/.deps/*.deb into $deps"
  mkdir -p "$deps"
  for f in "$root"/.deps/*.deb; do dpkg -x "$f" "$deps" >>"$install_log" 2>&1; done
fi
if [[ -d "$deps/usr" ]]; then
  export CMAKE_PREFIX_PATH="$deps/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export WYJIT_CONSUMER_PREFIX_PATH="$deps/usr"
  export PKG_CONFIG_PATH="$deps/usr/lib/x86_64-linux-gnu/pkgconfig:$deps/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [[ -d "$cuda" ]]; then
  export CUDAToolkit_ROOT="$cuda"
  export LD_LIBRARY_PATH="$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$PATH:$cuda/bin"
fi
command -v ninja >/dev/null 2>&1 && export WYJIT_CONSUMER_GENERATOR=Ninja

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
fi
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm)"
  echo "repository: $root ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
  echo "build: $build"
  echo "GPUs: $gpus"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null
  command -v nvidia-smi >/dev/null 2>&1 &&
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 |
    sed 's/^/driver: /'
  echo "cmake: $(cmake --version 2>/dev/null | head -1)"
  echo "c++: $(c++ --version 2>/dev/null | head -1)"
  echo "python3: $(python3 --version 2>&1)"
  echo "cargo: $(command -v cargo >/dev/null 2>&1 && cargo --version || echo 'not installed')"
  echo "deps: $deps ($([[ -d "$deps/usr" ]] && echo present || echo absent))"
} | tee -a "$summary" >>"$install_log"

# ---- 1. install, then the consumers -----------------------------------------------------------
# NOTE: cmake_install.cmake names the source and build trees by the absolute paths they had
# where the tree was configured. On a machine where the repository sits elsewhere, point those
# paths at this checkout (only where nothing exists there yet).
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" 2>/dev/null | head -1; }
link_original() {
  local original="$1" here="$2"
  [[ -z "$original" || -e "$original" ]] && return 0
  mkdir -p "$(dirname "$original")" && ln -s "$here" "$original" &&
    echo "linked $original -> $here (the path the build tree was configured at)" >>"$install_log"
}
link_original "$(cache_value CMAKE_HOME_DIRECTORY)" "$root"
link_original "$(cache_value CMAKE_CACHEFILE_DIR)" "$build"

consumers_log="$out/consumers.log"
: >"$consumers_log"
section "$install_log" "cmake --install $build --prefix $prefix"
if bash "$root/tests/consumers/run_consumer.sh" install "$build" "$prefix" >>"$install_log" 2>&1; then
  cat "$prefix.log" >>"$install_log" 2>/dev/null
  record "cmake --install into a temporary prefix" PASSED
  installed=1
else
  cat "$prefix.log" >>"$install_log" 2>/dev/null
  record "cmake --install into a temporary prefix" FAILED "see install.log"
  installed=0
fi

# consumer KIND LABEL LAUNCHES: runs one consumer; where a GPU exists its output must show
# LAUNCHES checked launches.
consumer() {
  local kind="$1" label="$2" launches="$3" status=0 start seen
  if [[ "$installed" != 1 ]]; then
    record "consumer: $label" FAILED "no installed copy"
    return
  fi
  section "$consumers_log" "consumer: $label"
  start="$(wc -l <"$consumers_log")"
  bash "$root/tests/consumers/run_consumer.sh" "$kind" "$prefix" "$work/consumers" \
    >>"$consumers_log" 2>&1 || status=$?
  seen="$(tail -n +"$((start + 1))" "$consumers_log" | grep -c '^launch: relative error' || true)"
  if [[ $status -eq 77 ]]; then
    record "consumer: $label" SKIPPED "$(tail -n +"$((start + 1))" "$consumers_log" |
      sed -n 's/^SKIPPED: //p' | head -1)"
  elif [[ $status -ne 0 ]]; then
    record "consumer: $label" FAILED "exit $status, see consumers.log"
  elif [[ $gpus -gt 0 && $seen -lt $launches ]]; then
    record "consumer: $label" FAILED "$seen of $launches launches ran on a machine with $gpus GPUs"
  elif [[ $gpus -gt 0 ]]; then
    record "consumer: $label" PASSED "$seen launches checked"
  else
    record "consumer: $label" PASSED "no GPU: compile only"
  fi
}
consumer cxx "C++ via find_package(wyjit), shared and static" 2
consumer c "C via pkg-config" 1
if command -v cargo >/dev/null 2>&1; then
  consumer rust "Rust via cargo, no outside crates" 1
else
  section "$consumers_log" "consumer: Rust"
  echo "SKIPPED: cargo is not installed on this machine; the Rust consumer was not built" \
    >>"$consumers_log"
  record "consumer: Rust via cargo" SKIPPED "cargo is not installed"
fi

# ---- 2. Python on torch tensors ----------------------------------------------------------------
python_log="$out/python.log"
: >"$python_log"
library="$(find "$prefix" -name libwyjit.so -print -quit 2>/dev/null)"
[[ -n "$library" ]] || library="$build/lib/libwyjit.so"
section "$python_log" "WYJIT_LIBRARY=$library"
if ! python3 -c "import torch" >>"$python_log" 2>&1; then
  record "python: test_gpu.py" SKIPPED "torch is not installed for python3"
elif python3 -c "import pytest" >/dev/null 2>&1; then
  section "$python_log" "pytest test_gpu_harness.py test_gpu.py test_gpu_engines.py"
  if (cd "$root" && WYJIT_LIBRARY="$library" PYTHONUNBUFFERED=1 python3 -m pytest -v -rs \
    -p no:cacheprovider tests/python/test_gpu_harness.py tests/python/test_gpu.py \
    tests/python/test_gpu_engines.py) \
    >>"$python_log" 2>&1; then
    record "python: test_gpu.py and its harness self-test (pytest)" PASSED \
      "$(grep -E '^=+ .*(passed|failed)' "$python_log" | tail -1 | tr -d '=' | xargs)"
  else
    record "python: test_gpu.py and its harness self-test (pytest)" FAILED "see python.log"
  fi
else
  section "$python_log" "python3 test_gpu.py (no pytest: the harness self-test needs it)"
  if (cd "$root" && export WYJIT_LIBRARY="$library" PYTHONUNBUFFERED=1 &&
    python3 tests/python/test_gpu.py && python3 tests/python/test_gpu_engines.py) \
    >>"$python_log" 2>&1; then
    record "python: test_gpu.py (standalone)" PASSED "$(tail -1 "$python_log")"
  else
    record "python: test_gpu.py (standalone)" FAILED "$(tail -1 "$python_log")"
  fi
fi
if grep -q 'wyjit-gpu-unavailable' "$python_log"; then
  if [[ $gpus -gt 0 ]]; then
    record "python: the GPU cases ran" FAILED "skipped on a machine with $gpus GPUs: $(
      grep -o 'wyjit-gpu-unavailable: .*' "$python_log" | head -1)"
  else
    note "python: the GPU cases were skipped (no GPU; see python.log)"
  fi
fi

# ---- 3. the multi-GPU and stager tests of the carried test binary ------------------------------
gpu_log="$out/gpu-tests.log"
: >"$gpu_log"
gpu_tests="$build/bin/wyjit_gpu_tests"
for tag in "[multi_gpu]" "[stager]"; do
  section "$gpu_log" "wyjit_gpu_tests -d yes $tag"
  if [[ ! -x "$gpu_tests" ]]; then
    record "wyjit_gpu_tests $tag" FAILED "no $gpu_tests"
    continue
  fi
  status=0
  "$gpu_tests" -d yes "$tag" >>"$gpu_log" 2>&1 || status=$?
  detail="$(grep -E '^(All tests passed|test cases:)' "$gpu_log" | tail -1)"
  if [[ $status -eq 77 ]]; then
    record "wyjit_gpu_tests $tag" SKIPPED "no CUDA device"
  elif [[ $status -ne 0 ]]; then
    record "wyjit_gpu_tests $tag" FAILED "exit $status: $detail"
  elif [[ "$tag" == "[multi_gpu]" ]] && grep -q 'SKIPPED: needs 2 CUDA devices' "$gpu_log"; then
    record "wyjit_gpu_tests $tag" SKIPPED "$(grep -o 'needs 2 CUDA devices.*' "$gpu_log" | head -1)"
  else
    record "wyjit_gpu_tests $tag" PASSED "$detail"
  fi
done

# ---- summary ----------------------------------------------------------------------------------
{
  echo
  echo "==== summary ($(date -u '+%H:%M:%S UTC'); logs in $out) ===="
  printf '%s\n' "${results[@]}"
  passed=$(printf '%s\n' "${results[@]}" | grep -c '^PASSED' || true)
  skipped=$(printf '%s\n' "${results[@]}" | grep -c '^SKIPPED' || true)
  echo "$passed passed, $failed failed, $skipped skipped"
} | tee -a "$summary"
rm -rf "$work"
[[ $failed -eq 0 ]]
