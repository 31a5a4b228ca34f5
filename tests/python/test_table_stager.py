# SPDX-License-Identifier: Apache-2.0
"""wyjit.TableStager.stage on the CPU: what reaches wyjit_table_stager_stage (the C call is
replaced; the library's own checks are tests/cpu/test_table_stager_checks.cpp). None and 0 are
null entries (padding) anywhere in the batch."""

import ctypes

import pytest

import wyjit
from wyjit import _lib


class Pointer:
    """Anything with data_ptr() (a torch tensor's stand-in)."""

    def __init__(self, ptr):
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr


@pytest.fixture
def staged(monkeypatch):
    """A TableStager (3 writes a sequence, max_batch=4) whose C calls are recorded instead of
    made."""
    calls = []

    def stage(handle, states, inter, batch, stream):
        row = [states[b] for b in range(batch)]
        rows = None if not inter else [[inter[t][b] for b in range(batch)] for t in range(2)]
        calls.append((handle, row, rows, batch, stream))
        return 0

    cdll = _lib.lib()
    monkeypatch.setattr(cdll, "wyjit_table_stager_stage", stage)
    stager = wyjit.TableStager.__new__(wyjit.TableStager)
    stager._handle, stager.writes, stager.max_batch, stager._staged = 0x5A, 3, 4, []
    yield stager, calls
    stager._handle = None  # a made-up handle: never destroyed for real


def test_pointers_and_tensors_are_staged_as_given(staged):
    stager, calls = staged
    stager.stage([0x1000, Pointer(0x2000), 0x3000],
                 [[0x1100, 0x2100, Pointer(0x3100)], [0x1200, 0x2200, 0x3200]], stream=0x77)
    assert calls == [(0x5A, [0x1000, 0x2000, 0x3000],
                      [[0x1100, 0x2100, 0x3100], [0x1200, 0x2200, 0x3200]], 3, 0x77)]


def test_none_and_zero_are_null_entries_anywhere(staged):
    stager, calls = staged
    # Sequence 1 padded (its intermediate entries ignored by the kernel, here None and 0);
    # Hi_1 of sequence 2 skipped.
    stager.stage([0x1000, None, 0x3000, Pointer(0x4000)],
                 [[0x1100, None, 0x3100, 0x4100], [0x1200, 0, None, 0x4200]])
    _, states, inter, batch, stream = calls[-1]
    assert states == [0x1000, None, 0x3000, 0x4000]  # ctypes reads a null void* as None
    assert inter == [[0x1100, None, 0x3100, 0x4100], [0x1200, None, None, 0x4200]]
    assert (batch, stream) == (4, None)
    # A tensor whose data_ptr() is 0 (an empty tensor) is a null entry too.
    stager.stage([Pointer(0)] * 2, [[None] * 2, [None] * 2])
    assert calls[-1][1] == [None, None]


def test_row_counts_and_entry_types_are_checked_first(staged):
    stager, calls = staged
    with pytest.raises(wyjit.InvalidArgumentError, match="inter has 1 rows, a stager for 3 writes a sequence needs writes-1 = 2"):
        stager.stage([0x1000], [[0x1100]])
    with pytest.raises(wyjit.InvalidArgumentError, match=r"inter\[1\] has 1 pointers, states has 2"):
        stager.stage([0x1000, 0x2000], [[0x1100, 0x2100], [0x1200]])
    with pytest.raises(wyjit.InvalidArgumentError, match=r"states\[1\] is a str"):
        stager.stage([0x1000, "0x2000"], [[None, None], [None, None]])
    with pytest.raises(wyjit.InvalidArgumentError, match=r"inter\[0\]\[0\] is -1"):
        stager.stage([0x1000], [[-1], [None]])
    assert calls == []


def test_the_c_declaration_takes_null_entries():
    argtypes = _lib._FUNCTIONS["wyjit_table_stager_stage"][1]
    assert argtypes[1] == ctypes.POINTER(ctypes.c_void_p)
    row = (ctypes.c_void_p * 2)(None, 0x10)
    assert list(row) == [None, 0x10]
