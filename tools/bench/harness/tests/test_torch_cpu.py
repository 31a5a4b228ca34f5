# SPDX-License-Identifier: Apache-2.0
"""The torch side on the CPU (skipped where torch is not installed): inputs, the float64
references against independent forms, the state arrangements, and the peer adapters' buffers."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from harness import states  # noqa: E402
from harness.check import compare, with_final  # noqa: E402
from harness.families import gdn_verify as gdn  # noqa: E402
from harness.peers import sglang_update, sglang_verify, vllm_spec  # noqa: E402

from harness.tests.fakes import Fn as _Fn  # noqa: E402

SMALL = gdn.Point(k=4, n=3, hk=2, hv=4, dk=16, dv=8)


def test_inputs_are_random_deterministic_and_in_range():
    x = gdn.make_inputs(SMALL, 5, device="cpu")
    y = gdn.make_inputs(SMALL, 5, device="cpu")
    z = gdn.make_inputs(SMALL, 6, device="cpu")
    assert torch.equal(x.q, y.q) and torch.equal(x.state, y.state)
    assert not torch.equal(x.q, z.q)
    for t in (x.q, x.k, x.v, x.state, x.g, x.beta):
        assert (t != 0).float().mean() > 0.99
    assert (x.g < 0).all() and (x.beta > 0).all() and (x.beta < 1).all()
    assert x.q.dtype == torch.bfloat16 and x.state.dtype == torch.float32
    assert x.state.shape == (3, 4, 8, 16)  # [N, HV, dv, dk]
    # g and beta come from a and b (as the io dtype holds them), so fused and plain agree.
    sp = torch.nn.functional.softplus(x.a.float() + x.dt_bias)
    assert torch.allclose(x.g, -torch.exp(x.a_log) * sp, rtol=1e-6, atol=1e-7)


def test_gdn_reference_matches_the_wy_closed_form():
    """DESIGN.md "WY identity": u by forward substitution, o and S_t in closed form, from S0."""
    p, x = SMALL, gdn.make_inputs(SMALL, 9, device="cpu")
    ref = gdn.reference(p, x)
    n, k, rep = p.n, p.k, p.hv // p.hk

    def norm(t):
        return t / torch.sqrt((t * t).sum(-1, keepdim=True) + 1e-6)

    q = norm(x.q.double().view(n, k, p.hk, p.dk)).repeat_interleave(rep, 2)
    kk = norm(x.k.double().view(n, k, p.hk, p.dk)).repeat_interleave(rep, 2)
    v = x.v.double().view(n, k, p.hv, p.dv)
    G = torch.cumsum(x.g.double().view(n, k, p.hv), 1)
    beta = x.beta.double().view(n, k, p.hv)
    s0 = x.state.double()  # [N, HV, dv, dk]: S0^T
    u = []
    for t in range(k):
        acc = v[:, t] - torch.exp(G[:, t])[..., None] * torch.einsum("nhvk,nhk->nhv", s0, kk[:, t])
        for j in range(t):
            kj_kt = (kk[:, j] * kk[:, t]).sum(-1)
            acc = acc - (torch.exp(G[:, t] - G[:, j]) * kj_kt)[..., None] * u[j]
        u.append(beta[:, t][..., None] * acc)
    for t in range(k):
        o = torch.exp(G[:, t])[..., None] * torch.einsum("nhvk,nhk->nhv", s0, q[:, t])
        st = torch.exp(G[:, t])[..., None, None] * s0
        for j in range(t + 1):
            e = torch.exp(G[:, t] - G[:, j])
            o = o + (e * (kk[:, j] * q[:, t]).sum(-1))[..., None] * u[j]
            st = st + e[..., None, None] * u[j][..., :, None] * kk[:, j][..., None, :]
        o = o * p.scale
        assert torch.allclose(ref["out"].view(n, k, p.hv, p.dv)[:, t], o, rtol=1e-9, atol=1e-12)
        assert torch.allclose(ref["states"][:, t], st, rtol=1e-9, atol=1e-12)


def test_arrange_reads_a_copy_and_returns_writes_in_order():
    init = torch.arange(2 * 3, dtype=torch.float32).view(2, 3)
    for addressing in ("strided", "slot"):
        tiles = states.arrange(addressing, init, writes=3, wyjit=None)
        kw = tiles.kwargs
        if addressing == "strided":
            assert torch.equal(kw["state"], init) and kw["state"].data_ptr() != init.data_ptr()
            assert kw["inter"].shape == (2, 2, 3)
            kw["inter"][:, 0], kw["inter"][:, 1], kw["state"][:] = 10.0, 11.0, 12.0
        else:
            assert kw["state"].shape == (2 * 4, 3) and torch.equal(kw["state"][:2], init)
            assert kw["read_slot"].tolist() == [0, 1]
            assert kw["write_slot"].tolist() == [[2, 3, 4], [5, 6, 7]]
            for b in range(2):
                for t in range(3):
                    kw["state"][kw["write_slot"][b, t]] = 10.0 + t
        w = tiles.written()
        assert w.shape == (2, 3, 3)
        assert [w[b, t, 0].item() for b in range(2) for t in range(3)] == [10, 11, 12] * 2
    one = states.arrange("strided", init, writes=1, wyjit=None)
    assert "inter" not in one.kwargs and one.written().shape == (2, 1, 3)


def test_peer_buffers_put_s0_where_each_peer_reads_it():
    p = SMALL
    x = gdn.make_inputs(p, 2, device="cpu")
    vb = vllm_spec._Bound(p, _Fn()).buffers(x)
    assert vb["pool"].shape == (p.n * p.k, p.hv, p.dk, p.dv)
    assert vb["indices"].tolist() == [[b * p.k + t for t in range(p.k)] for b in range(p.n)]
    assert vb["accepted"].tolist() == [1] * p.n and vb["cu"].tolist() == [0, 4, 8, 12]
    for b in range(p.n):  # slot indices[b][accepted-1] holds S0 in [HV][dk][dv]
        assert torch.equal(vb["pool"][b * p.k], x.state[b].transpose(-1, -2))
    for mod in (sglang_update, sglang_verify):
        sb = mod._Bound(p, _Fn()).buffers(x)
        assert torch.equal(sb["pool"], x.state) and sb["pool"].data_ptr() != x.state.data_ptr()
        assert sb["inter"].shape == (p.n, p.k, p.hv, p.dv, p.dk)
        assert sb["q"].shape == (1, p.rows, p.hk, p.dk) and sb["idx"].tolist() == [0, 1, 2]


def test_peer_calls_keep_every_state():
    p = SMALL
    x = gdn.make_inputs(p, 2, device="cpu")
    for mod in (sglang_update, sglang_verify):
        fn = _Fn()
        bound = mod._Bound(p, fn)
        bound(bound.buffers(x))
        assert fn.kw["disable_state_update"] is True and fn.kw["cache_steps"] == p.k
        assert fn.kw["use_qk_l2norm_in_kernel"] is True and fn.kw["scale"] == p.scale
    fn = _Fn(result=(None, None))  # vLLM returns (o, final_state)
    bound = vllm_spec._Bound(p, fn)
    bound(bound.buffers(x))
    assert fn.kw["inplace_final_state"] is True and fn.kw["use_qk_l2norm_in_kernel"] is True
    assert fn.kw["num_accepted_tokens"].tolist() == [1] * p.n


def test_compare_and_final():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert compare(a, a) == (0.0, 0.0)
    assert compare(a + 0.4, a)[1] == pytest.approx(0.1)
    assert compare(a[:1], a)[0] == float("inf")
    r = with_final({"states": torch.arange(6.0).view(1, 3, 2)})
    assert r["final"].tolist() == [[4.0, 5.0]]
