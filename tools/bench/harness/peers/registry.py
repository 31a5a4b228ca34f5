# SPDX-License-Identifier: Apache-2.0
"""Where every peer kernel comes from: repository, commit, the file with its public function,
the minimum of its import closure, and the stubs that replace engine modules.

Pure data (no torch): `fetch_peers.py` fills `.peers/` from it and `peers/_load.py` imports from
it. Layout under the peers directory (default `<repo>/.peers`):

    classic/<owner>+<name>/<path in the repository>     files taken at the commit
    classic/<owner>+<name>/<stub path>                  stubs (text below)
    classic/_fallback/<module>                          used only when the machine lacks it

`classic/<owner>+<name>/<root>` goes first on sys.path, `_fallback` last. Package `__init__.py`
files are stubs (empty markers): the real ones import the engine. Two SGLang commits share one
tree: their files do not overlap.
"""

from __future__ import annotations

import dataclasses

SUBDIR = "classic"
FALLBACK = "_fallback"


@dataclasses.dataclass(frozen=True)
class Stub:
    """A file written by fetch_peers.py in place of the real one, and why."""

    path: str
    text: str
    why: str


@dataclasses.dataclass(frozen=True)
class Peer:
    """One peer kernel: `function` of `module`, from `files` of `repo` at `commit`."""

    key: str
    repo: str
    commit: str
    root: str  # the sys.path entry, relative to the repository's tree
    module: str
    function: str
    kernel_file: str  # the file that holds `function`
    closure: tuple[str, ...]  # other files of the repository it imports, taken at `commit`
    stubs: tuple[Stub, ...]

    @property
    def tree(self) -> str:
        """The repository's folder under the peers directory."""
        return f"{SUBDIR}/{self.repo.replace('/', '+')}"

    @property
    def files(self) -> tuple[str, ...]:
        return (self.kernel_file, *self.closure)


def _marker(path: str) -> Stub:
    return Stub(
        path,
        "# STUB (wyjit harness): package marker; the real __init__.py imports the engine.\n",
        "the real package __init__ imports the engine",
    )


def _markers(*paths: str) -> tuple[Stub, ...]:
    return tuple(_marker(p) for p in paths)


_SGLANG_FLA = "python/sglang/srt/layers/attention/fla"
_SGLANG_COMMON = Stub(
    "python/sglang/srt/utils/common.py",
    "# STUB (wyjit harness) for sglang.srt.utils.common: only what fla/utils.py imports.\n"
    "import torch\n\n"
    'torch_release = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])\n',
    "the real module is the engine's utility hub (imports most of sglang); fla/utils.py "
    "needs only torch_release",
)
_SGLANG_SRT_MARKERS = _markers(
    "python/sglang/__init__.py",
    "python/sglang/srt/__init__.py",
    "python/sglang/srt/layers/__init__.py",
    "python/sglang/srt/layers/attention/__init__.py",
    f"{_SGLANG_FLA}/__init__.py",
    "python/sglang/srt/utils/__init__.py",
)
_SGLANG_KERNELS_MARKERS = _markers(
    "python/sglang/__init__.py",
    "python/sglang/kernels/__init__.py",
    "python/sglang/kernels/ops/__init__.py",
    "python/sglang/kernels/ops/attention/__init__.py",
    "python/sglang/kernels/ops/attention/fla/__init__.py",
)

_VLLM_TRITON_UTILS = Stub(
    "vllm/triton_utils/__init__.py",
    "# STUB (wyjit harness) for vllm.triton_utils: the real triton only.\n"
    "import triton\n"
    "import triton.language as tl\n"
    "import triton.language.extra.libdevice as tldevice\n\n"
    "HAS_TRITON = True\n",
    "the real module wraps triton in placeholders and imports vllm's logger",
)
_VLLM_PAD_SLOT = Stub(
    "vllm/attention/backends/utils.py",
    "# STUB (wyjit harness) for vllm.attention.backends.utils: only PAD_SLOT_ID.\n"
    "PAD_SLOT_ID = -1\n",
    "the real module imports the attention backends; causal_conv1d.py needs only PAD_SLOT_ID",
)
_VLLM_MARKERS = _markers(
    "vllm/__init__.py",
    "vllm/model_executor/__init__.py",
    "vllm/model_executor/layers/__init__.py",
)

PEERS: dict[str, Peer] = {
    p.key: p
    for p in (
        Peer(
            key="sglang_update",
            repo="sgl-project/sglang",
            commit="10faf33794f8f43adc8bfe43eccc57415c9d16eb",
            root="python",
            module="sglang.srt.layers.attention.fla.fused_recurrent",
            function="fused_recurrent_gated_delta_rule_update",
            kernel_file=f"{_SGLANG_FLA}/fused_recurrent.py",
            closure=(
                f"{_SGLANG_FLA}/op.py",
                f"{_SGLANG_FLA}/stochastic_round.py",
                f"{_SGLANG_FLA}/utils.py",
            ),
            stubs=(*_SGLANG_SRT_MARKERS, _SGLANG_COMMON),
        ),
        Peer(
            key="sglang_verify",
            repo="sgl-project/sglang",
            commit="00e1106f4ab55cfb7dceeba2dfbc04b0cc40bb6f",
            root="python",
            module="sglang.kernels.ops.attention.fla.fused_sigmoid_gating_recurrent",
            function="fused_sigmoid_gating_delta_rule_update",
            kernel_file="python/sglang/kernels/ops/attention/fla/fused_sigmoid_gating_recurrent.py",
            closure=(),  # imports only torch and triton
            stubs=_SGLANG_KERNELS_MARKERS,
        ),
        Peer(
            key="vllm_spec",
            repo="vllm-project/vllm",
            commit="03c6dad84ad3b1df303e98805a3a0324d70e1539",
            root="",
            module="vllm.model_executor.layers.fla.ops.fused_recurrent",
            function="fused_recurrent_gated_delta_rule",
            kernel_file="vllm/model_executor/layers/fla/ops/fused_recurrent.py",
            closure=("vllm/model_executor/layers/fla/ops/op.py",),
            stubs=(
                *_VLLM_MARKERS,
                _marker("vllm/model_executor/layers/fla/__init__.py"),
                Stub(
                    "vllm/model_executor/layers/fla/ops/__init__.py",
                    "# STUB (wyjit harness): package marker; the real one imports every FLA op.\n",
                    "the real one imports chunk, layernorm and the other FLA ops",
                ),
                _VLLM_TRITON_UTILS,
            ),
        ),
        Peer(
            key="vllm_conv1d",
            repo="vllm-project/vllm",
            commit="03c6dad84ad3b1df303e98805a3a0324d70e1539",
            root="",
            module="vllm.model_executor.layers.mamba.ops.causal_conv1d",
            function="causal_conv1d_update",
            kernel_file="vllm/model_executor/layers/mamba/ops/causal_conv1d.py",
            closure=(),
            stubs=(
                *_VLLM_MARKERS,
                *_markers(
                    "vllm/model_executor/layers/mamba/__init__.py",
                    "vllm/model_executor/layers/mamba/ops/__init__.py",
                    "vllm/attention/__init__.py",
                    "vllm/attention/backends/__init__.py",
                ),
                _VLLM_PAD_SLOT,
                _VLLM_TRITON_UTILS,
            ),
        ),
    )
}

# Modules a peer imports that a bare torch + triton machine may lack. They sit last on sys.path,
# so an installed package always wins; what the benchmark calls never uses them.
FALLBACKS: tuple[Stub, ...] = (
    Stub(
        "packaging/__init__.py",
        "# STUB (wyjit harness): fallback used only when `packaging` is not installed.\n",
        "sglang fla/utils.py imports packaging.version at module level",
    ),
    Stub(
        "packaging/version.py",
        "# STUB (wyjit harness): fallback used only when `packaging` is not installed.\n"
        "# sglang fla/utils.py calls parse() only in check_environments(), never at import.\n"
        "import re\n\n\n"
        "class Version(tuple):\n"
        "    def __new__(cls, text):\n"
        '        return super().__new__(cls, (int(p) for p in re.findall(r"\\d+", str(text))[:3]))\n\n\n'
        "def parse(text):\n"
        "    return Version(text)\n",
        "sglang fla/utils.py imports packaging.version at module level",
    ),
    Stub(
        "numpy/__init__.py",
        "# STUB (wyjit harness): fallback used only when numpy is not installed.\n"
        "# vLLM causal_conv1d.py uses numpy only in causal_conv1d_fn (prefill), never in\n"
        "# causal_conv1d_update.\n\n\n"
        "def __getattr__(name):\n"
        '    raise ImportError(f"numpy is not installed (numpy.{name} was asked for)")\n',
        "vLLM causal_conv1d.py imports numpy at module level",
    ),
)


def peer(key: str) -> Peer:
    if key not in PEERS:
        raise KeyError(f"unknown peer {key!r}; known: {', '.join(PEERS)}")
    return PEERS[key]
