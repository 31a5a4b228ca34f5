#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs GPU test cases in parallel, one process per Catch2 test case, on a machine with a GPU
# where build/ was built (here or elsewhere); then every case tagged [sanitize] (one small sample
# per family: tests/gpu/conformance/suite_sanitizer.cpp) once under each compute-sanitizer tool.
# Each run's log goes to LOG_DIR/<n>.log; the summary lists every run with its result and ends
# non-zero if any failed. A sanitizer run fails on any report: a non-zero exit, a summary that
# counts an error, a hazard or a warning, or no summary at all.
#
#   tools/run-gpu-suite.sh [-j JOBS] [-b BUILD_DIR] [-s TOOLS] LOG_DIR "[tag]"...
#
#   -s TOOLS  compute-sanitizer tools, comma-separated (default memcheck,racecheck,initcheck,
#             synccheck; "none" runs none). The binary is $COMPUTE_SANITIZER, else
#             compute-sanitizer on PATH, else the CUDA toolkit's.
#
# Test cases of one GPU share the device; the parallelism hides the CPU-side reference and the
# NVRTC compiles, which dominate the suite's wall time.
set -euo pipefail

jobs=8
build=build
tools="memcheck,racecheck,initcheck,synccheck"
while getopts "j:b:s:" opt; do
  case "$opt" in
    j) jobs="$OPTARG" ;;
    b) build="$OPTARG" ;;
    s) tools="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [-j JOBS] [-b BUILD_DIR] [-s TOOLS] LOG_DIR \"[tag]\"..." >&2
  exit 2
fi
log_dir="$1"
shift
mkdir -p "$log_dir"
tests="$build/bin/wyjit_gpu_tests"

# NOTE: a case with several of the tags asked for runs once. The listing exits with the count of
# cases it listed, not 0.
list_cases() {
  for tag in "$@"; do "$tests" --list-test-names-only "$tag" || true; done | awk 'NF && !seen[$0]++'
}
names=()
while IFS= read -r name; do names+=("$name"); done < <(list_cases "$@")

sanitizer=""
sanitized=()
if [[ "$tools" != "none" ]]; then
  for candidate in "${COMPUTE_SANITIZER:-}" "$(command -v compute-sanitizer || true)" \
    /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      sanitizer="$candidate"
      break
    fi
  done
  while IFS= read -r name; do sanitized+=("$name"); done < <(list_cases "[sanitize]")
fi

# One job a line: "<tool>\t<test case>", tool "-" for a plain run.
job_list="$log_dir/jobs.txt"
: >"$job_list"
for name in "${names[@]}"; do printf -- '-\t%s\n' "$name" >>"$job_list"; done
IFS=',' read -r -a tool_list <<<"$tools"
if [[ "$tools" != "none" ]]; then
  for tool in "${tool_list[@]}"; do
    for name in "${sanitized[@]}"; do printf '%s\t%s\n' "$tool" "$name" >>"$job_list"; done
  done
fi
echo "run-gpu-suite: ${#names[@]} test cases, ${#sanitized[@]} sanitizer samples x" \
  "$([[ "$tools" == none ]] && echo 0 || echo "${#tool_list[@]}") tools, $jobs at a time"

# What a sanitizer log must say: exactly a clean summary, and no summary counting anything.
sanitizer_verdict() {
  local tool="$1" log="$2"
  if grep -Eq 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]|\([1-9][0-9]* errors?,|, [1-9][0-9]* warnings?\)' "$log"; then
    echo "a report: $(grep -Em1 'SUMMARY' "$log")"
  elif [[ "$tool" == racecheck ]]; then
    grep -q 'RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)' "$log" ||
      echo "no clean RACECHECK SUMMARY"
  else
    grep -q 'ERROR SUMMARY: 0 errors' "$log" || echo "no clean ERROR SUMMARY"
  fi
}

run_one() {
  local index="$1" tool="$2" name="$3"
  local log="$log_dir/$index.log"
  local start=$SECONDS
  local rc=0 why=""
  local label="$name"
  [[ "$tool" != "-" ]] && label="[$tool] $name"
  # NOTE: Catch2 splits a test spec at commas and reads [ ] * \ as syntax: escape them, and
  # make a spec that matches nothing fail (-w NoTests) instead of passing with no test run.
  local spec
  spec=$(printf '%s' "$name" | sed 's/[],[\\*]/\\&/g')
  if [[ "$tool" == "-" ]]; then
    "$tests" "$spec" -w NoTests >"$log" 2>&1 || rc=$?
  elif [[ -z "$sanitizer" ]]; then
    # NOTE: where there is no GPU the case skips, tool or not; elsewhere a missing tool fails.
    "$tests" "$spec" -w NoTests >"$log" 2>&1 || rc=$?
    if [[ "$rc" != 77 ]]; then
      echo "compute-sanitizer not found (set COMPUTE_SANITIZER)" >>"$log"
      rc=1
      why="compute-sanitizer not found"
    fi
  else
    "$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 100 \
      "$tests" "$spec" -w NoTests >"$log" 2>&1 || rc=$?
    if [[ "$rc" != 77 ]] && ! grep -q "SKIPPED: " "$log"; then
      why=$(sanitizer_verdict "$tool" "$log")
      [[ -n "$why" && "$rc" == 0 ]] && rc=1
    fi
  fi
  # NOTE: a case that cannot run here (e.g. two GPUs on a one-GPU machine) passes in Catch2 with
  # a "SKIPPED: " warning: it is reported as SKIP, never as PASS.
  if [[ "$rc" == 0 ]] && grep -q "SKIPPED: " "$log"; then rc=77; fi
  case "$rc" in
    0) echo "PASS $((SECONDS - start))s  $label" ;;
    77) echo "SKIP $((SECONDS - start))s  $label ($(grep -m1 -o "SKIPPED: .*" "$log" || head -c 200 "$log"))" ;;
    *) echo "FAIL $((SECONDS - start))s  $label (rc $rc${why:+, $why}, log: $log)" ;;
  esac
}
export -f run_one sanitizer_verdict
export tests log_dir sanitizer

jobs_nul() {
  local index=0 tool name
  while IFS=$'\t' read -r tool name; do
    printf '%s\0%s\0%s\0' "$index" "$tool" "$name"
    index=$((index + 1))
  done <"$job_list"
}
# shellcheck disable=SC2016 # $0, $1 and $2 belong to the inner bash
jobs_nul | xargs -0 -r -n 3 -P "$jobs" bash -c 'run_one "$0" "$1" "$2"' | tee "$log_dir/summary.txt"
# NOTE: the GPU test binary exits 77 for a case it skipped (no GPU, or too few GPUs): a skip is
# reported as SKIP, never as a pass, and does not fail the run.
echo "run-gpu-suite: $(grep -c '^PASS' "$log_dir/summary.txt" || true) passed," \
  "$(grep -c '^SKIP' "$log_dir/summary.txt" || true) skipped," \
  "$(grep -c '^FAIL' "$log_dir/summary.txt" || true) failed"
! grep -q "^FAIL" "$log_dir/summary.txt"
