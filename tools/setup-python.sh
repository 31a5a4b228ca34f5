#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs what the Python tests (tests/python, run by CTest) need: pytest, for the python3 on
# PATH (or $PYTHON). python/wyjit itself needs nothing beyond the standard library; the GPU
# test also uses torch where it is installed, and skips without it.
#
#   tools/setup-python.sh
set -euo pipefail

python="${PYTHON:-python3}"
log() { echo "setup-python: $*" >&2; }

command -v "$python" >/dev/null 2>&1 || {
  log "error: $python not found (set PYTHON to the interpreter CTest uses)"
  exit 1
}
if "$python" -c "import pytest" >/dev/null 2>&1; then
  log "pytest is already installed for $("$python" -c 'import sys; print(sys.executable)')"
  exit 0
fi
log "installing pytest for $python"
# NOTE: Debian's system python refuses pip installs (PEP 668) unless told otherwise; a virtual
# environment or pyenv python needs no flag.
if ! "$python" -m pip install --quiet pytest; then
  log "retrying with --user --break-system-packages (externally managed Python)"
  "$python" -m pip install --quiet --user --break-system-packages pytest
fi
"$python" -c "import pytest; print('setup-python: pytest', pytest.__version__)"
