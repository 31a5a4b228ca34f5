#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds the libFuzzer targets (fuzz/: clang, AddressSanitizer + UndefinedBehaviorSanitizer) and
# runs each one for a fixed time from its checked-in corpus (fuzz/corpus/<target>/). Fails on
# any finding: a crash, a sanitizer report, a broken property, a leak, a timeout or running out
# of memory. The input that did it is kept as <build>/fuzz-findings/<target>/<kind>-<sha1>, and
# the summary names it; the checked-in corpus is only read.
#
#   tools/run-fuzz.sh [SECONDS]    seconds per target (default 60)
#
# Environment:
#   WYJIT_FUZZ_BUILD_DIR   build folder, relative to the repository root or absolute
#                          (default: build-fuzz)
#   WYJIT_FUZZ_TARGETS     the targets to run, space-separated (default: every one)
#   WYJIT_FUZZ_JOBS        build parallelism (default: the number of CPUs)
#   WYJIT_CMAKE_ARGS       extra CMake arguments for a new build folder, split on whitespace
#                          (CI: -DWYJIT_WERROR=ON)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "run-fuzz: SECONDS must be a whole number of seconds, not '$seconds'" >&2
  exit 2
fi
build="${WYJIT_FUZZ_BUILD_DIR:-build-fuzz}"
[[ "$build" == /* ]] || build="$root/$build"
read -r -a targets <<<"${WYJIT_FUZZ_TARGETS:-spec_names entry_decode cli_args capi_check model_config}"
jobs="${WYJIT_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}"

die() {
  echo "run-fuzz: error: $*" >&2
  exit 1
}

# ---- clang with libFuzzer ------------------------------------------------------------------
command -v clang++ >/dev/null 2>&1 ||
  die "clang++ not found: the fuzz targets need clang with libFuzzer" \
    "(Debian: apt-get install clang libclang-rt-dev)"
probe_dir="$(mktemp -d)"
trap 'rm -rf "$probe_dir"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$probe_dir/probe.cpp"
clang++ -fsanitize=fuzzer,address,undefined "$probe_dir/probe.cpp" -o "$probe_dir/probe" \
  >"$probe_dir/log" 2>&1 ||
  die "clang++ cannot link a libFuzzer target with ASan and UBSan (is libclang-rt-dev" \
    "installed?): $(cat "$probe_dir/log")"

# ---- configure and build -------------------------------------------------------------------
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
read -r -a extra_args <<<"${WYJIT_CMAKE_ARGS:-}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DWYJIT_FUZZ=ON -DWYJIT_BUILD_TESTS=OFF "${extra_args[@]}" \
    >/dev/null
fi
cmake --build "$build" --parallel "$jobs" --target "${targets[@]/#/wyjit_fuzz_}"

# ---- run -----------------------------------------------------------------------------------
# NOTE: any sanitizer report ends the run with an error; leaks are reported too (libFuzzer checks
# for them after an input whose mallocs outnumber its frees).
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
summary=()
failed=0
for target in "${targets[@]}"; do
  corpus="$root/fuzz/corpus/$target"
  [[ -d "$corpus" ]] || die "no corpus for $target: $corpus"
  work="$build/fuzz-run/$target"     # inputs this run found interesting (new coverage)
  findings="$build/fuzz-findings/$target"
  log="$build/fuzz-run/$target.log"
  rm -rf "$work" "$findings"
  mkdir -p "$work" "$findings"
  echo "run-fuzz: $target for ${seconds}s"
  status=0
  # -timeout: an input that runs 10 s is a hang; -max_len: seeds are at most 64 KiB.
  "$build/bin/wyjit_fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" "$work" "$corpus" \
    >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)"
  artifacts=("$findings"/*)
  [[ -e "${artifacts[0]}" ]] || artifacts=()
  if [[ $status -ne 0 || ${#artifacts[@]} -gt 0 ]]; then
    failed=1
    echo "run-fuzz: $target FAILED (exit $status); the end of its log ($log):" >&2
    tail -n 40 "$log" >&2
    summary+=("$(printf '%-14s FAILED  exit %s  %s' "$target" "$status" "${artifacts[*]:-}")")
  else
    summary+=("$(printf '%-14s ok      %8s runs  cov %5s  corpus %s' "$target" "${runs:-?}" \
      "${cov:-?}" "$(find "$corpus" "$work" -type f | wc -l)")")
  fi
done

echo "run-fuzz: ${seconds}s per target (build: $build)"
printf '  %s\n' "${summary[@]}"
if [[ $failed -ne 0 ]]; then
  echo "run-fuzz: FAILED: reproduce with <build>/bin/wyjit_fuzz_<target> <finding>" >&2
  exit 1
fi
echo "run-fuzz: no findings"
