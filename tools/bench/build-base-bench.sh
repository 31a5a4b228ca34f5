#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Links a second copy of kernel benchmarks against the kernel sources of another commit, so that
# a kernel change and its base run side by side in one GPU call (same machine, same clocks):
# BUILD/bin/<bench>_base is <bench> with kernel_src/ taken from REV. Everything else (the
# benchmark, the launch layer, the host-side geometry in kernel_src/*_params.cuh that the
# library compiles in) is the work tree's build, so REV must agree with it on the parameter
# blocks and shared-memory sizes of the variants timed.
#
#   tools/bench/build-base-bench.sh [-b BUILD_DIR] REV BENCH...
#   tools/bench/build-base-bench.sh HEAD~1 bench_gdn_replay
#   # on the GPU: build/bin/bench_gdn_replay_base --path wy; build/bin/bench_gdn_replay --path wy
#
# Needs BUILD_DIR built with Ninja (the link commands are read from it).
set -euo pipefail

build=build
while getopts "b:" opt; do
  case "$opt" in
    b) build="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [[ $# -lt 2 ]]; then
  sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
rev="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "$build" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# kernel_src/ of REV, embedded as the library's build embeds it (cmake/EmbedKernelSources.cmake).
git -C "$root" archive "$rev" kernel_src | tar -x -C "$work"
files="$(find "$work/kernel_src" -name '*.cuh' | sort | paste -sd ';')"
cmake "-DOUT=$work/embedded_kernel_sources.cpp" "-DFILES=$files" "-DBASE=$work/kernel_src" \
  -P "$root/cmake/EmbedKernelSources.cmake"
c++ -O2 -std=c++20 -I"$root/include" -I"$root/src" -c "$work/embedded_kernel_sources.cpp" \
  -o "$work/embedded_kernel_sources.cpp.o"

# The static library with that one object replaced.
cp "$build/lib/libwyjit.a" "$work/libwyjit_base.a"
ar d "$work/libwyjit_base.a" embedded_kernel_sources.cpp.o
ar r "$work/libwyjit_base.a" "$work/embedded_kernel_sources.cpp.o"

for bench in "$@"; do
  link="$(ninja -C "$build" -t commands "bin/$bench" | tail -1)"
  if [[ "$link" != *" -o bin/$bench "* || "$link" != *"lib/libwyjit.a"* ]]; then
    echo "build-base-bench: cannot read the link command of bin/$bench in $build" >&2
    exit 1
  fi
  link="${link//lib\/libwyjit.a/$work/libwyjit_base.a}"
  link="${link// -o bin\/$bench / -o bin\/${bench}_base }"
  (cd "$build" && eval "$link")
  echo "build-base-bench: $build/bin/${bench}_base has kernel_src of $(git -C "$root" rev-parse --short "$rev")"
done
