#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs what the build and the tests need (Debian packages; pytest into a virtual environment
# in the build folder, tools/setup-python.sh), builds wyjit, then runs every test with CTest. GPU
# tests report as skipped on a machine with no CUDA device. Exits non-zero when a test fails.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=setup-python.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup-python.sh"
cd "$WYJIT_ROOT"
wyjit_install_packages "${WYJIT_DEB_PACKAGES[@]}" "${WYJIT_TEST_DEB_PACKAGES[@]}"
wyjit_check_cuda
wyjit_setup_python_venv
wyjit_configure_and_build "-DWYJIT_PYTHON=$WYJIT_VENV_PYTHON"

status=0
ctest --test-dir "$WYJIT_BUILD_DIR" --output-on-failure -j2 || status=$?
exit "$status"
