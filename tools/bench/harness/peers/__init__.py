# SPDX-License-Identifier: Apache-2.0
"""Peer kernels: `registry` (where each comes from), `_load` (imports them from `.peers/`), and one
adapter module per peer mapping its call onto wyjit's semantics."""
