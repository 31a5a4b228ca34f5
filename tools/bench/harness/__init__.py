# SPDX-License-Identifier: Apache-2.0
"""wyjit's benchmark harness: wyjit's kernels and the peers' public kernels on the same inputs in
one process, graph-replayed on rotated buffer sets, against the copy floor measured in the same
run. Run as `python3 tools/bench/harness --help` from the repository root; see README.md.

Modules that need torch import it inside functions, so that the argument parsing, the bytes
models, the rotation arithmetic and the reports load (and are tested) without it.
"""
