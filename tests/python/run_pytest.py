# SPDX-License-Identifier: Apache-2.0
"""CTest's entry to the Python tests: runs pytest with the given arguments.

tools/run-tests.sh runs it in a virtual environment with pytest (tools/setup-python.sh). Run by
a python3 without pytest, the CPU tests fail with that hint; a single file given after
--or-standalone (the GPU test) then runs on its own runner instead, so a GPU machine without
pytest still checks the kernels from Python.

    python3 run_pytest.py [--or-standalone FILE] PYTEST_ARGS...
"""

import runpy
import sys

args = sys.argv[1:]
standalone = None
if args[:1] == ["--or-standalone"]:
    standalone, args = args[1], args[2:]
try:
    import pytest
except ImportError:
    if standalone is None:
        print(
            f"pytest is not installed for {sys.executable}: tools/run-tests.sh runs these tests"
            " in a virtual environment with pytest (tools/setup-python.sh creates it)"
        )
        sys.exit(1)
    print(f"pytest is not installed for {sys.executable}: running {standalone} on its own")
    runpy.run_path(standalone, run_name="__main__")  # exits with the file's status
    sys.exit(0)
sys.exit(pytest.main(args))
