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
# model_config: a tensor-parallel byte, then the published configs and small hand-written ones.
models="$root/fuzz/corpus/model_config"
rm -rf "$models"
mkdir -p "$models"
fixtures="$root/tests/fixtures/models"
seed() { # NAME TP_BYTE (octal escape) then the text on stdin
  { printf "$2"; cat; } >"$models/$1"
}
seed qwen3-next-tp1 '\000' <"$fixtures/qwen3-next-80b-a3b-instruct.json"
seed qwen3-next-tp4 '\003' <"$fixtures/qwen3-next-80b-a3b-instruct.json"
seed qwen3.5-tp8 '\007' <"$fixtures/qwen3.5-27b.json"
seed qwen3.5-tp3 '\002' <"$fixtures/qwen3.5-27b.json"
minimal='"linear_num_key_heads":2,"linear_num_value_heads":8,"linear_key_head_dim":128,'
minimal+='"linear_value_head_dim":128,"linear_conv_kernel_dim":4,"torch_dtype":"bfloat16"'
echo "{$minimal,\"num_hidden_layers\":4,\"full_attention_interval\":4}" | seed minimal-tp2 '\001'
echo "{\"text_config\":{$minimal,\"layer_types\":[\"linear_attention\"]}}" | seed nested '\000'
echo '{"linear_num_key_heads":1.0,"dtype":"float8"}' | seed broken '\000'
# NOTE: a finding of the target (nlohmann's out_of_range escaped the reader), kept as a seed.
echo '{"linear_num_key_heads":9199000000000e100000000e15}' | seed number-past-double '\000'

for target in spec_names entry_decode cli_args capi_check model_config; do
  echo "make-corpus: $target: $(find "$root/fuzz/corpus/$target" -type f | wc -l) seeds," \
    "$(du -sk "$root/fuzz/corpus/$target" | cut -f1) KiB"
done
