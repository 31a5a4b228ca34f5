# SPDX-License-Identifier: Apache-2.0
"""wyjit's launches as torch custom ops (namespace `wyjit`), for torch.compile(fullgraph=True)
and CUDA graph capture. Needs torch; `import wyjit` never imports this module:

    import wyjit.torch_ops                       # registers torch.ops.wyjit.*
    torch.ops.wyjit.gdn_verify(name, batch=B, num_k_heads=HK, num_v_heads=HV, q=q, k=k, v=v,
                               out=out, g=g, beta=beta, state=pool, read_slot=r, write_slot=w)

Each op is the plain launch of the same name (wyjit.gdn_verify, conv1d_update,
gdn_replay_verify, gdn_replay_commit, gdn_replay_materialize) with the same argument names and
the same checks and errors, except that:

- the variant is its canonical name (`variant`, a str: K, dtypes, layout, addressing, l2norm,
  gating... are all in it) and the kernel comes from this module's cache: kernel(variant,
  device), compiled or loaded through use_jit()'s manager (a wyjit.Jit() made on first use);
- arrays are tensors, their strides taken from them (no raw pointers, no explicit strides);
- table addressing takes the table's device address and slab stride (`tables=stager.tables,
  slab_stride=stager.slab_stride`) and `pools`: the tensors its entries point into, which the
  launch writes through the table (listed so that torch orders the op with their other uses);
- the launch goes on torch's current stream of the tensors' device; nothing is returned.

Each op's schema marks exactly the tensors its launch writes as mutated (OPS lists them). Its
fake implementation writes nothing; on CUDA tensors with concrete sizes it runs the plain
launch's checks (no GPU needed), so torch.compile reports a bad call while tracing.

Before capturing a CUDA graph, run the step once eagerly (or call kernel() for each variant on
each device): a launch during capture must find its kernel loaded.
"""

import functools
import inspect
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import _conv1d, _errors, _replay, _verify
from ._args import family_spec
from ._jit import Jit, Kernel
from ._spec import Spec, as_spec
from ._states import refuse

Tensor = torch.Tensor

# ---- the kernels the ops launch: one manager, each variant loaded once per device ------------

_lock = threading.Lock()
_jit: Optional[Jit] = None
_kernels: Dict[Tuple[str, int], Kernel] = {}


def use_jit(jit: Optional[Jit]) -> None:
    """The manager the ops compile and load their kernels through (None: a wyjit.Jit() made
    on first use, options from the environment). Forgets the kernels loaded so far."""
    global _jit
    with _lock:
        _jit = jit
        _kernels.clear()


def kernel(variant: "Spec | str", device: "torch.device | str | int | None" = None) -> Kernel:
    """The kernel the ops launch for `variant` on a CUDA `device` (None: the current one),
    compiled or loaded on first use and kept."""
    name = variant.name if isinstance(variant, Spec) else variant
    index = _index(device)
    found = _kernels.get((name, index))
    if found is not None:
        return found
    spec = as_spec(variant)
    global _jit
    with _lock:
        found = _kernels.get((name, index))
        if found is None:
            if _jit is None:
                _jit = Jit()
            with torch.cuda.device(index):  # Jit.kernel loads into the current context
                found = _jit.kernel(spec)
            _kernels[(name, index)] = found
    return found


def _index(device: "torch.device | str | int | None") -> int:
    if device is None:
        return torch.cuda.current_device()
    d = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    if d.type != "cuda":
        raise _errors.invalid_argument(f"device is {d}: wyjit's kernels run on CUDA devices")
    return torch.cuda.current_device() if d.index is None else d.index


# ---- one op: the prototype's signature is the schema; launch and fake are shared ------------

#: op name -> (the plain launch, its check without a GPU)
_PLAIN: Dict[str, Tuple[Callable[..., None], Callable[..., None]]] = {
    "gdn_verify": (_verify.gdn_verify, _verify.check_gdn_verify),
    "conv1d_update": (_conv1d.conv1d_update, _conv1d.check_conv1d_update),
    "gdn_replay_verify": (_replay.gdn_replay_verify, _replay.check_gdn_replay_verify),
    "gdn_replay_commit": (_replay.gdn_replay_commit, _replay.check_gdn_replay_commit),
    "gdn_replay_materialize": (_replay.gdn_replay_materialize,
                               _replay.check_gdn_replay_materialize),
}

#: op name -> the arguments its schema marks as written (the launch writes them)
OPS: Dict[str, Tuple[str, ...]] = {}

_POOLS = ("pools", "out_pools")  # the ops' own arguments, never passed to the plain launch


_LIBRARY = torch.library.Library("wyjit", "FRAGMENT")


def _op(family: str, writes: Tuple[str, ...]):
    def define(prototype: Callable[..., None]):
        name = prototype.__name__
        signature = inspect.signature(prototype)

        def bound(args: tuple, kwargs: dict) -> Dict[str, Any]:
            b = signature.bind(*args, **kwargs)
            b.apply_defaults()
            return b.arguments

        @functools.wraps(prototype)
        def launch(*args: Any, **kwargs: Any) -> None:
            _run(name, *_plain(name, family, bound(args, kwargs)))

        @functools.wraps(prototype)
        def fake(*args: Any, **kwargs: Any) -> None:
            spec, arguments = _plain(name, family, bound(args, kwargs))
            described = _described(arguments)
            if described is not None:
                _PLAIN[name][1](spec, **described)

        # NOTE: defined through torch.library.Library, not torch.library.custom_op: the
        # dispatcher drops an argument left at its default from the end of the call, and
        # custom_op's version-counter kernel of torch 2.11 then indexes past the arguments for
        # every written one left out (`pools` of a strided launch): IndexError. Without that
        # kernel the dispatcher's own in-place fallback bumps what the schema marks written.
        _LIBRARY.define(name + _schema(prototype, writes))
        _LIBRARY.impl(name, launch, "CompositeExplicitAutograd")
        torch.library.register_fake(f"wyjit::{name}", fake, lib=_LIBRARY)
        OPS[name] = writes
        return getattr(torch.ops.wyjit, name)

    return define


def _schema(prototype: Callable[..., None], writes: Tuple[str, ...]) -> str:
    """The schema torch infers from the prototype, the pools spelled `Tensor[]? pools=None` by
    hand: torch 2.11 cannot infer Optional[List[Tensor]] (later releases can), so they are
    inferred as `Tensor?` and the text rewritten."""
    signature = inspect.signature(prototype)
    stand_in = signature.replace(parameters=[
        p.replace(annotation=Optional[Tensor]) if p.name in _POOLS else p
        for p in signature.parameters.values()])

    def inferred(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a signature only")

    inferred.__signature__ = stand_in  # type: ignore[attr-defined]
    text = torch.library.infer_schema(inferred, mutates_args=writes)
    # NOTE: `Tensor? pools` or, written, `Tensor(a3!)? pools`: the alias stays on the element.
    return re.sub(r"Tensor(\([a-z0-9!]+\))?\? (" + "|".join(_POOLS) + r")=None",
                  r"Tensor\1[]? \2=None", text)


def _plain(name: str, family: str, arguments: Dict[str, Any]) -> Tuple[Spec, Dict[str, Any]]:
    """The variant's spec and the plain launch's arguments (the pools checked and dropped)."""
    arguments = dict(arguments)
    spec = family_spec(arguments.pop("variant"), family, name)
    pools = {n: arguments.pop(n) or None for n in _POOLS if n in arguments}
    if spec.addressing != "table":
        refuse(spec.name, f"{spec.addressing} addressing: pools are table addressing's", pools)
    return spec, arguments


def _run(name: str, spec: Spec, arguments: Dict[str, Any]) -> None:
    """The plain launch on the tensors' device and its current stream (the CPU tests stub this
    one function)."""
    device = next((v.device for v in arguments.values() if isinstance(v, Tensor)), None)
    if device is None or device.type != "cuda":
        _PLAIN[name][1](spec, **arguments)  # raises the plain launch's error, naming the tensor
        raise _errors.invalid_argument(f"{name}: the tensors are on {device}, not a CUDA device")
    index = device.index if device.index is not None else torch.cuda.current_device()
    k = kernel(spec.name, index)
    stream = torch.cuda.current_stream(index).cuda_stream
    if index == torch.cuda.current_device():
        _PLAIN[name][0](k, stream=stream, **arguments)
        return
    with torch.cuda.device(index):
        _PLAIN[name][0](k, stream=stream, **arguments)


class _Described:
    """What the checks read of a tensor that has no memory (a fake one): dtype, shape, strides
    and device, and a stand-in address keeping its alignment (storage offset in bytes)."""

    __slots__ = ("shape", "dtype", "device", "is_cuda", "_strides", "_ptr")

    def __init__(self, t: Tensor, base: int):
        self.shape, self.dtype, self.device, self.is_cuda = tuple(t.shape), t.dtype, t.device, True
        self._strides = tuple(t.stride())
        self._ptr = base + t.storage_offset() * t.element_size()

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self) -> tuple:
        return self._strides


def _described(arguments: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The arguments with each tensor described, or None when a check cannot know them: a
    tensor not on a CUDA device (the real launch refuses it) or a symbolic size or stride."""
    out: Dict[str, Any] = {}
    for i, (name, value) in enumerate(arguments.items()):
        if isinstance(value, Tensor):
            if value.device.type != "cuda":
                return None
            dims = (*value.shape, *value.stride(), value.storage_offset())
            if not all(isinstance(d, int) for d in dims):
                return None
            # NOTE: one 1 TiB-aligned stand-in address an argument, so none overlap.
            value = _Described(value, (0x10 + i) << 40)
        elif value is not None and not isinstance(value, (int, float, str)):
            return None  # a SymInt or SymFloat
        out[name] = value
    return out


# ---- the ops ---------------------------------------------------------------------------------


@_op("gdn_verify", writes=("out", "state", "inter", "pools"))
def gdn_verify(variant: str, batch: int, num_k_heads: int, num_v_heads: int, q: Tensor,
               k: Tensor, v: Tensor, out: Tensor, g: Optional[Tensor] = None,
               beta: Optional[Tensor] = None, a: Optional[Tensor] = None,
               b: Optional[Tensor] = None, a_log: Optional[Tensor] = None,
               dt_bias: Optional[Tensor] = None, state: Optional[Tensor] = None,
               inter: Optional[Tensor] = None, read_slot: Optional[Tensor] = None,
               write_slot: Optional[Tensor] = None, pools: Optional[List[Tensor]] = None,
               tables: Optional[int] = None, slab_stride: Optional[int] = None,
               scale: Optional[float] = None) -> None:
    """wyjit.gdn_verify as an op: writes out and the states (strided: state, inter; slot: the
    pool `state`; table: through `tables` into `pools`)."""


@_op("conv1d_update", writes=("y", "state", "inter", "pools"))
def conv1d_update(variant: str, batch: int, channels: int, x: Tensor, y: Tensor,
                  weight: Tensor, bias: Optional[Tensor] = None,
                  state: Optional[Tensor] = None, inter: Optional[Tensor] = None,
                  read_slot: Optional[Tensor] = None, write_slot: Optional[Tensor] = None,
                  window_offset: Optional[Tensor] = None, pools: Optional[List[Tensor]] = None,
                  tables: Optional[int] = None, slab_stride: Optional[int] = None,
                  state_cols: Optional[int] = None, state_channel_stride: Optional[int] = None,
                  state_col_stride: Optional[int] = None, path: str = "auto") -> None:
    """wyjit.conv1d_update as an op: writes y and the conv states (strided: state, inter;
    slot: the pool `state`; table: through `tables` into `pools`)."""


@_op("gdn_replay", writes=("out", "log", "state", "pools"))
def gdn_replay_verify(variant: str, batch: int, num_k_heads: int, num_v_heads: int, q: Tensor,
                      k: Tensor, v: Tensor, out: Tensor, cursor: Tensor,
                      log: Optional[Tensor] = None, g: Optional[Tensor] = None,
                      beta: Optional[Tensor] = None, a: Optional[Tensor] = None,
                      b: Optional[Tensor] = None, a_log: Optional[Tensor] = None,
                      dt_bias: Optional[Tensor] = None, state: Optional[Tensor] = None,
                      read_slot: Optional[Tensor] = None, write_slot: Optional[Tensor] = None,
                      log_slot: Optional[Tensor] = None, pools: Optional[List[Tensor]] = None,
                      tables: Optional[int] = None, log_tables: Optional[int] = None,
                      scale: Optional[float] = None, path: str = "auto") -> None:
    """wyjit.gdn_replay_verify as an op: writes out, the log tiles and the checkpoints (a fold;
    table: through `tables` and `log_tables` into `pools`). Reads the cursor."""


@_op("gdn_replay", writes=("cursor",))
def gdn_replay_commit(variant: str, batch: int, cursor: Tensor, accepted: Tensor) -> None:
    """wyjit.gdn_replay_commit as an op: moves the cursor."""


@_op("gdn_replay", writes=("out", "out_pools"))
def gdn_replay_materialize(variant: str, batch: int, num_k_heads: int, num_v_heads: int,
                           cursor: Tensor, log: Optional[Tensor] = None,
                           out: Optional[Tensor] = None, state: Optional[Tensor] = None,
                           read_slot: Optional[Tensor] = None, log_slot: Optional[Tensor] = None,
                           out_slot: Optional[Tensor] = None,
                           pools: Optional[List[Tensor]] = None,
                           out_pools: Optional[List[Tensor]] = None,
                           tables: Optional[int] = None, log_tables: Optional[int] = None,
                           out_tables: Optional[int] = None) -> None:
    """wyjit.gdn_replay_materialize as an op: writes S_cur into out (table: through
    `out_tables` into `out_pools`); reads the checkpoints and log tiles (table: `pools`)."""
