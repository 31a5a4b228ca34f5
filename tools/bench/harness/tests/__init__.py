# SPDX-License-Identifier: Apache-2.0
"""CPU tests of the harness (no GPU, no torch): `python3 -m pytest tools/bench/harness`."""
