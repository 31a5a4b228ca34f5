# SPDX-License-Identifier: Apache-2.0
"""gdn_replay's GPU cases from Python (test_gpu.py runs them): many steps of verify + commit on
torch tensors with random accepted counts (so folds happen where the rule says), every step's
outputs and the materialized S_cur compared with a torch float64 sequential recurrence; and a
step of two layers and the commit captured in a torch CUDA graph, replayed with new inputs,
equal bit for bit to eager launches.

Imports without torch (the cases need it and a GPU)."""

import math

from gpu_support import assert_close, dtype_of, torch, wyjit

B, HK, HV = 3, 2, 4


def _spec(io="f32", k=4, log=16):
    return wyjit.Spec.make("gdn_replay", k=k, log=log, io=io, state="f32", layout="vk")


def _stored(canonical):
    """[B, HV, dk, dv] canonical -> vk storage [B, HV, dv, dk], a new contiguous tensor."""
    return canonical.transpose(-1, -2).contiguous()


class ReplayRun:
    """One layer's checkpoints and log tiles, the shared cursors, and the float64 S_cur."""

    def __init__(self, spec, seed):
        self.spec = spec
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(seed)
        dk, dv = spec.dk, spec.dv
        s0 = 0.5 * torch.randn(B, HV, dk, dv, device="cuda", generator=self.gen)
        self.s_cur = s0.double()  # canonical [B, HV, dk, dv]
        self.state = _stored(s0)
        floats = wyjit.gdn_replay_log_floats(spec, HK, HV)
        # NOTE: NaN, not zeros: the kernel must read only live entries, which it wrote itself.
        self.log = torch.full((B, floats), math.nan, device="cuda")
        self.cursor = torch.zeros(B, 2, dtype=torch.int32, device="cuda")
        self.accepted = torch.zeros(B, dtype=torch.int32, device="cuda")
        self.scale = 1 / math.sqrt(dk)

    def tokens(self):
        spec, K = self.spec, self.spec.k
        io = dtype_of(spec.io)

        def randn(*shape):
            return torch.randn(*shape, device="cuda", generator=self.gen)

        def rand(*shape):
            return torch.rand(*shape, device="cuda", generator=self.gen)

        return dict(
            q=torch.nn.functional.normalize(randn(B, K, HK, spec.dk), dim=-1).to(io),
            k=torch.nn.functional.normalize(randn(B, K, HK, spec.dk), dim=-1).to(io),
            v=randn(B, K, HV, spec.dv).to(io),
            g=-(0.01 + 0.2 * rand(B, K, HV)),
            beta=0.05 + 0.9 * rand(B, K, HV),
        )

    def reference(self, x):
        """Outputs [B, K, HV, dv] and states after each token [B, K, HV, dk, dv] from S_cur."""
        q, k, v, g, beta = (x[n].double() for n in ("q", "k", "v", "g", "beta"))
        head = torch.arange(HV, device="cuda") // (HV // HK)
        q, k = q[:, :, head], k[:, :, head]
        s, outs, states = self.s_cur, [], []
        for t in range(v.shape[1]):
            s = s * torch.exp(g[:, t])[..., None, None]
            u = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhij,bhi->bhj", s, k[:, t]))
            s = s + torch.einsum("bhi,bhj->bhij", k[:, t], u)
            outs.append(torch.einsum("bhij,bhi->bhj", s, self.scale * q[:, t]))
            states.append(s)
        return torch.stack(outs, 1), torch.stack(states, 1)

    def verify(self, kernel, x, out, **kw):
        wyjit.gdn_replay_verify(kernel, batch=B, num_k_heads=HK, num_v_heads=HV, out=out,
                                state=self.state, log=self.log, cursor=self.cursor,
                                stream=torch.cuda.current_stream(), **x, **kw)

    def commit(self, kernel):
        wyjit.gdn_replay_commit(kernel, batch=B, cursor=self.cursor, accepted=self.accepted,
                                stream=torch.cuda.current_stream())

    def materialize(self, kernel):
        out = torch.full_like(self.state, math.nan)
        wyjit.gdn_replay_materialize(kernel, batch=B, num_k_heads=HK, num_v_heads=HV,
                                     state=self.state, log=self.log, cursor=self.cursor,
                                     out=out, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        return out.transpose(-1, -2)  # canonical


def check_steps(jit, io, steps):
    """`steps` steps of verify + commit, each draft token accepted with probability 0.7 until
    the first rejection (at least one): outputs every step, S_cur every 50 steps and at the
    end, and the cursor rule (a fold restarts the log) checked."""
    spec = _spec(io)
    kernel = jit.kernel(spec.name)
    K, L = spec.k, spec.log
    run = ReplayRun(spec, seed=7)
    out_tol = 1e-4 if io == "f32" else 2e-2
    state_tol = 1e-4 if io == "f32" else 1e-3
    draw = torch.Generator()
    draw.manual_seed(11)
    lens = [0] * B
    for step in range(steps):
        x = run.tokens()
        out = torch.full((B, K, HV, spec.dv), math.nan, device="cuda", dtype=dtype_of(io))
        run.verify(kernel, x, out)
        want_out, want_states = run.reference(x)
        torch.cuda.synchronize()
        assert_close(out, want_out, out_tol, f"step {step}: out", dims=("b", "t", "head"))
        accepted = []
        for b in range(B):
            a = 1
            while a < K and torch.rand(1, generator=draw).item() < 0.7:
                a += 1
            accepted.append(a)
        run.accepted.copy_(torch.tensor(accepted, dtype=torch.int32))
        run.commit(kernel)
        run.s_cur = want_states[torch.arange(B, device="cuda"),
                               torch.tensor(accepted, device="cuda") - 1]
        for b in range(B):
            lens[b] = accepted[b] if lens[b] + 2 * K > L else lens[b] + accepted[b]
        torch.cuda.synchronize()
        got = run.cursor[:, 1].tolist()
        assert got == lens, f"step {step}: cursor len {got}, the fold rule says {lens}"
        if step % 50 == 49 or step == steps - 1:
            assert_close(run.materialize(kernel), run.s_cur, state_tol,
                         f"step {step}: materialized S_cur", dims=("b", "head"))


def check_torch_graph(jit):
    """Two layers' verifies and the commit in one torch CUDA graph, replayed 20 times with new
    tokens and accepted counts: every output, checkpoint, log tile and cursor equal bit for bit
    to the same launches made eagerly on a second copy of the layers."""
    spec = _spec("bf16")
    kernel = jit.kernel(spec.name)
    K = spec.k
    graphed = [ReplayRun(spec, seed=21 + i) for i in range(2)]
    eager = [ReplayRun(spec, seed=21 + i) for i in range(2)]
    for e in eager:  # one cursor shared by both layers, as an engine keeps it
        e.cursor = eager[0].cursor
        e.accepted = eager[0].accepted
    for g in graphed:
        g.cursor = graphed[0].cursor
        g.accepted = graphed[0].accepted
    static = [graphed[0].tokens() for _ in range(2)]
    outs = [torch.empty(B, K, HV, spec.dv, device="cuda", dtype=dtype_of(spec.io))
            for _ in range(2)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(side), torch.cuda.graph(graph, stream=side):
        for layer in range(2):
            graphed[layer].verify(kernel, static[layer], outs[layer])
        graphed[0].commit(kernel)
    torch.cuda.synchronize()
    draw = torch.Generator(device="cuda")
    draw.manual_seed(5)
    for replay in range(20):
        fresh = [eager[0].tokens() for _ in range(2)]
        accepted = torch.randint(-1, K + 2, (B,), generator=draw, device="cuda",
                                 dtype=torch.int32)  # padding (-1) and > K (clamped) too
        for layer in range(2):
            for n, t in fresh[layer].items():
                static[layer][n].copy_(t)
        graphed[0].accepted.copy_(accepted)
        graph.replay()
        want = []
        for layer in range(2):
            o = torch.empty_like(outs[layer])
            eager[layer].verify(kernel, fresh[layer], o)
            want.append(o)
        eager[0].accepted.copy_(accepted)
        eager[0].commit(kernel)
        torch.cuda.synchronize()
        for layer in range(2):
            for name, got, exp in (("out", outs[layer], want[layer]),
                                   ("checkpoint", graphed[layer].state, eager[layer].state),
                                   ("log", graphed[layer].log, eager[layer].log)):
                same = torch.equal(got, exp) or torch.equal(got.isnan(), exp.isnan()) and \
                    torch.equal(got.nan_to_num(0.0), exp.nan_to_num(0.0))
                assert same, f"replay {replay}, layer {layer}: {name} differs from eager"
        assert torch.equal(graphed[0].cursor, eager[0].cursor), f"replay {replay}: cursor"


def check_errors_on_the_gpu(jit):
    """A refused launch changes nothing: the cursor and the log keep their bytes."""
    spec = _spec("f32")
    kernel = jit.kernel(spec.name)
    run = ReplayRun(spec, seed=3)
    before = (run.cursor.clone(), run.log.clone())
    x = run.tokens()
    out = torch.empty(B, spec.k, HV, spec.dv, device="cuda")
    bad_cursor = torch.zeros(B, 1, dtype=torch.int32, device="cuda")
    try:
        wyjit.gdn_replay_verify(kernel, batch=B, num_k_heads=HK, num_v_heads=HV, out=out,
                                state=run.state, log=run.log, cursor=bad_cursor, **x)
    except wyjit.InvalidArgumentError as e:
        assert "cursor has shape [3, 1]" in str(e), e
    else:
        raise AssertionError("a [batch, 1] cursor was accepted")
    torch.cuda.synchronize()
    assert torch.equal(run.cursor, before[0])
    assert torch.equal(run.log.isnan(), before[1].isnan())
