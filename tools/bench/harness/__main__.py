# SPDX-License-Identifier: Apache-2.0
"""`python3 tools/bench/harness ...`: runs the harness package (see cli.py)."""

import pathlib
import sys

# NOTE: run as a directory, sys.path[0] is this folder; the package is imported from its parent
# instead, so that its modules are never imported twice under two names.
_here = pathlib.Path(__file__).resolve().parent
if sys.path and pathlib.Path(sys.path[0] or ".").resolve() == _here:
    sys.path[0] = str(_here.parent)
else:
    sys.path.insert(0, str(_here.parent))

from harness.cli import main  # noqa: E402

sys.exit(main())
