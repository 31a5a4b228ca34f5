# SPDX-License-Identifier: Apache-2.0
"""conv1d_update in the harness: its axes, bytes model and names, its peer's skip reasons and
buffers, and its float64 reference (the torch cases skip where torch is not installed)."""

from __future__ import annotations

import pytest

from harness import cli
from harness.families import conv1d_update as conv
from harness.peers import registry, vllm_conv1d


def test_its_peer_is_pinned_to_the_anchor_commit():
    assert registry.peer("vllm_conv1d").commit == "03c6dad84ad3b1df303e98805a3a0324d70e1539"


def test_a_peer_of_another_family_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(["--family", "conv1d_update", "--peers", "vllm_spec"])


def test_conv_bytes_model_matches_bench_conv1d():
    # x and y, weights, W-1 history columns read, the window (W-1+K columns) written, offsets.
    w = conv.Point(k=4, n=1, rollback="window")
    assert conv.bytes_moved(w) == 2 * 4 * 8192 * 2 + 8192 * 4 * 2 + 8192 * 3 * 2 + 8192 * 7 * 2 + 4
    assert conv.bytes_moved(w) == 360_452
    i = conv.Point(k=4, n=2, rollback="intermediate", bias=True)
    assert conv.bytes_moved(i) == 2 * 8 * 8192 * 2 + 8192 * 5 * 2 + 2 * 8192 * 3 * 2 + 2 * 4 * 8192 * 3 * 2


def test_conv_axes_and_channels_follow_the_heads():
    a = cli.parse_args(["--family", "conv1d_update", "--k", "4", "--n", "1"])
    assert [p.rollback for p in conv.points(a)] == ["window", "intermediate"]
    assert conv.points(a)[0].channels == 8192
    a = cli.parse_args(["--family", "conv1d_update", "--hk", "2", "--hv", "8", "--k", "4",
                        "--n", "1", "--rollback", "window"])
    assert [p.channels for p in conv.points(a)] == [2 * 2 * 128 + 8 * 128]
    labels = [r.label for r in conv.runners(a)]
    assert labels == ["vLLM conv", "wyjit strided ct", "wyjit strided tc"]


def test_conv_window_geometry():
    p = conv.Point(k=4, n=1)
    assert p.cols == 3 + 4 and p.offset == 1
    assert conv.Point(k=1, n=1).offset == 0
    assert conv.Point(k=4, n=1, rollback="intermediate").cols == 3


def test_skip_reasons():
    assert vllm_conv1d.VllmConv1d().skip_reason(conv.Point(k=4, n=1, rollback="intermediate"))
    assert vllm_conv1d.VllmConv1d().skip_reason(conv.Point(k=4, n=1)) is None


def test_wyjit_variant_names_follow_the_documented_grammar():
    # The examples of include/wyjit/conv1d_update.hpp.
    assert conv.variant_name(conv.Point(k=4, n=1), "slot") == \
        "conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu"
    assert conv.variant_name(conv.Point(k=2, n=1, rollback="intermediate", bias=True,
                                        weight="f32"), "strided") == \
        "conv1d_update.k2.io_bf16.w4.wt_f32.intermediate.strided.bias.silu"


def test_reference_matches_a_direct_loop():
    torch = pytest.importorskip("torch")
    p = conv.Point(k=3, n=2, channels=5, bias=True, io="f32", weight="f32")
    x = conv.make_inputs(p, 4, device="cpu")
    ref = conv.reference(p, x)
    h = x.window[..., p.offset:p.offset + 3].double()
    xs = x.x.double().view(2, 3, 5)
    for b in range(2):
        for t in range(3):
            for c in range(5):
                window = [*h[b, c].tolist(), *xs[b, :, c].tolist()][t:t + 4]
                acc = sum(w * z for w, z in zip(x.weight[c].double().tolist(), window, strict=True))
                acc += float(x.bias[c])
                want = acc / (1 + torch.exp(torch.tensor(-acc, dtype=torch.float64))).item()
                assert ref["y"][b * 3 + t, c].item() == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert torch.equal(ref["window_tail"][..., :2], h[..., 1:])  # z[1:] starts with h_1, h_2


def test_vllm_window_view():
    torch = pytest.importorskip("torch")
    from harness.tests.fakes import Fn

    p = conv.Point(k=4, n=2, channels=16)
    x = conv.make_inputs(p, 1, device="cpu")
    b = vllm_conv1d._Bound(p, Fn()).buffers(x)
    cs = b["conv_state"]
    assert cs.shape == (2, 16, 3 + 3) and cs.stride(1) == 1  # [N, C, W-2+K], channels contiguous
    assert torch.equal(cs, x.window[..., :6]) and cs.data_ptr() != x.window.data_ptr()
    assert b["accepted"].tolist() == [p.offset + 1] * 2 and b["qsl"].tolist() == [0, 4, 8]
