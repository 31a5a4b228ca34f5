# SPDX-License-Identifier: Apache-2.0
"""Where every peer kernel comes from: repository, commit, the file with its public function,
the minimum of its import closure, and the stubs that replace engine modules.

Each peer module of this package (`peers/<key>.py`, the adapter that calls the peer) declares its
source as `SOURCE = Peer(...)`; `PEERS` collects them. No torch at import: `fetch_peers.py` fills
`.peers/` from it and `peers/_load.py` imports from it. Layout under the peers directory (default
`<repo>/.peers`), SUBDIR being the peer's `subdir` (`classic` or `replay`):

    SUBDIR/<owner>+<name>/<path in the repository>     files taken at the commit
    SUBDIR/<owner>+<name>/<stub path>                  stubs (text below or in the adapter)
    SUBDIR/_fallback/<module>                          used only when the machine lacks it

`SUBDIR/<owner>+<name>/<root>` goes first on sys.path, `_fallback` last. Package `__init__.py`
files are stubs (empty markers): the real ones import the engine. Two SGLang commits share one
tree: their files do not overlap. The replay peers need other commits of the same packages
(vllm, sglang), so they live in their own subdir and run in their own process (their family's).
"""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import pkgutil

SUBDIR = "classic"  # the default subdir
FALLBACK = "_fallback"


@dataclasses.dataclass(frozen=True)
class Stub:
    """A file written by fetch_peers.py in place of the real one, and why."""

    path: str
    text: str
    why: str


@dataclasses.dataclass(frozen=True)
class Alternate:
    """Another git repository that holds the same bytes at the same paths (checked against the
    peer's sha256 pins), for a repository too large to mirror here."""

    repo: str
    commit: str
    why: str


@dataclasses.dataclass(frozen=True)
class Peer:
    """One peer kernel: `function` of `module`, from `files` of `repo` at `commit`; `fallbacks`
    are modules it imports that a bare torch + triton machine may lack (they sit last on
    sys.path, so an installed package always wins; what the benchmark calls never uses them)."""

    key: str
    repo: str
    commit: str
    root: str  # the sys.path entry, relative to the repository's tree
    module: str
    function: str
    kernel_file: str  # the file that holds `function`
    closure: tuple[str, ...]  # other files of the repository it imports, taken at `commit`
    stubs: tuple[Stub, ...]
    fallbacks: tuple[Stub, ...] = ()
    subdir: str = SUBDIR
    # (path, sha256) of files whose bytes were checked against the repository at `commit`:
    # fetch_peers.py refuses a copy from another source (--tree, an alternate) that differs.
    sha256: tuple[tuple[str, str], ...] = ()
    alternates: tuple[Alternate, ...] = ()

    @property
    def tree(self) -> str:
        """The repository's folder under the peers directory."""
        return f"{self.subdir}/{self.repo.replace('/', '+')}"

    @property
    def fallback_dir(self) -> str:
        return f"{self.subdir}/{FALLBACK}"

    @property
    def files(self) -> tuple[str, ...]:
        return (self.kernel_file, *self.closure)


def marker(path: str) -> Stub:
    return Stub(
        path,
        "# STUB (wyjit harness): package marker; the real __init__.py imports the engine.\n",
        "the real package __init__ imports the engine",
    )


def markers(*paths: str) -> tuple[Stub, ...]:
    return tuple(marker(p) for p in paths)


SGLANG_FLA = "python/sglang/srt/layers/attention/fla"
SGLANG_COMMON = Stub(
    "python/sglang/srt/utils/common.py",
    "# STUB (wyjit harness) for sglang.srt.utils.common: only what fla/utils.py imports.\n"
    "import torch\n\n"
    'torch_release = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])\n',
    "the real module is the engine's utility hub (imports most of sglang); fla/utils.py "
    "needs only torch_release",
)
SGLANG_SRT_MARKERS = markers(
    "python/sglang/__init__.py",
    "python/sglang/srt/__init__.py",
    "python/sglang/srt/layers/__init__.py",
    "python/sglang/srt/layers/attention/__init__.py",
    f"{SGLANG_FLA}/__init__.py",
    "python/sglang/srt/utils/__init__.py",
)
SGLANG_KERNELS_MARKERS = markers(
    "python/sglang/__init__.py",
    "python/sglang/kernels/__init__.py",
    "python/sglang/kernels/ops/__init__.py",
    "python/sglang/kernels/ops/attention/__init__.py",
    "python/sglang/kernels/ops/attention/fla/__init__.py",
)

VLLM_TRITON_UTILS = Stub(
    "vllm/triton_utils/__init__.py",
    "# STUB (wyjit harness) for vllm.triton_utils: the real triton only.\n"
    "import triton\n"
    "import triton.language as tl\n"
    "import triton.language.extra.libdevice as tldevice\n\n"
    "HAS_TRITON = True\n",
    "the real module wraps triton in placeholders and imports vllm's logger",
)
VLLM_MARKERS = markers(
    "vllm/__init__.py",
    "vllm/model_executor/__init__.py",
    "vllm/model_executor/layers/__init__.py",
)

def _discover() -> dict[str, Peer]:
    # NOTE: on first use, not at import: the peer modules import this one.
    package = pathlib.Path(__file__).parent
    found: dict[str, Peer] = {}
    for info in sorted(pkgutil.iter_modules([str(package)]), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "registry":
            continue
        source = getattr(importlib.import_module(f"{__package__}.{info.name}"), "SOURCE", None)
        if isinstance(source, Peer):
            if source.key != info.name:
                raise RuntimeError(f"peers/{info.name}.py declares the key {source.key!r}")
            found[source.key] = source
    return found


_PEERS: dict[str, Peer] = {}


def __getattr__(name: str):
    """PEERS: every peer by key; FALLBACKS: every peer's fallbacks, each path once."""
    if name == "PEERS":
        if not _PEERS:
            _PEERS.update(_discover())
        return _PEERS
    if name == "FALLBACKS":
        seen: dict[str, Stub] = {}
        for p in __getattr__("PEERS").values():
            for s in p.fallbacks:
                seen.setdefault(s.path, s)
        return tuple(seen.values())
    raise AttributeError(name)


def peer(key: str) -> Peer:
    peers = __getattr__("PEERS")
    if key not in peers:
        raise KeyError(f"unknown peer {key!r}; known: {', '.join(peers)}")
    return peers[key]
