# SPDX-License-Identifier: Apache-2.0
"""Imports a peer's public function from the peers directory (`.peers/` by default)."""

from __future__ import annotations

import importlib
import pathlib
import sys
from types import ModuleType
from typing import Callable

from ..core import Unavailable
from . import registry


class PeerMissing(Unavailable):
    """The peer's files are not under the peers directory."""


def peer_paths(peer: registry.Peer, peers_dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """(the sys.path root of the peer's tree, the fallback folder)."""
    tree = peers_dir / peer.tree
    root = tree / peer.root if peer.root else tree
    return root, peers_dir / peer.fallback_dir


def missing_files(peer: registry.Peer, peers_dir: pathlib.Path) -> list[str]:
    tree = peers_dir / peer.tree
    wanted = [*peer.files, *(s.path for s in peer.stubs)]
    return [p for p in wanted if not (tree / p).is_file()]


def load(key: str, peers_dir: pathlib.Path) -> Callable:
    """The peer's function (see load_module)."""
    return getattr(load_module(key, peers_dir), registry.peer(key).function)


def load_module(key: str, peers_dir: pathlib.Path) -> ModuleType:
    """The module of the peer's function (replay adapters call its commit functions too). Its
    tree goes first on sys.path (so a stub package wins over an installed engine of the same
    name), the fallback folder last (so an installed module wins over a fallback)."""
    peer = registry.peer(key)
    missing = missing_files(peer, peers_dir)
    if missing:
        raise PeerMissing(
            f"{key}: {len(missing)} file(s) missing under {peers_dir / peer.tree} (first: "
            f"{missing[0]}); fill it with tools/bench/harness/fetch_peers.py"
        )
    root, fallback = peer_paths(peer, peers_dir)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    if str(fallback) not in sys.path:
        sys.path.append(str(fallback))
    module = importlib.import_module(peer.module)
    origin = pathlib.Path(getattr(module, "__file__", "") or "")
    if root not in origin.parents:
        # NOTE: an engine imported earlier in this process would shadow the extracted file.
        raise PeerMissing(f"{key}: {peer.module} resolved to {origin}, not under {root}")
    return module
