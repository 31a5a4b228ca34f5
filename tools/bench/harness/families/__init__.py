# SPDX-License-Identifier: Apache-2.0
"""Benchmark families as plug-ins. A family module supplies:

- `add_arguments(parser)` and `points(args)`: its axes;
- `bytes_moved(point)`: the bytes one call must move at least (the floor's numerator);
- `make_inputs(point, seed)`: random logical inputs for one buffer set;
- `runners(args)`: wyjit's runners and the peers' for the family;
- `reference(point, inputs)` and `tolerance(point, key)`: what --check compares against;
- optionally `plan(point, args)` (the rotation, where calls must cover a run),
  `point_info(point, runners)` (more fields of a JSON points entry), `notes_md(points)`
  (Markdown after the tables) and `peer_tolerance(point, key)` (--check's bound for peers).
"""

from __future__ import annotations

import importlib
from types import ModuleType

NAMES = ("gdn_verify", "conv1d_update", "gdn_replay")


def load(name: str) -> ModuleType:
    if name not in NAMES:
        raise ValueError(f"unknown family {name!r}; known: {', '.join(NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")
