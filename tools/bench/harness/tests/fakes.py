# SPDX-License-Identifier: Apache-2.0
"""Stand-ins shared by the harness tests."""

from __future__ import annotations


class Fn:
    """Stands in for a peer's function: records its arguments, returns `result`."""

    def __init__(self, result=None):
        self.result = result

    def __call__(self, *args, **kw):
        self.args, self.kw = args, kw
        return self.result
