#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds wyjit (installing what is missing), then runs every test with CTest. GPU tests
# report as skipped on a machine with no CUDA device. Exits non-zero when a test fails.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=setup-deps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup-deps.sh"
cd "$WYJIT_ROOT"
wyjit_setup

status=0
ctest --test-dir "$WYJIT_BUILD_DIR" --output-on-failure -j2 || status=$?
exit "$status"
