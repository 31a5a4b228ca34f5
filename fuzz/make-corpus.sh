#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Regenerates the checked-in seed corpora, fuzz/corpus/<target>/: the spec, CLI and C API seeds
# from wyjit_fuzz_seeds, and the entry seeds from real cache entries that `wyjit precompile`
# writes into a temporary root: two variants of every family for sm_80, sm_90, sm_90a and
# compute_90 (no GPU needed). Entries over 64 KiB keep their real header and the start of their
# payload (make_seeds.cpp).
#
#   fuzz/make-corpus.sh [BUILD_DIR]   a fuzz tree (default: build-fuzz, which tools/run-fuzz.sh
#                                     configures); wyjit_cli and wyjit_fuzz_seeds are built in it
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build-fuzz}"
[[ "$build" == /* ]] || build="$root/$build"
[[ -f "$build/CMakeCache.txt" ]] || {
  echo "make-corpus: $build is not configured: run tools/run-fuzz.sh first" >&2
  exit 1
}
cmake --build "$build" --target wyjit_cli wyjit_fuzz_seeds

entries="$(mktemp -d)"
trap 'rm -rf "$entries"' EXIT
precompile() {
  "$build/bin/wyjit" precompile --arch sm_80,sm_90,sm_90a,compute_90 --cache-dir "$entries" \
    "$@" >/dev/null
}
precompile --family gdn_verify --k 1 --io bf16 --addressing strided
precompile --family gdn_verify --k 4 --io f16 --addressing slot --l2norm
precompile --family conv1d_update --k 1 --io f32 --width 2 --rollback intermediate \
  --addressing strided --silu off
precompile --family conv1d_update --k 2 --io f32 --width 2 --rollback window --addressing slot
precompile --family gdn_replay --k 1 --log 8 --dk 64 --dv 64 --l2norm off --gating off \
  --addressing strided
precompile --family gdn_replay --k 2 --log 8 --dk 64 --dv 64 --gating on --addressing table

for target in spec_names entry_decode cli_args capi_check; do
  rm -rf "$root/fuzz/corpus/$target"
done
"$build/bin/wyjit_fuzz_seeds" "$root/fuzz/corpus" "$entries"
for target in spec_names entry_decode cli_args capi_check; do
  echo "make-corpus: $target: $(find "$root/fuzz/corpus/$target" -type f | wc -l) seeds," \
    "$(du -sk "$root/fuzz/corpus/$target" | cut -f1) KiB"
done
