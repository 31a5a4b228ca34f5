# SPDX-License-Identifier: Apache-2.0
"""conv1d_update's argument checks on the CPU: tensor stand-ins and raw pointers, checked in
Python (dtype, shape, strides, the state tile's geometry, device) and then by the library's own
guards (wyjit.check_conv1d_update runs both without launching), for both rollback forms and
the three addressing modes."""

import ctypes

import pytest

import wyjit
from fakes import FakeTensor

B, C, K, W = 3, 64, 4, 4
H = W - 1  # history columns
N = B * K  # token rows

INTERMEDIATE = wyjit.Spec.make("conv1d_update", k=K, width=W, io="bf16", weight="f32",
                               rollback="intermediate")
WINDOW = INTERMEDIATE.replace(rollback="window", silu=True)


def refused(match):
    return pytest.raises(wyjit.InvalidArgumentError, match=match)


def io(shape, **kw):
    return FakeTensor(shape, "bfloat16", **kw)


def common(spec):
    return dict(batch=B, channels=C, x=io((N, C)), y=io((B, K, C)),
                weight=FakeTensor((C, W), "float32" if spec.weight == "f32" else "bfloat16"))


def intermediate_arguments():
    return dict(common(INTERMEDIATE), state=io((B, C, H)), inter=io((B, K - 1, C, H)))


def window_arguments(cols=H + K):
    return dict(common(WINDOW), state=io((B, C, cols)), window_offset=FakeTensor((B,), "int32"))


def test_dense_intermediate_tensors_give_dense_strides():
    args = intermediate_arguments()
    wyjit.check_conv1d_update(INTERMEDIATE, **args)
    c = wyjit.build_conv1d_update_args(INTERMEDIATE, **args)
    assert (c.batch, c.channels, c.k, c.width, c.path) == (B, C, K, W, 0)
    assert (c.x_stride, c.y_stride) == (C, C)
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H, H, 1)
    assert (c.states.state_seq_stride, c.states.inter_seq_stride,
            c.states.inter_tok_stride) == (C * H, (K - 1) * C * H, C * H)
    assert c.x == args["x"].data_ptr() and c.weight == args["weight"].data_ptr()
    assert c.states.state == args["state"].data_ptr()
    assert c.states.inter == args["inter"].data_ptr()
    assert not c.bias and not c.window_offset


def test_cols_major_tiles_and_a_slice_of_a_packed_projection():
    """vLLM keeps a conv state as [cols, channels] (channels contiguous) and hands it on as a
    [channels, cols] view; x is a column slice of the packed in-projection."""
    args = intermediate_arguments()
    packed = 3 * C
    args["x"] = io((N, C), strides=(packed, 1), ptr=0x7E0000000000 + 2 * C)
    args["state"] = io((B, C, H), strides=(H * C, 1, C))  # the view of [B, H, C] storage
    args["inter"] = io((B, K - 1, H, C))  # the storage itself, [cols, channels] dims
    c = wyjit.build_conv1d_update_args(INTERMEDIATE, **args)
    assert c.x_stride == packed and c.x == 0x7E0000000000 + 2 * C
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H, 1, C)
    assert (c.states.state_seq_stride, c.states.inter_tok_stride) == (H * C, H * C)
    wyjit.check_conv1d_update(INTERMEDIATE, **args)


def test_padded_channel_rows_and_an_nn_conv1d_weight():
    args = intermediate_arguments()
    args["state"] = io((B, C, H), strides=(C * 8, 8, 1))  # rows of 8 columns, 3 used
    args["inter"] = io((B, K - 1, C, H), strides=((K - 1) * C * 8, C * 8, 8, 1))
    args["weight"] = FakeTensor((C, 1, W))
    c = wyjit.build_conv1d_update_args(INTERMEDIATE, **args)
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H, 8, 1)
    wyjit.check_conv1d_update(INTERMEDIATE, **args)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(x=FakeTensor((N, C))), "x has dtype f32, the variant needs bf16"),
        (dict(weight=io((C, W))), "weight has dtype bf16, the variant needs f32"),
        (dict(state=FakeTensor((B, C, H))), "state has dtype f32, the variant needs bf16"),
        (dict(y=io((N + 1, C))), r"y \(shape \[13, 64\].*expected 12 rows of 64"),
        (dict(x=io((N, C), strides=(1, N))), "must be contiguous"),
        (dict(weight=FakeTensor((C, W), strides=(1, C))), "must be contiguous"),
        (dict(weight=FakeTensor((C, W + 1))), r"weight \(shape \[64, 5\].*expected 64 rows of 4"),
        (dict(state=io((B, C + 1, H))), r"state \(shape \[3, 65, 3\].*expected \[3, channels, "
                                        r"cols\] or \[3, cols, channels\] with channels = 64"),
        (dict(state=io((B, C))), r"state \(shape \[3, 64\].*expected \[3, channels, cols\]"),
        (dict(inter=io((B, K, C, H))), r"inter .*expected \[3, 3, channels, cols\]"),
        (dict(inter=None), r"inter is required by conv1d_update\..*: \[batch, 3, \.\.\.\]"),
        (dict(inter=io((B, K - 1, C, H + 2))),
         r"inter .* has state_cols 5, state has 3: every state tile of a launch has one geometry"),
        (dict(inter=io((B, K - 1, H, C))),
         r"inter .* has state_channel_stride 1, state has 3: every state tile"),
        (dict(state_cols=5), r"state_cols is 5 but state \(shape \[3, 64, 3\].*has 3"),
        (dict(state_seq_stride=7), r"state_seq_stride is 7 but state .* has 192"),
        (dict(window_offset=FakeTensor((B,), "int32")),
         r"window_offset is given but .* does not use it \(the intermediate form\)"),
        (dict(bias=FakeTensor((C,))), r"bias is given but .* \(no bias\)"),
        (dict(tables=0x7F4000000000), r"tables is given but .* \(strided addressing\)"),
        (dict(path="fast"), "path is 'fast', allowed: auto, wide, narrow"),
        (dict(channels=0), "channels is 0, must be a positive int"),
        (dict(y=io((N, C), device="cuda:1")), r"different devices: .*y on cuda:1"),
        (dict(x=io((N, C), is_cuda=False, device="cpu")), "x is on cpu"),
        (dict(weight=None), "weight is required by conv1d_update"),
    ],
)
def test_python_checks_name_the_argument(change, message):
    args = intermediate_arguments()
    args.update(change)
    with refused(match=message):
        wyjit.check_conv1d_update(INTERMEDIATE, **args)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(state=io((B, C, H - 1)), inter=io((B, K - 1, C, H - 1))),
         r"args\.state_cols is 2, must be >= 3 \(W-1"),
        (dict(state=io((B, C, H), strides=(C * H * 2, H * 2, 2)),
              inter=io((B, K - 1, C, H), strides=((K - 1) * C * H * 2, C * H * 2, H * 2, 2))),
         r"args\.state_channel_stride is 6 and args\.state_col_stride is 2: one of them must be 1"),
        (dict(state=io((B, C, H), strides=(C * H, 2, 1)),
              inter=io((B, K - 1, C, H), strides=((K - 1) * C * H, C * H, 2, 1))),
         r"args\.state_channel_stride is 2, must be >= 3"),
        (dict(x=0x7F1000000001, x_stride=C), r"args\.x = 0x7f1000000001 is not aligned to 2 bytes"),
        (dict(x=0x7F1000000000, x_stride=C - 1), r"args\.x_stride is 63, must be >= 64"),
        (dict(state=io((B, C, H), strides=(C * H - 1, H, 1))),
         r"args\.states\.state_seq_stride is 191, must be >= 192"),
        (dict(inter=io((B, K - 1, C, H), strides=(C * H, C * H, H, 1))),
         r"the intermediate states must not overlap"),
    ],
)
def test_the_library_guards_run_after_the_python_checks(change, message):
    args = intermediate_arguments()
    args.update(change)
    with refused(match=r"wyjit_check_conv1d_update: .*" + message):
        wyjit.check_conv1d_update(INTERMEDIATE, **args)


def test_the_window_form_needs_its_offsets_and_columns():
    args = window_arguments()
    c = wyjit.build_conv1d_update_args(WINDOW, **args)
    assert c.window_offset == args["window_offset"].data_ptr()
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H + K, H + K, 1)
    wyjit.check_conv1d_update(WINDOW, **args)
    # a buffer made for a larger K serves this K
    wyjit.check_conv1d_update(WINDOW, **window_arguments(cols=H + 16))
    missing = dict(args, window_offset=None)
    with refused(
        match=r"window_offset is required by conv1d_update\..*window.*: int32 "
              r"\[batch\]"):
        wyjit.check_conv1d_update(WINDOW, **missing)
    with refused(match="window_offset has dtype int64"):
        wyjit.check_conv1d_update(WINDOW, **dict(args, window_offset=FakeTensor((B,), "int64")))
    with refused(match=r"window_offset .*expected 3 rows of 1"):
        wyjit.check_conv1d_update(WINDOW, **dict(args, window_offset=FakeTensor((B + 1,), "int32")))
    with refused(
        match=r"wyjit_check_conv1d_update: .*args\.state_cols is 6, must be >= 7 "
              r"\(W-1\+K"):
        wyjit.check_conv1d_update(WINDOW, **window_arguments(cols=H + K - 1))
    with refused(
        match=r"inter is given but .* \(strided addressing with one write a "
              r"sequence\)"):
        wyjit.check_conv1d_update(WINDOW, **dict(args, inter=io((B, K - 1, C, H + K))))
    wyjit.check_conv1d_update(WINDOW, **dict(args, window_offset=0x7F5000000000))  # raw [batch]
    with refused(
        match=r"args\.window_offset = 0x7f5000000002 is not aligned to 4 bytes"):
        wyjit.check_conv1d_update(WINDOW, **dict(args, window_offset=0x7F5000000002))


def test_raw_pointers_need_the_tile_geometry():
    args = intermediate_arguments()
    args["state"] = 0x7F2000000000
    with refused(match="state is a raw pointer: pass state_seq_stride"):
        wyjit.check_conv1d_update(INTERMEDIATE, **args)
    args.update(inter=0x7F3000000000, state_seq_stride=C * H, inter_seq_stride=(K - 1) * C * H,
                inter_tok_stride=C * H)
    with refused(
        match="state is a raw pointer: pass state_cols, state_channel_stride, "
              "state_col_stride"):
        wyjit.check_conv1d_update(INTERMEDIATE, **args)
    args.update(state_cols=H, state_channel_stride=H, state_col_stride=1)
    c = wyjit.build_conv1d_update_args(INTERMEDIATE, **args)
    assert (c.states.state, c.states.inter) == (0x7F2000000000, 0x7F3000000000)
    wyjit.check_conv1d_update(INTERMEDIATE, **args)


class FakeStager:
    """A TableStager's stand-in: what a launch reads of it."""

    def __init__(self, writes, max_batch):
        self.writes, self.max_batch = writes, max_batch
        self.tables, self.slab_stride = 0x7F6000000000, max_batch


@pytest.mark.parametrize("spec", [INTERMEDIATE.replace(addressing="table"),
                                  WINDOW.replace(addressing="table")])
def test_table_addressing_takes_the_geometry_explicitly(spec):
    window = spec.rollback == "window"
    base = dict(common(spec), window_offset=FakeTensor((B,), "int32") if window else None)
    cols = H + K if window else H
    geometry = dict(state_cols=cols, state_channel_stride=1, state_col_stride=C)
    writes = 1 if window else K
    with refused(
        match="table addressing has no state tensor: pass state_cols, "
              "state_channel_stride, state_col_stride"):
        wyjit.check_conv1d_update(spec, tables=FakeStager(writes, B), **base)
    with refused(match=r"tables is required by .* \(a TableStager\)"):
        wyjit.check_conv1d_update(spec, **geometry, **base)
    other = K if window else 1
    with refused(
        match=rf"tables is a TableStager for {other} writes a sequence, "
              rf"{spec.name.replace('.', '[.]')} writes {writes}: make it with "
              rf"TableStager\({writes}, max_batch\)"):
        wyjit.check_conv1d_update(spec, tables=FakeStager(other, B), **geometry, **base)
    with refused(match="batch is 3, the TableStager holds max_batch=2"):
        wyjit.check_conv1d_update(spec, tables=FakeStager(writes, 2), **geometry, **base)
    with refused(match=r"state is given but .* \(table addressing\)"):
        wyjit.check_conv1d_update(spec, tables=FakeStager(writes, B), state=io((B, C, cols)),
                                  **geometry, **base)
    c = wyjit.build_conv1d_update_args(spec, tables=FakeStager(writes, B), **geometry, **base)
    assert (c.states.tables, c.states.slab_stride) == (0x7F6000000000, B)
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (cols, 1, C)
    wyjit.check_conv1d_update(spec, tables=FakeStager(writes, B), **geometry, **base)
    # a raw table: the window form writes one tile a sequence, so it needs no slab stride
    if window:
        wyjit.check_conv1d_update(spec, tables=0x7F6000000000, **geometry, **base)
    else:
        with refused(match="pass slab_stride"):
            wyjit.check_conv1d_update(spec, tables=0x7F6000000000, **geometry, **base)
        wyjit.check_conv1d_update(spec, tables=0x7F6000000000, slab_stride=B, **geometry, **base)


def test_slot_addressing_takes_the_pool_shape():
    spec = INTERMEDIATE.replace(addressing="slot")
    args = dict(common(spec), state=io((11, H, C)), read_slot=FakeTensor((B,), "int32"),
                write_slot=FakeTensor((B, K + 2), "int32"))
    c = wyjit.build_conv1d_update_args(spec, **args)
    assert (c.states.num_slots, c.states.slot_stride, c.states.write_slot_stride) == (
        11, H * C, K + 2)
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H, 1, C)
    wyjit.check_conv1d_update(spec, **args)
    args["write_slot"] = FakeTensor((B, K - 1), "int32")
    with refused(
        match=r"write_slot has shape \[3, 3\], expected \[3, >= 4\]$"):
        wyjit.check_conv1d_update(spec, **args)
    args["write_slot"] = FakeTensor((B,), "int32")
    with refused(match=r"write_slot has shape \[3\]"):
        wyjit.check_conv1d_update(spec, **args)


def test_the_window_form_with_slots_takes_one_write_slot_a_sequence():
    spec = WINDOW.replace(addressing="slot")
    args = dict(common(spec), state=io((7, C, H + K)), read_slot=FakeTensor((B,), "int32"),
                write_slot=FakeTensor((B,), "int32"), window_offset=FakeTensor((B,), "int32"))
    c = wyjit.build_conv1d_update_args(spec, **args)
    assert (c.states.num_slots, c.states.write_slot_stride) == (7, 1)
    wyjit.check_conv1d_update(spec, **args)
    args["write_slot"] = FakeTensor((B, 2), "int32")
    assert wyjit.build_conv1d_update_args(spec, **args).states.write_slot_stride == 2
    args["write_slot"] = FakeTensor((B, 2), "int32", strides=(1, B))
    with refused(match="write_slot .*must be contiguous"):
        wyjit.check_conv1d_update(spec, **args)
    args["write_slot"] = FakeTensor((B,), "int32")
    args["num_slots"] = 9
    with refused(match=r"num_slots is 9 but state has 7 slots"):
        wyjit.check_conv1d_update(spec, **args)


def test_bias_and_the_weight_dtype_of_the_variant():
    spec = INTERMEDIATE.replace(bias=True, weight="io")
    args = dict(intermediate_arguments(), weight=io((C, W)))
    with refused(match="bias is required by"):
        wyjit.check_conv1d_update(spec, **args)
    with refused(match="bias has dtype f32, the variant needs bf16"):
        wyjit.check_conv1d_update(spec, bias=FakeTensor((C,)), **args)
    with refused(match=r"bias \(shape \[32\]"):
        wyjit.check_conv1d_update(spec, bias=io((C // 2,)), **args)
    c = wyjit.build_conv1d_update_args(spec, bias=io((C,)), **args)
    assert c.bias
    wyjit.check_conv1d_update(spec, bias=io((C,)), **args)


def test_a_spec_of_another_family_is_refused():
    gdn = wyjit.Spec.make("gdn_verify")
    with refused(
        match=r"check_conv1d_update: gdn_verify\..* is a gdn_verify variant, not "
              r"conv1d_update"):
        wyjit.check_conv1d_update(gdn, **intermediate_arguments())
    with refused(match="is a conv1d_update variant, not gdn_verify"):
        wyjit.check_gdn_verify(INTERMEDIATE, batch=1, num_k_heads=1, num_v_heads=1, q=1, k=1,
                               v=1, out=1)


@pytest.mark.parametrize("path, code", [("auto", 0), ("wide", 1), ("narrow", 2)])
def test_the_launch_reaches_the_c_call_with_the_struct_built(monkeypatch, path, code):
    from wyjit import _lib

    spec = WINDOW.replace(addressing="slot")
    args = dict(common(spec), state=io((7, H + K, C)), read_slot=FakeTensor((B,), "int32"),
                write_slot=FakeTensor((B,), "int32"), window_offset=FakeTensor((B,), "int32"))
    seen = []

    def launch(handle, c_args, stream):
        seen.append((handle, c_args._obj, stream))  # byref(): the struct itself
        return 0

    monkeypatch.setattr(_lib.lib(), "wyjit_launch_conv1d_update", launch)

    class OpenJit:
        _handle = 1

    wyjit.conv1d_update(wyjit.Kernel(0xC0, spec, OpenJit()), stream=0x66, path=path, **args)
    (handle, c, stream), = seen
    assert (handle, stream, c.path) == (0xC0, 0x66, code)
    assert (c.batch, c.channels, c.k, c.width) == (B, C, K, W)
    assert c.struct_size == ctypes.sizeof(wyjit._conv1d.Conv1dUpdateArgs)
    assert (c.states.state, c.states.read_slot, c.states.write_slot, c.window_offset) == (
        args["state"].data_ptr(), args["read_slot"].data_ptr(), args["write_slot"].data_ptr(),
        args["window_offset"].data_ptr())
    assert (c.state_cols, c.state_channel_stride, c.state_col_stride) == (H + K, 1, C)
    assert (c.states.num_slots, c.states.slot_stride) == (7, (H + K) * C)
