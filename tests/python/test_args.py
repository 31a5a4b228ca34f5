# SPDX-License-Identifier: Apache-2.0
"""gdn_verify's argument checks on the CPU: tensors stand-ins (anything with data_ptr()) and raw
pointers, checked in Python (dtype, shape, contiguity, strides, device) and then by the
library's own guards (wyjit.check_gdn_verify runs both without launching)."""

import math

import pytest

import wyjit
from fakes import FakeTensor

B, HK, HV = 3, 2, 4


def strided_arguments(spec, dtype="float32", state_dtype="float32"):
    K, dk, dv = spec.k, spec.dk, spec.dv
    return dict(
        batch=B, num_k_heads=HK, num_v_heads=HV,
        q=FakeTensor((B, K, HK, dk), dtype), k=FakeTensor((B, K, HK, dk), dtype),
        v=FakeTensor((B, K, HV, dv), dtype), out=FakeTensor((B * K, HV * dv), dtype),
        g=FakeTensor((B, K, HV)), beta=FakeTensor((B * K, HV)),
        state=FakeTensor((B, HV, dv, dk), state_dtype),
        inter=FakeTensor((B, K - 1, HV, dv, dk), state_dtype),
    )


F32 = wyjit.Spec.make("gdn_verify", k=4, io="f32", dk=64, dv=64)


def test_dense_tensors_pass_and_give_dense_strides():
    args = strided_arguments(F32)
    wyjit.check_gdn_verify(F32, **args)
    c = wyjit.build_args(F32, **args)
    tile = HV * 64 * 64
    assert (c.batch, c.num_k_heads, c.num_v_heads, c.k, c.dk, c.dv) == (B, HK, HV, 4, 64, 64)
    assert (c.qk_stride, c.v_stride, c.gb_stride, c.o_stride) == (HK * 64, HV * 64, HV, HV * 64)
    assert (c.states.state_seq_stride, c.states.inter_seq_stride,
            c.states.inter_tok_stride) == (tile, 3 * tile, tile)
    assert c.scale == pytest.approx(1 / math.sqrt(64))
    assert c.q == args["q"].data_ptr() and c.states.inter == args["inter"].data_ptr()


def test_padded_rows_and_a_token_major_inter_view_give_their_strides():
    args = strided_arguments(F32)
    row = HK * 64 + 8
    args["q"] = FakeTensor((B * 4, HK * 64), strides=(row, 1))
    args["k"] = FakeTensor((B * 4, HK * 64), strides=(row, 1))
    tile = HV * 64 * 64
    # [K-1, B, tile] storage seen as [B, K-1, ...] (a transpose of the leading dims)
    args["inter"] = FakeTensor((B, 3, HV, 64, 64), strides=(tile, B * tile, 64 * 64, 64, 1))
    c = wyjit.build_args(F32, **args)
    assert c.qk_stride == row
    assert (c.states.inter_seq_stride, c.states.inter_tok_stride) == (tile, B * tile)
    wyjit.check_gdn_verify(F32, **args)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(q=FakeTensor((B, 4, HK, 64), "bfloat16")), "q has dtype bf16, the variant needs f32"),
        (dict(state=FakeTensor((B, HV, 64, 64), "float16")), "state has dtype f16, the variant needs f32"),
        (dict(g=FakeTensor((B, 4, HV), "float16")), "g has dtype f16, the variant needs f32"),
        (dict(v=FakeTensor((B * 4 + 1, HV * 64))), r"v \(shape \[13, 256\].*expected 12 rows of 256"),
        (dict(out=FakeTensor((B * 4, HV * 64), strides=(1, B * 4))), "must be contiguous"),
        (dict(q=FakeTensor((B, 4, HK, 64), is_cuda=False, device="cpu")), "q is on cpu"),
        (dict(k=FakeTensor((B * 4, HK * 64), strides=(HK * 64 + 4, 1))),
         "q 128, k 132: these arrays must share one qk_stride"),
        (dict(inter=FakeTensor((B, 4, HV, 64, 64))), r"inter .*expected \[3, 3, \.\.\.\]"),
        (dict(inter=None), "inter is required"),
        (dict(beta=FakeTensor((B * 4, HV), device="cuda:1")), "different devices"),
        (dict(a=FakeTensor((B * 4, HV))), "a is given but .* does not use it"),
        (dict(tables=12345), "tables is given"),
        (dict(q="not a tensor"), "q is a str: pass a device pointer"),
        (dict(batch=0), "batch is 0, must be a positive int"),
    ],
)
def test_python_checks_name_the_argument(change, message):
    args = strided_arguments(F32)
    args.update(change)
    with pytest.raises(wyjit.InvalidArgumentError, match=message):
        wyjit.check_gdn_verify(F32, **args)


def test_the_library_guards_run_after_the_python_checks():
    args = strided_arguments(F32)
    args["q"] = FakeTensor((B, 4, HK, 64), ptr=0x7F0000000004)  # not 16-byte aligned
    with pytest.raises(wyjit.InvalidArgumentError, match=r"wyjit_check_gdn_verify: .*args\.q = 0x7f0000000004 is not aligned"):
        wyjit.check_gdn_verify(F32, **args)
    args = strided_arguments(F32)
    args["num_v_heads"] = 3  # not a multiple of HK; shapes follow
    for name, shape in (("v", (B * 4, 3 * 64)), ("out", (B * 4, 3 * 64)), ("g", (B * 4, 3)),
                        ("beta", (B * 4, 3)), ("state", (B, 3 * 64 * 64)),
                        ("inter", (B, 3, 3 * 64 * 64))):
        args[name] = FakeTensor(shape)
    with pytest.raises(wyjit.InvalidArgumentError, match="num_v_heads is 3, must be a multiple"):
        wyjit.check_gdn_verify(F32, **args)


def test_raw_pointers_need_explicit_strides():
    args = strided_arguments(F32)
    args["q"] = 0x7F1000000000
    with pytest.raises(wyjit.InvalidArgumentError, match="q is a raw pointer: pass qk_stride"):
        wyjit.check_gdn_verify(F32, **args)
    args["k"] = 0x7F2000000000
    args["inter"] = 0x7F3000000000
    with pytest.raises(wyjit.InvalidArgumentError, match="inter is a raw pointer"):
        wyjit.check_gdn_verify(F32, qk_stride=HK * 64, **args)
    tile = HV * 64 * 64
    wyjit.check_gdn_verify(F32, qk_stride=HK * 64, inter_seq_stride=3 * tile,
                           inter_tok_stride=tile, **args)
    args["q"] = 0
    with pytest.raises(wyjit.InvalidArgumentError, match=r"args\.q is null"):
        wyjit.check_gdn_verify(F32, qk_stride=HK * 64, inter_seq_stride=3 * tile,
                               inter_tok_stride=tile, **args)


def test_bf16_io_with_kv_layout():
    spec = wyjit.Spec.make("gdn_verify", k=2, io="bf16", layout="kv")
    args = strided_arguments(spec, "bfloat16")
    wyjit.check_gdn_verify(spec, **args)


def test_table_addressing_with_a_raw_table():
    spec = wyjit.Spec.make("gdn_verify", k=3, io="f32", addressing="table", dk=64, dv=64)
    args = strided_arguments(spec)
    del args["state"], args["inter"]
    with pytest.raises(wyjit.InvalidArgumentError, match="tables is required"):
        wyjit.check_gdn_verify(spec, **args)
    with pytest.raises(wyjit.InvalidArgumentError, match="pass slab_stride"):
        wyjit.check_gdn_verify(spec, tables=0x7F4000000000, **args)
    c = wyjit.build_args(spec, tables=0x7F4000000000, slab_stride=8, **args)
    assert (c.states.tables, c.states.slab_stride) == (0x7F4000000000, 8)
    wyjit.check_gdn_verify(spec, tables=0x7F4000000000, slab_stride=8, **args)
    with pytest.raises(wyjit.InvalidArgumentError, match="slab_stride is 2, must be >= 3"):
        wyjit.check_gdn_verify(spec, tables=0x7F4000000000, slab_stride=2, **args)


def test_slot_addressing_takes_the_pool_shape():
    spec = wyjit.Spec.make("gdn_verify", k=3, io="f16", addressing="slot", dk=64, dv=64)
    args = strided_arguments(spec, "float16")
    del args["inter"]
    args["state"] = FakeTensor((11, HV, 64, 64))
    args["read_slot"] = FakeTensor((B,), "int32")
    args["write_slot"] = FakeTensor((B, 4), "int32")
    c = wyjit.build_args(spec, **args)
    assert (c.states.num_slots, c.states.slot_stride, c.states.write_slot_stride) == (11, HV * 64 * 64, 4)
    wyjit.check_gdn_verify(spec, **args)
    args["write_slot"] = FakeTensor((B, 2), "int32")
    with pytest.raises(wyjit.InvalidArgumentError, match=r"write_slot has shape \[3, 2\], expected \[3, >= 3\]"):
        wyjit.check_gdn_verify(spec, **args)
    args["write_slot"] = FakeTensor((B, 4), "int64")
    with pytest.raises(wyjit.InvalidArgumentError, match="write_slot has dtype int64"):
        wyjit.check_gdn_verify(spec, **args)


def test_fused_gating_takes_a_b_a_log_dt_bias():
    spec = wyjit.Spec.make("gdn_verify", k=2, io="bf16", gating=True)
    args = strided_arguments(spec, "bfloat16")
    del args["g"], args["beta"]
    args.update(a=FakeTensor((B * 2, HV), "bfloat16"), b=FakeTensor((B * 2, HV), "bfloat16"),
                a_log=FakeTensor((HV,)), dt_bias=FakeTensor((HV,)))
    wyjit.check_gdn_verify(spec, **args)
    args["dt_bias"] = FakeTensor((HV + 1,))
    with pytest.raises(wyjit.InvalidArgumentError, match="dt_bias"):
        wyjit.check_gdn_verify(spec, **args)


def test_streams():
    from wyjit._jit import stream_handle

    class TorchLikeStream:
        cuda_stream = 0x1234

    assert stream_handle(None) is None
    assert stream_handle(0) is None
    assert stream_handle(0x55) == 0x55
    assert stream_handle(TorchLikeStream()) == 0x1234
    with pytest.raises(wyjit.InvalidArgumentError, match="stream is a str"):
        stream_handle("default")


def test_the_gpu_tests_strided_kv_case_reaches_the_c_call_with_dense_strides(monkeypatch):
    """The arguments of test_gpu.py's check_strided("bf16", "kv") (B=3, HK=2, HV=4, K=4,
    d=128) as the C launch receives them: every pointer as given, dense strides, kv tiles."""
    from wyjit import _lib

    spec = wyjit.Spec.make("gdn_verify", k=4, io="bf16", layout="kv")
    K, d = 4, 128
    tile = HV * d * d
    args = dict(
        batch=B, num_k_heads=HK, num_v_heads=HV,
        q=FakeTensor((B, K, HK, d), "bfloat16"), k=FakeTensor((B, K, HK, d), "bfloat16"),
        v=FakeTensor((B, K, HV, d), "bfloat16"), out=FakeTensor((B, K, HV, d), "bfloat16"),
        g=FakeTensor((B, K, HV)), beta=FakeTensor((B, K, HV)),
        state=FakeTensor((B, HV, d, d)), inter=FakeTensor((B, K - 1, HV, d, d)),
    )
    seen = []

    def launch(handle, c_args, stream):
        seen.append((handle, c_args._obj, stream))  # byref(): the struct itself
        return 0

    monkeypatch.setattr(_lib.lib(), "wyjit_launch_gdn_verify", launch)

    class OpenJit:
        _handle = 1

    wyjit.gdn_verify(wyjit.Kernel(0xABC, spec, OpenJit()), stream=0x55, **args)
    (handle, c, stream), = seen
    assert (handle, stream) == (0xABC, 0x55)
    assert (c.batch, c.num_k_heads, c.num_v_heads, c.k, c.dk, c.dv) == (B, HK, HV, K, d, d)
    assert (c.qk_stride, c.v_stride, c.gb_stride, c.o_stride) == (HK * d, HV * d, HV, HV * d)
    assert (c.states.state_seq_stride, c.states.inter_seq_stride,
            c.states.inter_tok_stride) == (tile, 3 * tile, tile)
    for field, name in (("q", "q"), ("k_in", "k"), ("v", "v"), ("out", "out"), ("g", "g"),
                        ("beta", "beta")):
        assert getattr(c, field) == args[name].data_ptr(), field
    assert c.states.state == args["state"].data_ptr()
    assert c.states.inter == args["inter"].data_ptr()
    assert c.scale == pytest.approx(1 / math.sqrt(d))
    wyjit.check_gdn_verify(spec, **args)  # and the library's own guards accept them
