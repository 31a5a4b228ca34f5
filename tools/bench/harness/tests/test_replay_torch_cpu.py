# SPDX-License-Identifier: Apache-2.0
"""gdn_replay on torch CPU tensors (skipped where torch is not installed): the inputs, the
float64 reference against DESIGN's replay route, and every runner's arrays, cursors, commits
and materialize driven through stand-ins of its kernels (tests/replay_emulator.py): wyjit's
launches after the library's own argument checks, FlashInfer's kernel as its docstring states
it, TRT-LLM's bookkeeping and work list, vLLM's and SGLang's calls."""

from __future__ import annotations

import dataclasses
import types

import pytest

torch = pytest.importorskip("torch")

from harness.context import import_wyjit  # noqa: E402
from harness.families import _replay_cursors as cursors  # noqa: E402
from harness.families import _replay_wyjit as wy  # noqa: E402
from harness.families import gdn_replay as fam  # noqa: E402
from harness.families import gdn_verify as gv  # noqa: E402
from harness.families._replay_run import s_cur  # noqa: E402
from harness.peers import flashinfer_replay, sglang_replay, trtllm_replay, vllm_replay  # noqa: E402
from harness.tests import replay_emulator as emu  # noqa: E402

SMALL = fam.Point(k=4, n=3, hk=2, hv=4, dk=16, dv=8, steps=24, layers=3)


def _wyjit():
    """The wyjit package with its library, for its argument checks, or None."""
    try:
        w = import_wyjit()
        w.Spec.families()
        return w
    except Exception:  # noqa: BLE001 - no library on this machine: the checks are skipped
        return None


def _episode_folds(p, rule, x) -> int:
    d = cursors.draw(p.n, p.k, fam.check_steps(p), p.accept, x.seed, warmup=0)
    return sum(map(sum, cursors.simulate(rule, d, p.k).fold))


def test_inputs_carry_a_history_of_the_right_shapes():
    x = fam.make_inputs(SMALL, 5, device="cpu")
    y = fam.make_inputs(SMALL, 5, device="cpu")
    t = gv.make_inputs(SMALL.classic(), 5, device="cpu")
    assert torch.equal(x.q, t.q) and torch.equal(x.state, t.state)
    assert torch.equal(x.hist_u, y.hist_u)
    assert x.hist_k.shape == (3, 32, 2, 16) and x.hist_u.shape == (3, 32, 4, 8)
    assert x.hist_g.shape == (3, 32, 4) and (x.hist_g < 0).all()
    assert torch.allclose(x.hist_k.norm(dim=-1), torch.ones(3, 32, 2))
    assert fam.make_inputs(dataclasses.replace(SMALL, log=64, k=8), 1, "cpu").hist_u.shape[1] == 64


def test_the_reference_matches_the_replay_route():
    """DESIGN's replay route (checkpoint + log, WY solve, folds when len + 2K > L) against the
    family's reference (the sequential recurrence, token by token)."""
    p, x = SMALL, fam.make_inputs(SMALL, 9, device="cpu")
    ref, ep = fam.reference(p, x), fam.episode(p, x)
    rep = p.hv // p.hk
    for b in range(p.n):
        s0, ks, us, Gs = x.state[b].double(), [], [], []
        for step, (t, acc) in enumerate(zip(ep.tokens, ep.accepted, strict=True)):
            live = [torch.stack(z) if z else torch.zeros(0, p.hv, d)
                    for z, d in ((ks, p.dk), (us, p.dv), (Gs, 1))]
            live[2] = live[2].reshape(-1, p.hv)
            q, k, v, g, beta = emu.token_rows(p, vars(t), b)
            o, u, G = emu.wy_tokens(s0, *live, q, k, v, g, beta, p.scale)
            assert emu.close(o.reshape(p.k, -1), ref["out"][step, b * p.k:(b + 1) * p.k]) < 1e-10
            if len(ks) + 2 * p.k > p.L:
                s0, ks, us, Gs = emu.s_cur_t(s0, *live), [], [], []
            elif Gs:
                G = G + Gs[-1]
            ks, us, Gs = ks + list(k[:acc[b]]), us + list(u[:acc[b]]), Gs + list(G[:acc[b]])
        last = [torch.stack(z) for z in (ks, us, Gs)]
        assert emu.close(emu.s_cur_t(s0, *last), ref["state"][b]) < 1e-10
    assert rep == 2 and _episode_folds(p, cursors.wyjit_rule(p.L), x) > 0


def test_s_cur_takes_per_token_and_cumulative_logs_alike():
    g = -torch.rand(2, 4, 5, dtype=torch.float64)
    h0 = torch.randn(2, 4, 8, 16, dtype=torch.float64)
    u = torch.randn(2, 4, 5, 8, dtype=torch.float64)
    k = torch.randn(2, 2, 5, 16, dtype=torch.float64)
    pos = [[3, 4, 0], [1]]
    a = s_cur(h0, u, k, g, pos, cumulative=False)
    G = torch.zeros_like(g)
    for b, idx in enumerate(pos):
        G[b][:, idx] = torch.cumsum(g[b][:, idx], dim=-1)
    assert emu.close(s_cur(h0, u, k, G, pos, cumulative=True), a) < 1e-12
    kk = k[0][:, pos[0]].repeat_interleave(2, 0).transpose(0, 1)
    want = emu.s_cur_t(h0[0], kk, u[0][:, pos[0]].transpose(0, 1), G[0][:, pos[0]].T)
    assert emu.close(a[0], want) < 1e-12


def test_the_wyjit_log_tile_is_the_headers_layout():
    p, x = SMALL, fam.make_inputs(SMALL, 2, device="cpu")
    tile = wy.log_tile(p, x, True)
    assert tile.shape == (3, p.L * p.entry_floats) and tile.dtype == torch.float32
    kk, uu = p.L * p.hk * p.dk, p.L * p.hv * p.dv
    # entry j: k at [j][HK*dk], u at L*HK*dk + [j][HV*dv], G at L*(HK*dk + HV*dv) + [j][HV]
    j, b = 5, 1
    assert torch.equal(tile[b, j * 32:(j + 1) * 32], x.hist_k[b, j].reshape(-1))
    assert torch.equal(tile[b, kk + j * 32:kk + (j + 1) * 32], x.hist_u[b, j].reshape(-1))
    G = tile[b, kk + uu + j * 4:kk + uu + (j + 1) * 4]
    assert torch.allclose(G, x.hist_g[b, :j + 1].sum(0))
    assert not wy.log_tile(p, x, False).any()


@pytest.mark.parametrize("layout", ["vk", "kv"])
@pytest.mark.parametrize("addressing", ["strided", "table", "slot"])
def test_the_wyjit_runner_drives_replay_mode(layout, addressing):
    real = _wyjit()
    gating = "fused" if addressing == "table" else "g"
    p = fam.Point(k=4, n=3, hk=2, hv=4, dk=64, dv=64, io="f32", gating=gating, steps=24, layers=3)
    fake = emu.FakeWyjit(p, layout, addressing, real)
    r = wy.WyjitReplay(layout, addressing)
    bound = wy._ReplayBound(p, r, wy.variant_name(p, layout, addressing), fake, device="cpu")
    x = fam.make_inputs(p, 4, device="cpu")
    bufs = bound.buffers(x)
    bound.check_call(bufs)
    got, ref = bound.readback(bufs), fam.reference(p, x)
    assert emu.close(got["out"], ref["out"]) < 1e-5 and emu.close(got["state"], ref["state"]) < 1e-5
    assert _episode_folds(p, r.rule(p), x) > 0
    assert real is None or fake.checked == 2 * fam.check_steps(p) + 1  # every launch checked
    bound.bind(bufs, 7)()
    steps = bound.step_calls()
    assert len(steps) == p.steps
    steps[0]()
    assert torch.equal(bound.snaps[0], torch.tensor([[b, n] for b, n in zip(
        bound.traj.base[0], bound.traj.length[0], strict=True)], dtype=torch.int32))


def test_the_classic_runner_keeps_the_accepted_state():
    p = dataclasses.replace(SMALL, io="f32")
    x = fam.make_inputs(p, 3, device="cpu")

    class Inner:  # gdn_verify's float64 reference standing in for the kernel
        variant = "fake"

        def buffers(self, xs):
            return {"x": xs}

        def __call__(self, b):
            b["res"] = gv.reference(p.classic(), b["x"])

        def readback(self, b):
            return b["res"]

    bound = wy._ClassicBound(p, Inner())
    bufs = bound.buffers(x)
    bound.check_call(bufs)
    ref = fam.reference(p, x)
    assert emu.close(bufs["check"]["out"], ref["out"]) < 1e-6
    assert emu.close(bufs["check"]["state"], ref["state"]) < 1e-6


def test_the_flashinfer_adapter_against_its_documented_kernel():
    p = dataclasses.replace(SMALL, state="bf16", steps=24)
    r = flashinfer_replay.FlashinferReplay()
    mod = types.SimpleNamespace(gated_delta_rule_mtp_ucache_flush=emu.flashinfer_kernel(p, 13))
    bound = r.bound(p, mod, device="cpu")
    x = fam.make_inputs(p, 6, device="cpu")
    bufs = bound.buffers(x)
    bound.check_call(bufs)
    got, ref = bound.readback(bufs), fam.reference(p, x)
    assert emu.close(got["out"], ref["out"]) < 2e-2 and emu.close(got["state"], ref["state"]) < 2e-2
    assert bound.flush_min == 13 and _episode_folds(p, r.rule(p), x) > 0
    assert r.kernel_skip(p) == "K = V = 128 only" and r.kernel_skip(dataclasses.replace(SMALL)) \
        .startswith("bf16 checkpoint only")


def test_the_trtllm_bookkeeping_and_work_list_follow_its_rule():
    p = fam.Point(k=4, n=20, hk=2, hv=4, dk=16, dv=8, steps=30, layers=2)
    calls = []
    mod = types.SimpleNamespace(
        CACHED_REPLAY_PARTITION_MIN_BATCH_SIZE=16,
        commit_gdn_cached_replay_history_layers=lambda **kw: calls.append(
            (kw["replay_work_items"].clone(), int(kw["n_writes"]))))
    bound = trtllm_replay.TrtllmReplay().bound(p, mod, device="cpu")
    assert bound.all_layer and bound.needs_stack
    t = bound.traj
    cur = bound.cursors(t.base[0], t.length[0], t.fold[0])
    for i in range(t.steps - 1):
        bound.commit({"ssm": None, "u": None, "k": None, "G": None}, cur, bound.acc[i])
        assert cur["pnat"].tolist() == list(t.length[i + 1])
        assert cur["buf"].tolist() == list(t.base[i + 1])
        items, nw = calls[-1]
        folded = [b for b in range(p.n) if t.fold[i][b]]
        assert nw == len(folded) and items[:nw, 0].tolist() == folded
        assert items[:nw, 1].tolist() == folded  # slot b for row b
        assert items[:nw, 2].tolist() == [t.length[i][b] for b in folded]
        assert items[:nw, 3].tolist() == [t.base[i][b] for b in folded]


def test_the_flashinfer_commit_follows_its_rule():
    p = dataclasses.replace(SMALL, state="bf16", n=9, steps=40)
    bound = flashinfer_replay.FlashinferReplay().bound(p, None, device="cpu")
    t = bound.traj
    cur = bound.cursors(t.base[0], t.length[0], t.fold[0])
    for i in range(t.steps - 1):
        bound.commit(None, cur, bound.acc[i])
        assert cur["len"].tolist() == list(t.length[i + 1])
        assert cur["base"].tolist() == list(t.base[i + 1])


def test_the_vllm_and_sglang_calls():
    seen = {}

    def rec(name):
        return lambda *a, **kw: seen.__setitem__(name, (a, kw))

    names = ("gdn_replayssm_spec_decode", "commit_gdn_replayssm_spec",
             "commit_gdn_replayssm_circular")
    mod = types.SimpleNamespace(**{n: rec(n) for n in names})
    p = SMALL
    x = fam.make_inputs(p, 1, device="cpu")
    vb = vllm_replay.VllmReplay().bound(p, mod, device="cpu")
    bufs = vb.buffers(x)
    vb.bind(bufs, 2)()
    kw = seen["gdn_replayssm_spec_decode"][1]
    assert kw["ssm_state_indices"].tolist() == [1, 2, 3] and kw["max_cache_len"] == 16 + p.k
    assert kw["is_flush"].dtype == torch.int8 and kw["is_flush"][1:].tolist() == \
        [int(f) for f in vb.traj.fold[2]] and kw["write_pos"][0] == 0
    assert kw["mixed_qkv"].shape == (p.rows, 2 * p.hk * p.dk + p.hv * p.dv)
    assert torch.equal(bufs["arr"]["d"][2, 1], x.hist_u[1, :, 1].to(x.q.dtype))
    vb.step_calls()[0]()
    assert seen["commit_gdn_replayssm_spec"][1]["cache_buf_len"] == 32
    for state in ("f32", "bf16"):
        q = dataclasses.replace(p, state=state)
        sb = sglang_replay.SglangReplay().bound(q, mod, device="cpu")
        b = sb.buffers(fam.make_inputs(q, 1, device="cpu"))
        sb(b)
        kw = seen["gdn_replayssm_spec_decode"][1]
        assert kw["launch_mode"] == "verify" and kw["null_block_id"] == -1
        assert (kw["rawv_cache"] is None) == (state == "f32") and kw["beta_cache"] is None
        sb.step_calls()[0]()
        assert seen["commit_gdn_replayssm_spec"][1]["fold_every_commit"] == (state != "f32")
        assert seen["commit_gdn_replayssm_circular"][1]["checkpoint_state"].shape[0] == q.layers
