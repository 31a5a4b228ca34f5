#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Runs GPU test cases in parallel, one process per Catch2 test case, on a machine with a GPU
# where build/ was built (here or elsewhere). Each case's log goes to LOG_DIR/<n>.log; the
# summary lists every case with its result and ends non-zero if any failed.
#
#   tools/run-gpu-suite.sh [-j JOBS] [-b BUILD_DIR] LOG_DIR "[tag]"...
#
# Test cases of one GPU share the device; the parallelism hides the CPU-side reference and the
# NVRTC compiles, which dominate the suite's wall time.
set -euo pipefail

jobs=8
build=build
while getopts "j:b:" opt; do
  case "$opt" in
    j) jobs="$OPTARG" ;;
    b) build="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [-j JOBS] [-b BUILD_DIR] LOG_DIR \"[tag]\"..." >&2
  exit 2
fi
log_dir="$1"
shift
mkdir -p "$log_dir"
tests="$build/bin/wyjit_gpu_tests"

# NOTE: a case with several of the tags asked for runs once. The listing exits with the count of
# cases it listed, not 0.
names=()
while IFS= read -r name; do
  [[ -n "$name" ]] && names+=("$name")
done < <(for tag in "$@"; do "$tests" --list-test-names-only "$tag" || true; done | awk '!seen[$0]++')
echo "run-gpu-suite: ${#names[@]} test cases, $jobs at a time"

run_one() {
  local index="$1" name="$2"
  local log="$log_dir/$index.log"
  local start=$SECONDS
  local rc=0
  # NOTE: Catch2 splits a test spec at commas and reads [ ] * \ as syntax: escape them, and
  # make a spec that matches nothing fail (-w NoTests) instead of passing with no test run.
  local spec
  spec=$(printf '%s' "$name" | sed 's/[],[\\*]/\\&/g')
  "$tests" "$spec" -w NoTests >"$log" 2>&1 || rc=$?
  # NOTE: a case that cannot run here (e.g. two GPUs on a one-GPU machine) passes in Catch2 with
  # a "SKIPPED: " warning: it is reported as SKIP, never as PASS.
  if [[ "$rc" == 0 ]] && grep -q "SKIPPED: " "$log"; then rc=77; fi
  case "$rc" in
    0) echo "PASS $((SECONDS - start))s  $name" ;;
    77) echo "SKIP $((SECONDS - start))s  $name ($(grep -m1 -o "SKIPPED: .*" "$log" || head -c 200 "$log"))" ;;
    *) echo "FAIL $((SECONDS - start))s  $name (rc $rc, log: $log)" ;;
  esac
}
export -f run_one
export tests log_dir

# shellcheck disable=SC2016 # $0 and $1 belong to the inner bash
for i in "${!names[@]}"; do printf '%s\0%s\0' "$i" "${names[$i]}"; done |
  xargs -0 -n 2 -P "$jobs" bash -c 'run_one "$0" "$1"' | tee "$log_dir/summary.txt"
# NOTE: the GPU test binary exits 77 for a case it skipped (no GPU, or too few GPUs): a skip is
# reported as SKIP, never as a pass, and does not fail the run.
echo "run-gpu-suite: $(grep -c '^PASS' "$log_dir/summary.txt" || true) passed," \
  "$(grep -c '^SKIP' "$log_dir/summary.txt" || true) skipped," \
  "$(grep -c '^FAIL' "$log_dir/summary.txt" || true) failed"
! grep -q "^FAIL" "$log_dir/summary.txt"
