#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Creates the virtual environment the Python tests (tests/python, run by CTest) run in,
# $WYJIT_BUILD_DIR/venv, with pytest from PyPI; tools/run-tests.sh hands its interpreter to CMake
# (-DWYJIT_PYTHON). An environment that is already there with pytest is kept as it is.
# python/wyjit itself needs nothing beyond the standard library; the GPU test also uses torch
# where the base interpreter has it, and skips without it.
#
#   tools/setup-python.sh            create it (installing python3-venv), print its interpreter
#   source tools/setup-python.sh     define the functions only (tools/run-tests.sh does this)
#
# Environment:
#   PYTHON            the interpreter it is built from (default: /usr/bin/python3, else python3)
#   WYJIT_BUILD_DIR   as for tools/setup-deps.sh
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=setup-deps.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup-deps.sh"

# NOTE: /usr/bin/python3 rather than the python3 first on PATH: it is the one python3-venv makes
# ready, so the tests run the same on a fresh machine as on one with pyenv or conda in front.
wyjit_base_python() {
  if [[ -n "${PYTHON:-}" ]]; then
    echo "$PYTHON"
  elif [[ -x /usr/bin/python3 ]]; then
    echo /usr/bin/python3
  else
    echo python3
  fi
}

# Sets WYJIT_VENV_PYTHON to the interpreter of $WYJIT_BUILD_DIR/venv, creating the environment
# when it is missing, broken, lacks pytest or was built from another interpreter.
wyjit_setup_python_venv() {
  local venv="$WYJIT_BUILD_DIR/venv" base identity want have
  base="$(wyjit_base_python)"
  command -v "$base" >/dev/null 2>&1 ||
    wyjit_die "$base not found (on Debian: apt-get install python3-venv; or set PYTHON)"
  identity='import sys; print(sys.base_prefix, *sys.version_info[:2])'
  want="$("$base" -c "$identity")" || wyjit_die "$base does not run"
  WYJIT_VENV_PYTHON="$venv/bin/python"
  if have="$("$WYJIT_VENV_PYTHON" -c "import pytest; $identity" 2>/dev/null)" &&
    [[ "$have" == "$want" ]]; then
    return 0
  fi
  wyjit_log "creating $venv from $base ($("$base" --version 2>&1)) with pytest from PyPI"
  rm -rf "$venv"
  mkdir -p "$WYJIT_BUILD_DIR"
  # NOTE: the base's packages stay visible (--system-site-packages) so that torch installed for
  # it reaches the GPU test; --ignore-installed still puts pytest into the environment itself,
  # so the tests never depend on a pytest that someone installed for the base by hand.
  if ! "$base" -m venv --system-site-packages "$venv"; then
    rm -rf "$venv"
    wyjit_die "'$base -m venv' failed (Debian's python needs the python3-venv package)"
  fi
  if ! "$WYJIT_VENV_PYTHON" -m pip install --quiet --disable-pip-version-check --ignore-installed \
    pytest; then
    rm -rf "$venv"
    wyjit_die "pip could not install pytest into $venv (PyPI must be reachable)"
  fi
  wyjit_log "$venv: $("$WYJIT_VENV_PYTHON" -c 'import pytest; print("pytest", pytest.__version__)')"
}

# Run everything when executed, define the functions only when sourced.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  wyjit_install_packages python3-venv
  wyjit_setup_python_venv
  echo "$WYJIT_VENV_PYTHON"
fi
