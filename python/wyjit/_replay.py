# SPDX-License-Identifier: Apache-2.0
"""gdn_replay: checked launches of replay mode's three kernels (verify, commit, materialize) on
tensors or pointers. The contract (checkpoint, log tile, cursor, the step protocol):
include/wyjit/gdn_replay.h and docs/replay.md."""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from . import _errors, _lib
from ._args import family_spec, fresh, positive_int
from ._gdn_tokens import GDN_TOKEN_FIELDS, fill_gdn_tokens
from ._jit import Kernel, stream_handle
from ._prepared import Launch, PreparedLaunch
from ._spec import Spec
from ._states import ContiguousTile, StateRefs, fill_state_refs
from ._tensors import Array, array, check_dtype, rows, same_device

_FAMILY = "gdn_replay"

# wyjit_gdn_replay_path
PATHS = {"auto": 0, "in_turn": 1, "wy": 2}


class GdnReplayVerifyArgs(ctypes.Structure):
    """wyjit_gdn_replay_verify_args."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        *GDN_TOKEN_FIELDS,
        ("states", StateRefs),
        ("log", StateRefs),
        ("cursor", ctypes.c_void_p),
        ("cursor_stride", ctypes.c_int64),
        ("path", ctypes.c_int32),
    ]


class GdnReplayCommitArgs(ctypes.Structure):
    """wyjit_gdn_replay_commit_args."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("k", ctypes.c_int32),
        ("cursor", ctypes.c_void_p),
        ("cursor_stride", ctypes.c_int64),
        ("accepted", ctypes.c_void_p),
    ]


class GdnReplayMaterializeArgs(ctypes.Structure):
    """wyjit_gdn_replay_materialize_args."""

    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("batch", ctypes.c_int32),
        ("num_k_heads", ctypes.c_int32),
        ("num_v_heads", ctypes.c_int32),
        ("dk", ctypes.c_int32),
        ("dv", ctypes.c_int32),
        ("states", StateRefs),
        ("log", StateRefs),
        ("cursor", ctypes.c_void_p),
        ("cursor_stride", ctypes.c_int64),
        ("out", StateRefs),
    ]


_lib.declare_family("gdn_replay_verify", GdnReplayVerifyArgs)
_lib.declare_family("gdn_replay_commit", GdnReplayCommitArgs)
_lib.declare_family("gdn_replay_materialize", GdnReplayMaterializeArgs)

# The keywords of the log's references and of materialize's output, by the names fill_state_refs
# gives the arguments (the checkpoints' are the plain names, as in the other families).
_LOG = {"state": "log", "tables": "log_tables", "read_slot": "log_slot",
        "state_seq_stride": "log_seq_stride", "slot_stride": "log_slot_stride",
        "num_slots": "log_num_slots"}
_OUT = {"state": "out", "tables": "out_tables", "write_slot": "out_slot",
        "state_seq_stride": "out_seq_stride", "slot_stride": "out_slot_stride",
        "num_slots": "out_num_slots", "read_slot": "out_read_slot"}


def gdn_replay_log_floats(spec: "Spec | str", num_k_heads: int, num_v_heads: int) -> int:
    """Floats of one log tile (one sequence and layer): L*(HK*dk + HV*dv + HV)."""
    s = family_spec(spec, _FAMILY, "gdn_replay_log_floats")
    hk = positive_int("num_k_heads", num_k_heads)
    hv = positive_int("num_v_heads", num_v_heads)
    return s.log * (hk * s.dk + hv * s.dv + hv)


def _cursor(c: ctypes.Structure, batch: int, cursor: Any, cursor_stride: Optional[int],
            arrays: list) -> None:
    """cursor int32 [batch, >= 2] ({base, len} per sequence; rows any stride)."""
    x = array("cursor", cursor)
    if x is None:
        raise _errors.invalid_argument("cursor is required: int32 [batch, 2] {base, len}")
    check_dtype(x, "i32")
    arrays.append(x)
    if x.described:
        shape = x.shape
        assert shape is not None
        if len(shape) != 2 or shape[0] != batch or shape[1] < 2:
            raise _errors.invalid_argument(
                f"cursor has shape {list(shape)}, expected [{batch}, >= 2] (base, len)"
            )
        cursor_stride = rows(x, batch, shape[1], cursor_stride, "cursor_stride")
    elif cursor_stride is None:
        raise _errors.invalid_argument("cursor is a raw pointer: pass cursor_stride")
    c.cursor, c.cursor_stride = x.ptr, cursor_stride


def _replay_refs(c: ctypes.Structure, spec: Spec, batch: int, hk: int, hv: int, arrays: list,
                 *, checkpoint_writes: int, state: Any, tables: Any, read_slot: Any,
                 write_slot: Any, state_seq_stride: Optional[int], slot_stride: Optional[int],
                 num_slots: Optional[int], write_slot_stride: Optional[int], log: Any,
                 log_tables: Any, log_slot: Any, log_seq_stride: Optional[int],
                 log_slot_stride: Optional[int], log_num_slots: Optional[int], cursor: Any,
                 cursor_stride: Optional[int]) -> None:
    """The checkpoints (`state`, ...; a verify's fold writes one tile a sequence) and the log
    tiles (`log`, ...; updated in place) of verify and materialize, and the cursor."""
    fill_state_refs(
        c.states, spec_name=spec.name, addressing=spec.addressing, writes=checkpoint_writes,
        tile=ContiguousTile(hv * spec.dk * spec.dv), batch=batch, dtype=spec.state,
        arrays=arrays, state=state, inter=None, tables=tables, read_slot=read_slot,
        write_slot=write_slot, state_seq_stride=state_seq_stride, inter_seq_stride=None,
        inter_tok_stride=None, slab_stride=None, slot_stride=slot_stride, num_slots=num_slots,
        write_slot_stride=write_slot_stride,
    )
    fill_state_refs(
        c.log, spec_name=spec.name, addressing=spec.addressing, writes=0,
        tile=ContiguousTile(gdn_replay_log_floats(spec, hk, hv)), batch=batch, dtype="f32",
        arrays=arrays, state=log, inter=None, tables=log_tables, read_slot=log_slot,
        write_slot=None, state_seq_stride=log_seq_stride, inter_seq_stride=None,
        inter_tok_stride=None, slab_stride=None, slot_stride=log_slot_stride,
        num_slots=log_num_slots, write_slot_stride=None, names=_LOG,
    )
    _cursor(c, batch, cursor, cursor_stride, arrays)


def build_gdn_replay_verify_args(
    spec: "Spec | str",
    *,
    batch: int,
    num_k_heads: int,
    num_v_heads: int,
    q: Any,
    k: Any,
    v: Any,
    out: Any,
    cursor: Any,
    log: Any = None,
    g: Any = None,
    beta: Any = None,
    a: Any = None,
    b: Any = None,
    a_log: Any = None,
    dt_bias: Any = None,
    state: Any = None,
    tables: Any = None,
    read_slot: Any = None,
    write_slot: Any = None,
    log_tables: Any = None,
    log_slot: Any = None,
    scale: Optional[float] = None,
    qk_stride: Optional[int] = None,
    v_stride: Optional[int] = None,
    gb_stride: Optional[int] = None,
    o_stride: Optional[int] = None,
    state_seq_stride: Optional[int] = None,
    slot_stride: Optional[int] = None,
    num_slots: Optional[int] = None,
    write_slot_stride: Optional[int] = None,
    log_seq_stride: Optional[int] = None,
    log_slot_stride: Optional[int] = None,
    log_num_slots: Optional[int] = None,
    cursor_stride: Optional[int] = None,
    path: str = "auto",
) -> GdnReplayVerifyArgs:
    """The C argument struct (wyjit_gdn_replay_verify_args) of one verify, after checking every
    array against the variant (see gdn_replay_verify)."""
    spec = family_spec(spec, _FAMILY, "gdn_replay_verify")
    batch = positive_int("batch", batch)
    hk = positive_int("num_k_heads", num_k_heads)
    hv = positive_int("num_v_heads", num_v_heads)
    path_code = PATHS.get(path) if isinstance(path, str) else None
    if path_code is None:
        raise _errors.invalid_argument(f"path is {path!r}, allowed: {', '.join(PATHS)}")
    arrays: list[Array] = []
    c = fresh(GdnReplayVerifyArgs, "wyjit_gdn_replay_verify_args_init")
    c.path = path_code
    fill_gdn_tokens(
        c, spec, arrays, batch=batch, hk=hk, hv=hv, q=q, k=k, v=v, out=out, g=g, beta=beta,
        a=a, b=b, a_log=a_log, dt_bias=dt_bias, scale=scale, qk_stride=qk_stride,
        v_stride=v_stride, gb_stride=gb_stride, o_stride=o_stride,
    )
    _replay_refs(
        c, spec, batch, hk, hv, arrays, checkpoint_writes=1, state=state, tables=tables,
        read_slot=read_slot, write_slot=write_slot, state_seq_stride=state_seq_stride,
        slot_stride=slot_stride, num_slots=num_slots, write_slot_stride=write_slot_stride,
        log=log, log_tables=log_tables, log_slot=log_slot, log_seq_stride=log_seq_stride,
        log_slot_stride=log_slot_stride, log_num_slots=log_num_slots, cursor=cursor,
        cursor_stride=cursor_stride,
    )
    same_device(arrays)
    return c


def build_gdn_replay_commit_args(
    spec: "Spec | str",
    *,
    batch: int,
    cursor: Any,
    accepted: Any,
    cursor_stride: Optional[int] = None,
) -> GdnReplayCommitArgs:
    """The C argument struct (wyjit_gdn_replay_commit_args) of one commit (see
    gdn_replay_commit)."""
    spec = family_spec(spec, _FAMILY, "gdn_replay_commit")
    batch = positive_int("batch", batch)
    arrays: list[Array] = []
    c = fresh(GdnReplayCommitArgs, "wyjit_gdn_replay_commit_args_init")
    c.batch, c.k = batch, spec.k
    _cursor(c, batch, cursor, cursor_stride, arrays)
    x = array("accepted", accepted)
    if x is None:
        raise _errors.invalid_argument("accepted is required: int32 [batch], tokens accepted")
    check_dtype(x, "i32")
    if rows(x, batch, 1, 1 if not x.described else None, "accepted stride") != 1:
        raise _errors.invalid_argument(f"accepted must be contiguous [batch], got {x.strides}")
    arrays.append(x)
    c.accepted = x.ptr
    same_device(arrays)
    return c


def build_gdn_replay_materialize_args(
    spec: "Spec | str",
    *,
    batch: int,
    num_k_heads: int,
    num_v_heads: int,
    cursor: Any,
    log: Any = None,
    out: Any = None,
    state: Any = None,
    tables: Any = None,
    read_slot: Any = None,
    log_tables: Any = None,
    log_slot: Any = None,
    out_tables: Any = None,
    out_slot: Any = None,
    state_seq_stride: Optional[int] = None,
    slot_stride: Optional[int] = None,
    num_slots: Optional[int] = None,
    log_seq_stride: Optional[int] = None,
    log_slot_stride: Optional[int] = None,
    log_num_slots: Optional[int] = None,
    out_seq_stride: Optional[int] = None,
    out_slot_stride: Optional[int] = None,
    out_num_slots: Optional[int] = None,
    cursor_stride: Optional[int] = None,
) -> GdnReplayMaterializeArgs:
    """The C argument struct (wyjit_gdn_replay_materialize_args) of one materialize (see
    gdn_replay_materialize)."""
    spec = family_spec(spec, _FAMILY, "gdn_replay_materialize")
    batch = positive_int("batch", batch)
    hk = positive_int("num_k_heads", num_k_heads)
    hv = positive_int("num_v_heads", num_v_heads)
    arrays: list[Array] = []
    c = fresh(GdnReplayMaterializeArgs, "wyjit_gdn_replay_materialize_args_init")
    c.batch, c.num_k_heads, c.num_v_heads, c.dk, c.dv = batch, hk, hv, spec.dk, spec.dv
    _replay_refs(
        c, spec, batch, hk, hv, arrays, checkpoint_writes=0, state=state, tables=tables,
        read_slot=read_slot, write_slot=None, state_seq_stride=state_seq_stride,
        slot_stride=slot_stride, num_slots=num_slots, write_slot_stride=None, log=log,
        log_tables=log_tables, log_slot=log_slot, log_seq_stride=log_seq_stride,
        log_slot_stride=log_slot_stride, log_num_slots=log_num_slots, cursor=cursor,
        cursor_stride=cursor_stride,
    )
    # NOTE: out_slot is [batch], one slot a sequence: a raw pointer's stride is 1.
    slots = array("out_slot", out_slot)
    fill_state_refs(
        c.out, spec_name=spec.name, addressing=spec.addressing, writes=1, reads=False,
        tile=ContiguousTile(hv * spec.dk * spec.dv), batch=batch, dtype=spec.state,
        arrays=arrays, state=out, inter=None, tables=out_tables, read_slot=None,
        write_slot=out_slot, state_seq_stride=out_seq_stride, inter_seq_stride=None,
        inter_tok_stride=None, slab_stride=None, slot_stride=out_slot_stride,
        num_slots=out_num_slots,
        write_slot_stride=None if slots is None or slots.described else 1, names=_OUT,
    )
    same_device(arrays)
    return c


def _check(entry: str, spec: Spec, c: ctypes.Structure) -> None:
    _lib.check(getattr(_lib.lib(), f"wyjit_check_{entry}")(spec.name.encode(), ctypes.byref(c)))


def check_gdn_replay_verify(spec: "Spec | str", **arguments: Any) -> None:
    """Every check of gdn_replay_verify (Python's and the library's), without a GPU."""
    s = family_spec(spec, _FAMILY, "check_gdn_replay_verify")
    _check("gdn_replay_verify", s, build_gdn_replay_verify_args(s, **arguments))


def check_gdn_replay_commit(spec: "Spec | str", **arguments: Any) -> None:
    """Every check of gdn_replay_commit (Python's and the library's), without a GPU."""
    s = family_spec(spec, _FAMILY, "check_gdn_replay_commit")
    _check("gdn_replay_commit", s, build_gdn_replay_commit_args(s, **arguments))


def check_gdn_replay_materialize(spec: "Spec | str", **arguments: Any) -> None:
    """Every check of gdn_replay_materialize (Python's and the library's), without a GPU."""
    s = family_spec(spec, _FAMILY, "check_gdn_replay_materialize")
    _check("gdn_replay_materialize", s, build_gdn_replay_materialize_args(s, **arguments))


def _launch(entry: str, kernel: Kernel, c: ctypes.Structure, stream: Any) -> None:
    _lib.check(getattr(_lib.lib(), f"wyjit_launch_{entry}")(kernel.handle, ctypes.byref(c),
                                                            stream_handle(stream)))


def gdn_replay_verify(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches a gdn_replay variant's verify (one layer, one step) on `stream`. Allocates and
    copies nothing, never synchronises: a whole step can be captured in a CUDA graph.

    Arguments (tensors or raw device pointers; strides in elements, derived from tensors):
      batch, num_k_heads, num_v_heads, the token rows q, k, v, out and g/beta (or a, b, a_log,
      dt_bias with `gating`), scale: as gdn_verify
      the checkpoints (HV*dk*dv of the checkpoint dtype a sequence, the variant's layout; a
      fold writes S_cur over them):
        strided: state [batch, ...]; table: tables=TableStager(1, max_batch);
        slot: state [num_slots, ...] pool, read_slot int32 [batch], write_slot int32 [batch]
      the log tiles (fp32, gdn_replay_log_floats(spec, HK, HV) floats a sequence, updated in
      place), in the same addressing: strided: log [batch, ...]; table:
        log_tables=TableStager(1, max_batch); slot: log [num_slots, ...] pool, log_slot int32
        [batch]
      cursor: int32 [batch, 2] {base, len}, device; read, never written (gdn_replay_commit
        moves it)
      raw pointers need their strides: as gdn_verify, and state_seq_stride / slot_stride /
      num_slots / write_slot_stride, log_seq_stride / log_slot_stride / log_num_slots,
      cursor_stride
      path: "auto", "in_turn" or "wy" (the two verify kernels; kv has only the WY form)
    """
    _launch("gdn_replay_verify", kernel, build_gdn_replay_verify_args(kernel.spec, **arguments),
            stream)


def gdn_replay_commit(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches the commit of one step, for every layer at once (they share the cursors): from
    accepted int32 [batch] (device; 0..K, more is taken as K, negative: padding, the cursor is
    left as it was), moves cursor int32 [batch, 2] on the device."""
    _launch("gdn_replay_commit", kernel, build_gdn_replay_commit_args(kernel.spec, **arguments),
            stream)


def gdn_replay_materialize(kernel: Kernel, *, stream: Any = None, **arguments: Any) -> None:
    """Launches a materialize: S_cur of each sequence of one layer into `out` (strided: out
    [batch, ...]; table: out_tables=TableStager(1, max_batch), a null entry skips the
    sequence; slot: out [num_slots, ...] pool and out_slot int32 [batch]), reading the
    checkpoints, the log tiles and the cursor as gdn_replay_verify does (slot: no write_slot).
    Changes nothing else."""
    _launch("gdn_replay_materialize", kernel,
            build_gdn_replay_materialize_args(kernel.spec, **arguments), stream)


_VERIFY = Launch("gdn_replay_verify", _FAMILY, build_gdn_replay_verify_args)
_COMMIT = Launch("gdn_replay_commit", _FAMILY, build_gdn_replay_commit_args)
_MATERIALIZE = Launch("gdn_replay_materialize", _FAMILY, build_gdn_replay_materialize_args)


def prepare_gdn_replay_verify(kernel: "Kernel | Spec | str", **arguments: Any) -> PreparedLaunch:
    """gdn_replay_verify checked once, for launches that only swap arrays (see
    prepare_gdn_verify)."""
    return PreparedLaunch(_VERIFY, kernel, arguments)


def prepare_gdn_replay_commit(kernel: "Kernel | Spec | str", **arguments: Any) -> PreparedLaunch:
    """gdn_replay_commit checked once, for launches that only swap arrays (cursor,
    accepted)."""
    return PreparedLaunch(_COMMIT, kernel, arguments)


def prepare_gdn_replay_materialize(kernel: "Kernel | Spec | str",
                                   **arguments: Any) -> PreparedLaunch:
    """gdn_replay_materialize checked once, for launches that only swap arrays."""
    return PreparedLaunch(_MATERIALIZE, kernel, arguments)
