#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds wyjit (installing what is missing), then fills cache/ with the standard variant
# matrix: `wyjit precompile --cache-dir cache [--arch sm_90] ARGS...`.
#
#   tools/run-precompile.sh                          sm_90, standard matrix
#   tools/run-precompile.sh --arch sm_90 --arch sm_100a --k 1-8
#
# Exits with the CLI's status: 0 all ok, 1 a variant failed, 2 bad arguments.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=setup-deps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup-deps.sh"
cd "$WYJIT_ROOT"
wyjit_setup

args=("$@")
has_arch=0
for arg in "${args[@]}"; do
  case "$arg" in
    --arch | --arch=*) has_arch=1 ;;
  esac
done
if [[ $has_arch -eq 0 ]]; then
  args=(--arch sm_90 "${args[@]}")
fi

status=0
"$WYJIT_BUILD_DIR/bin/wyjit" precompile --cache-dir cache "${args[@]}" || status=$?
exit "$status"
