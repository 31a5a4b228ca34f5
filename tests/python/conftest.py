# SPDX-License-Identifier: Apache-2.0
"""pytest setup: python/ importable without installing (unless WYJIT_TEST_INSTALLED_PACKAGE is
set: then the tests run against the package installed in the environment, tests/wheel/), and
no wyjit environment variable of the caller's leaking into a test."""

import os
import pathlib
import sys

import pytest

_REPO = pathlib.Path(__file__).resolve().parents[2]
if os.environ.get("WYJIT_TEST_INSTALLED_PACKAGE"):
    import wyjit

    if pathlib.Path(wyjit.__file__).resolve().is_relative_to(_REPO / "python"):
        raise RuntimeError(f"WYJIT_TEST_INSTALLED_PACKAGE is set, but wyjit is {wyjit.__file__}")
elif str(_REPO / "python") not in sys.path:
    sys.path.insert(0, str(_REPO / "python"))


@pytest.fixture(autouse=True)
def _clean_wyjit_environment(monkeypatch):
    for name in ("WYJIT_CACHE_DIR", "WYJIT_CACHE_RO_DIRS", "WYJIT_NO_JIT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repo_root() -> pathlib.Path:
    return _REPO
