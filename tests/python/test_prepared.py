# SPDX-License-Identifier: Apache-2.0
"""Prepared launches on the CPU (tensor stand-ins): for every launch and addressing mode, the
struct a prepared launch keeps after swapping arrays is byte for byte the one the one-shot path
builds from the same arrays; changed shapes, dtypes, strides or devices are refused naming the
argument, leaving the struct as it was; the library's guards still run on every call."""

import ctypes
import threading

import pytest

import wyjit
from fakes import FakeTensor
from launch_cases import Case, cases, fresh_step
from wyjit import _probe, _tensors

BUILDERS = {
    "gdn_verify": wyjit.build_gdn_verify_args,
    "conv1d_update": wyjit.build_conv1d_update_args,
    "gdn_replay_verify": wyjit.build_gdn_replay_verify_args,
    "gdn_replay_commit": wyjit.build_gdn_replay_commit_args,
    "gdn_replay_materialize": wyjit.build_gdn_replay_materialize_args,
}


def make(shape, dtype):
    return FakeTensor(shape, dtype)


CASES = cases(make)
IDS = [c.label.replace(" -", "").replace(" ", "-") for c in CASES]


def prepare(case: Case, target=None):
    return getattr(wyjit, f"prepare_{case.launch}")(target or case.spec, **case.arguments)


def one_shot(case: Case, **changed) -> bytes:
    return bytes(BUILDERS[case.launch](case.spec, **dict(case.arguments, **changed)))


def refused(match):
    return pytest.raises(wyjit.InvalidArgumentError, match=match)


def like(old, **kw):
    """A stand-in shaped like `old` (a new pointer), with `kw` changed."""
    spec = dict(shape=old.shape, dtype=old.dtype.split(".")[-1], strides=old.stride(),
                device=old.device)
    spec.update(kw)
    return FakeTensor(**spec)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_prepared_struct_is_the_one_shot_struct(case):
    p = prepare(case)
    assert bytes(p.args) == one_shot(case)
    step = fresh_step(case, make)
    p.check(**step)
    assert bytes(p.args) == one_shot(case, **step)
    step = fresh_step(case, make)  # and again: a step after a step
    p.check(**step)
    assert bytes(p.args) == one_shot(case, **step)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_array_of_every_launch_can_be_swapped(case):
    p = prepare(case)
    arrays = {n: v for n, v in case.arguments.items() if isinstance(v, FakeTensor)}
    assert set(p.arrays) == set(arrays)
    new = {n: like(v) for n, v in arrays.items()}
    p.check(**new)
    assert bytes(p.args) == one_shot(case, **new)
    for name, old in arrays.items():  # one at a time, back to the prepared ones
        p.check(**{name: old})
    assert bytes(p.args) == one_shot(case)


GDN = CASES[0]
assert GDN.label == "gdn_verify strided"


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(q=like(GDN.arguments["q"], shape=(1, 4 * 16 * 128))),
         r"q has shape \[1, 8192\], the launch was prepared with \[4, 2048\]: a prepared launch "
         "swaps pointers only"),
        (dict(v=like(GDN.arguments["v"], dtype="float16")),
         "v has dtype f16, the launch was prepared with bf16"),
        (dict(out=like(GDN.arguments["out"], strides=(4096 + 64, 1))),  # padded rows
         r"out has strides \[4160, 1\], the launch was prepared with \[4096, 1\]"),
        (dict(g=like(GDN.arguments["g"], device="cuda:1")),
         "g is on cuda:1, the launch was prepared on cuda:0"),
        (dict(state=like(GDN.arguments["state"], device="cpu", is_cuda=False)),
         "state is on cpu: it must be a CUDA tensor"),
        (dict(k=None), "k is None: a prepared launch keeps every array"),
        (dict(k=0x7F0000000000), "k is a raw pointer, the launch was prepared with a tensor"),
        (dict(k="k"), "k is a str: pass a device pointer"),
        (dict(batch=2), "batch cannot change in a prepared gdn_verify launch"),
        (dict(scale=0.5), "scale is not an array this prepared gdn_verify launch was given"),
        (dict(a=FakeTensor((4, 32))), "a is not an array this prepared gdn_verify launch"),
    ],
)
def test_refusals_name_the_argument_and_change_nothing(change, message):
    p = prepare(GDN)
    before = bytes(p.args)
    # an accepted array before the refused one: it must not stay swapped in either
    arrays = dict(beta=like(GDN.arguments["beta"]), **change)
    with refused(message):
        p.check(**arrays)
    assert bytes(p.args) == before


def test_prepare_runs_every_check_of_the_one_shot_launch():
    bad = dict(GDN.arguments, q=like(GDN.arguments["q"], dtype="float32"))
    with refused("q has dtype f32, the variant needs bf16"):
        wyjit.prepare_gdn_verify(GDN.spec, **bad)
    misaligned = dict(GDN.arguments, q=like(GDN.arguments["q"], ptr=0x7F0000000004))
    with refused(r"wyjit_check_gdn_verify: .*args\.q = 0x7f0000000004 is not aligned"):
        wyjit.prepare_gdn_verify(GDN.spec, **misaligned)
    with refused("stream is given when the prepared launch is called"):
        wyjit.prepare_gdn_verify(GDN.spec, stream=None, **GDN.arguments)
    with refused("is a conv1d_update variant, not gdn_verify"):
        wyjit.prepare_gdn_verify(CASES[3].spec, **GDN.arguments)


def test_the_library_guards_run_on_every_call():
    p = prepare(GDN)
    before = bytes(p.args)
    with refused(r"wyjit_check_gdn_verify: .*args\.v = 0x7f0000000002 is not aligned"):
        p.check(q=like(GDN.arguments["q"]), v=like(GDN.arguments["v"], ptr=0x7F0000000002))
    assert bytes(p.args) == before


def test_raw_pointers_swap_for_raw_pointers():
    args = dict(GDN.arguments, q=0x7F1000000000, k=0x7F2000000000, qk_stride=16 * 128)
    p = wyjit.prepare_gdn_verify(GDN.spec, **args)
    p.check(q=0x7F3000000000)
    assert p.args.q == 0x7F3000000000
    assert bytes(p.args) == bytes(wyjit.build_gdn_verify_args(GDN.spec, **dict(args, q=0x7F3000000000)))
    with refused("q is a tensor, the launch was prepared with a raw pointer"):
        p.check(q=GDN.arguments["q"])
    with refused("q is -1, not a 64-bit device address"):
        p.check(q=-1)
    with refused(r"args\.q is null"):
        p.check(q=0)
    assert p.args.q == 0x7F3000000000


class _Jit:
    """A Jit's stand-in: what a prepared launch checks of the kernel's manager."""

    _handle = 1

    def _open(self):
        raise wyjit.InvalidArgumentError(2, "this Jit is closed")


def test_a_call_launches_the_kept_struct_with_the_kernel_and_stream():
    jit = _Jit()
    kernel = wyjit.Kernel(0x1234, GDN.spec, jit)
    p = prepare(GDN, kernel)
    calls = []
    status = [0]

    def launch(handle, args, stream):
        calls.append((handle, bytes(ctypes.string_at(args, ctypes.sizeof(p.args))), stream))
        return status[0]

    p._launch_fn = launch
    step = fresh_step(GDN, make)
    p(**step)
    assert calls[-1] == (0x1234, one_shot(GDN, **step), None)

    class Stream:
        cuda_stream = 0x5678

    p(stream=Stream())
    p(stream=0x9ABC)
    assert [c[2] for c in calls[1:]] == [0x5678, 0x9ABC]
    assert calls[1][1] == one_shot(GDN, **step)  # nothing given: the pointers stay

    before = bytes(p.args)
    status[0] = 2  # the library refuses: the struct goes back to what it was
    with pytest.raises(wyjit.Error):
        p(**fresh_step(GDN, make))
    assert bytes(p.args) == before
    status[0] = 0
    jit._handle = None
    with refused("this Jit is closed"):
        p()


def test_a_launch_prepared_from_a_spec_only_checks():
    with refused(r"prepared from a spec \(gdn_verify\..*\): it can check\(\) but not launch"):
        prepare(GDN)()


def test_the_probe_leaves_other_threads_arrays_alone():
    recorder = _probe._Recorder()
    a = _tensors.Array("q", 0x7F0000000000)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(recorder.seen(a, None)))
    thread.start()
    thread.join()
    assert seen == [a] and not recorder.arrays
    assert recorder.seen(a, None).ptr != a.ptr and "q" in recorder.arrays
