# SPDX-License-Identifier: Apache-2.0
"""Peer kernels: one module per peer (where it comes from, `SOURCE`, and its call mapped onto
wyjit's semantics), `registry` (collects the sources), `_load` (imports them from `.peers/`)."""
