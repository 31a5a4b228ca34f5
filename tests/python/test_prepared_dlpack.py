# SPDX-License-Identifier: Apache-2.0
"""Prepared launches' swap in the library (wyjit_array_swap_run) on the CPU, through a Python
DLPack exchange API (dlpack_fakes.py): it takes the tensors of every launch and addressing mode
into the struct the one-shot path builds, byte for byte; it refuses what the Python path
refuses, with the Python path's message, leaving the struct as it was; anything it cannot take
goes the Python way; the entry point checks its own arguments."""

import ctypes

import pytest

import wyjit
from dlpack_fakes import DlTensor, described
from fakes import FakeTensor
from launch_cases import cases, fresh_step
from test_prepared import BUILDERS, _Jit
from wyjit import _dlswap, _lib


def make(shape, dtype):
    return DlTensor(shape, dtype)


CASES = cases(make)
IDS = [c.label.replace(" -", "").replace(" ", "-") for c in CASES]
GDN = CASES[0]


def prepare(case, target=None):
    return getattr(wyjit, f"prepare_{case.launch}")(target or case.spec, **case.arguments)


def one_shot(case, **changed):
    return bytes(BUILDERS[case.launch](case.spec, **dict(case.arguments, **changed)))


def like(old, cls=DlTensor, **kw):
    spec = dict(shape=old.shape, dtype=old.dtype.split(".")[-1], strides=old.stride(),
                device=old.device)
    spec.update(kw)
    return cls(**spec)


def refused(match):
    return pytest.raises(wyjit.InvalidArgumentError, match=match)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_library_swaps_every_launchs_tensors_into_the_one_shot_struct(case):
    p = prepare(case)
    tensors = {n for n, v in case.arguments.items() if isinstance(v, DlTensor)}
    assert p._c is not None and set(p._c.index) == tensors
    for _ in range(2):
        step = fresh_step(case, make)
        described()
        p.check(**step)
        assert described() == len(step)  # read in C, through the exchange API
        assert bytes(p.args) == one_shot(case, **step)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(q=like(GDN.arguments["q"], shape=(1, 4 * 16 * 128))),
         r"q has shape \[1, 8192\], the launch was prepared with \[4, 2048\]"),
        (dict(v=like(GDN.arguments["v"], dtype="float16")),
         "v has dtype f16, the launch was prepared with bf16"),
        (dict(out=like(GDN.arguments["out"], strides=(4096 + 64, 1))),
         r"out has strides \[4160, 1\], the launch was prepared with \[4096, 1\]"),
        (dict(g=like(GDN.arguments["g"], device="cuda:1")),
         "g is on cuda:1, the launch was prepared on cuda:0"),
        (dict(k=like(GDN.arguments["k"], dtype="int32")),
         "k has dtype i32, the launch was prepared with bf16"),
    ],
)
def test_what_the_library_refuses_python_names_and_nothing_changes(change, message):
    p = prepare(GDN)
    before = bytes(p.args)
    with refused(message):
        p.check(beta=like(GDN.arguments["beta"]), **change)
    assert bytes(p.args) == before
    assert _lib.lib().wyjit_last_error().startswith(b"wyjit_array_swap_run: objects[1]")


def test_what_the_library_cannot_take_goes_the_python_way():
    p = prepare(GDN)
    plain = like(GDN.arguments["q"], cls=FakeTensor)  # a class without the exchange API
    undescribable = like(GDN.arguments["k"])
    undescribable.undescribable = True
    step = dict(q=plain, k=undescribable, v=like(GDN.arguments["v"]))
    p.check(**step)
    assert bytes(p.args) == one_shot(GDN, **step)
    raw = dict(GDN.arguments, q=0x7F1000000000, k=0x7F2000000000, qk_stride=16 * 128)
    p = wyjit.prepare_gdn_verify(GDN.spec, **raw)
    assert "q" not in p._c.index
    step = dict(q=0x7F3000000000, v=like(GDN.arguments["v"]))
    p.check(**step)
    assert bytes(p.args) == bytes(wyjit.build_gdn_verify_args(GDN.spec, **dict(raw, **step)))


def test_the_library_guards_still_run_after_a_swap_in_c():
    p = prepare(GDN)
    before = bytes(p.args)
    with refused(r"wyjit_check_gdn_verify: .*args\.v = 0x7f0000000002 is not aligned"):
        p.check(q=like(GDN.arguments["q"]), v=like(GDN.arguments["v"], ptr=0x7F0000000002))
    assert bytes(p.args) == before


def test_a_failed_launch_after_a_swap_in_c_restores_the_struct():
    kernel = wyjit.Kernel(0x1234, GDN.spec, _Jit())
    p = prepare(GDN, kernel)
    seen = []
    p._launch_fn = lambda handle, args, stream: seen.append(
        ctypes.string_at(args, ctypes.sizeof(p.args))) or 2
    before = bytes(p.args)
    step = fresh_step(GDN, make)
    with pytest.raises(wyjit.Error):
        p(**step)
    assert seen == [one_shot(GDN, **step)] and bytes(p.args) == before


def _swap(count, capacity=2, which=(0, 0), slots=1, word=1):
    args = (ctypes.c_uint64 * 4)()
    t = DlTensor((4,), "float32")
    shape = (ctypes.c_int64 * 1)(4)
    strides = (ctypes.c_int64 * 1)(1)
    expected = _dlswap.DLTensor(None, 2, 0, 1, 2, 32, 1,
                                ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)), 0)
    table = (_dlswap.ArraySlot * 1)(_dlswap.ArraySlot(word, expected))
    ids = (ctypes.c_void_p * capacity)(*[id(t)] * capacity)
    previous = (ctypes.c_uint64 * capacity)()
    w = (ctypes.c_int32 * capacity)(*which[:capacity])
    swap = _dlswap.ArraySwap(ctypes.sizeof(_dlswap.ArraySwap), ctypes.addressof(args),
                             ctypes.sizeof(args), table, slots,
                             _dlswap.exchange_function(DlTensor), w, ids, previous, capacity, 0)
    run = _dlswap._RUN(ctypes.cast(_lib.lib().wyjit_array_swap_run, ctypes.c_void_p).value)
    status = run(ctypes.addressof(swap), count)
    return status, list(args), t, swap.refused


def test_the_entry_point_checks_its_own_arguments():
    status, args, t, _ = _swap(1)
    assert status == 0 and args[1] == t.data_ptr()
    for kw, message in ((dict(count=3), b"3 arrays, capacity 2"),
                        (dict(count=2, which=(0, 1)), b"objects[1] (slot 1): no such slot"),
                        (dict(count=1, word=4), b"word 4 is past the 32-byte argument struct")):
        status, args, _, refused_index = _swap(**kw)
        assert status == 2 and args == [0] * 4, kw
        assert message in _lib.lib().wyjit_last_error(), kw
