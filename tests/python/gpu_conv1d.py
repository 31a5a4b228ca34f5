# SPDX-License-Identifier: Apache-2.0
"""conv1d_update's GPU cases, run by test_gpu.py (under pytest and on its own): launches from
Python on torch tensors for both rollback forms and the three addressing modes, compared with
a float64 reference written here; the same inputs through every addressing mode and both
kernel paths bit for bit; the window form's rollback equal to the intermediate form's over
several steps; a torch CUDA graph replayed with new inputs and offsets.

Every case poisons what the launch must not write (NaN) and checks afterwards that every
element of every state buffer is either what the contract says the launch writes (the inputs
it read: bit for bit) or what it was before. x is a column slice of a packed projection and y
a column slice of a wider buffer, so the row strides are not the channel count.

test_gpu_harness.py runs these cases on the CPU against a float64 emulation of a correct kernel
(DEVICE "cpu", LAUNCH swapped), so a harness bug shows up there rather than on the GPU.
"""

import math
import types

from gpu_support import assert_close, dtype_of, torch, wyjit

# Where the tensors live and what launches (the CPU self-test swaps both).
DEVICE = "cuda"
LAUNCH = wyjit.conv1d_update

# NOTE: an odd batch, and channels that are not a multiple of a 16-byte group (8 bf16), so that
# the kernels' partial groups run.
B, C, K, W = 5, 100, 4, 4
H = W - 1


def synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def current_stream():
    return torch.cuda.current_stream() if DEVICE == "cuda" else None


def spec_of(rollback, addressing, k=K):
    """Intermediate: f32 weights with bias and SiLU; window: weights in the io dtype, SiLU, no
    bias (as the standard matrix and the shipped models run it)."""
    if rollback == "intermediate":
        return wyjit.Spec.make("conv1d_update", k=k, width=W, io="bf16", weight="f32",
                               rollback=rollback, addressing=addressing, bias=True, silu=True)
    return wyjit.Spec.make("conv1d_update", k=k, width=W, io="bf16", weight="io",
                           rollback=rollback, addressing=addressing, silu=True)


def tolerance(spec):
    return {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2}[spec.io]


def generator(seed):
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return gen


def make_problem(spec, cols, seed):
    """Random inputs, already in the dtypes the kernel reads: x [B, K, C], weight [C, W], bias
    [C] or None, and `content` [B, C, cols]: what each sequence's read tile holds."""
    gen = generator(seed)
    io, wt = dtype_of(spec.io), dtype_of(spec.weight)

    def randn(*shape):
        return torch.randn(*shape, device=DEVICE, generator=gen)

    def rand(*shape):
        return torch.rand(*shape, device=DEVICE, generator=gen)

    return dict(
        x=randn(B, spec.k, C).to(io),
        weight=(1.2 * rand(C, W) - 0.6).to(wt),
        bias=(rand(C) - 0.5).to(wt) if spec.bias else None,
        content=randn(B, C, cols).to(io),
    )


def reference(spec, x, weight, bias, history):
    """float64: y [B, K, C] and the window z [B, C, W-1+K] = [history, x_0..x_{K-1}] per
    channel (z[..., t+1 : t+W] is the conv state after token t)."""
    z = torch.cat([history.double(), x.double().transpose(1, 2)], 2)
    w = weight.double()
    y = torch.stack([(z[:, :, t:t + W] * w).sum(-1) for t in range(x.shape[1])], 1)
    if bias is not None:
        y = y + bias.double()
    if spec.silu:
        y = y / (1 + torch.exp(-y))
    return y, z


def tiles(lead, cols, dtype, cols_major):
    """State tiles poisoned with NaN, seen as [*lead, C, cols]; cols_major: a view of
    [*lead, cols, C] storage (channels contiguous, as vLLM keeps its conv state)."""
    if cols_major:
        return torch.full((*lead, cols, C), math.nan, device=DEVICE, dtype=dtype).transpose(-1, -2)
    return torch.full((*lead, C, cols), math.nan, device=DEVICE, dtype=dtype)


def packed_rows(x):
    """x [B, K, C] as columns C..2C of a [B*K, 3C] projection (row stride 3C)."""
    n = x.shape[0] * x.shape[1]
    packed = torch.randn(n, 3 * C, device=DEVICE).to(x.dtype)
    packed[:, C:2 * C] = x.reshape(n, C)
    return packed[:, C:2 * C]


def output_rows(n, dtype):
    """y as columns 0..C of a NaN [n, 2C] buffer: (the view, the whole buffer)."""
    whole = torch.full((n, 2 * C), math.nan, device=DEVICE, dtype=dtype)
    return whole[:, :C], whole


def geometry(view):
    """The tile geometry of a [..., C, cols] view (for table addressing)."""
    return dict(state_cols=view.shape[-1], state_channel_stride=view.stride(-2),
                state_col_stride=view.stride(-1))


def same_bits(got, want):
    """Equal element for element, NaN where NaN."""
    return torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(),
                                                                  want.nan_to_num())


class Bound(types.SimpleNamespace):
    """A problem bound to one addressing mode: `arguments` for the launch, `buffers` (name ->
    [.., C, cols] tiles) it may write, `targets[b][t]` = (buffer, index) of write t of sequence
    b (None: skipped), and the stager to close."""

    def close(self):
        if self.stager is not None:
            self.stager.close()


def bind(spec, content, addressing, cols_major, padded, skipped, seed):
    """Binds the read tiles `content` [B, C, cols] to `addressing`: sequences in `padded` are
    padding (a null table entry, a read slot of -1), writes (b, t) in `skipped` are skipped (a
    null entry, a write slot of -1). Strided addressing can express neither."""
    window = spec.rollback == "window"
    writes = 1 if window else spec.k
    cols = content.shape[-1]
    dtype = content.dtype
    perm = torch.randperm(B * (writes + 1) + 3, generator=torch.Generator().manual_seed(seed))
    if addressing == "strided":
        assert not padded and not skipped, "strided addressing has no padding"
        state = tiles((B,), cols, dtype, cols_major)
        state.copy_(content)
        buffers = {"state": state}
        arguments = {"state": state}
        if writes > 1:
            buffers["inter"] = arguments["inter"] = tiles((B, writes - 1), cols, dtype, cols_major)
        targets = [[("inter", (b, t)) for t in range(writes - 1)] + [("state", (b,))]
                   for b in range(B)]
        return Bound(arguments=arguments, buffers=buffers, targets=targets, stager=None)
    pool = tiles((len(perm),), cols, dtype, cols_major)
    reads = perm[:B].tolist()
    if addressing == "table":
        inter = [perm[B + b * (writes - 1): B + (b + 1) * (writes - 1)].tolist() for b in range(B)]
        targets = [[None if (b, t) in skipped else ("pool", (inter[b][t],))
                    for t in range(writes - 1)] + [("pool", (reads[b],))] for b in range(B)]
        for b in range(B):
            pool[reads[b]] = content[b]
        stager = wyjit.TableStager(writes, B)
        stager.stage([None if b in padded else pool[reads[b]] for b in range(B)],
                     [[None if target[t] is None or b in padded else pool[target[t][1][0]]
                       for b, target in enumerate(targets)] for t in range(writes - 1)]
                     if writes > 1 else None, stream=current_stream())
        return Bound(arguments={"tables": stager, **geometry(pool)}, buffers={"pool": pool},
                     targets=targets, stager=stager)
    assert addressing == "slot"
    written = perm[B:B + B * writes].view(B, writes).tolist()
    targets = [[None if (b, t) in skipped else ("pool", (written[b][t],)) for t in range(writes)]
               for b in range(B)]
    for b in range(B):
        pool[reads[b]] = content[b]
    read_slot = torch.tensor([-1 if b in padded else reads[b] for b in range(B)],
                             dtype=torch.int32, device=DEVICE)
    write_slot = torch.tensor([[-1 if target is None else target[1][0] for target in row]
                               for row in targets], dtype=torch.int32, device=DEVICE)
    if window:
        write_slot = write_slot[:, 0]  # [B]: one write a sequence
    return Bound(arguments={"state": pool, "read_slot": read_slot, "write_slot": write_slot},
                 buffers={"pool": pool}, targets=targets, stager=None)


def run_case(jit, rollback, addressing, cols_major, path="auto", seed=50):
    """One launch, checked: y of live sequences against the reference, y of padded ones and the
    rest of the y buffer untouched, every state buffer element written as the contract says or
    untouched. Returns (y [B, K, C], the live sequences)."""
    spec = spec_of(rollback, addressing)
    window = rollback == "window"
    cols = H + K + 3 if window else H + 1  # a window buffer made for a larger K; spare columns
    p = make_problem(spec, cols, seed)
    padded = set() if addressing == "strided" else {1}
    skipped = set() if addressing == "strided" else ({(2, 0)} if window else {(0, 1), (3, K - 1)})
    offsets = None
    if window:
        offsets = torch.randint(0, cols - H + 1, (B,), generator=generator(seed + 1),
                                device=DEVICE, dtype=torch.int32)
        offsets[3] = cols - H + 1  # past the last valid offset: padding
        padded = padded | {3}
    off = [o if 0 <= o <= cols - H else 0 for o in offsets.tolist()] if window else [0] * B
    history = torch.stack([p["content"][b, :, off[b]:off[b] + H] for b in range(B)])
    want_y, z = reference(spec, p["x"], p["weight"], p["bias"], history)

    bound = bind(spec, p["content"], addressing, cols_major, padded - {3}, skipped, seed)
    expected = {name: t.clone() for name, t in bound.buffers.items()}
    for b in set(range(B)) - padded:
        for t, target in enumerate(bound.targets[b]):
            if target is None:
                continue
            name, index = target
            if window:
                expected[name][index][:, :H + K] = z[b]
            else:
                expected[name][index][:, :H] = z[b, :, t + 1:t + 1 + H]
    x_rows = packed_rows(p["x"])
    y_rows, y_whole = output_rows(B * K, p["x"].dtype)
    try:
        LAUNCH(jit.kernel(spec), batch=B, channels=C, x=x_rows, y=y_rows, weight=p["weight"],
               bias=p["bias"], window_offset=offsets, path=path, stream=current_stream(),
               **bound.arguments)
        synchronize()
    finally:
        bound.close()
    what = f"{spec} ({'[cols, C]' if cols_major else '[C, cols]'} tiles, path {path})"
    live = sorted(set(range(B)) - padded)
    y = y_rows.view(B, K, C)
    assert_close(y[live], want_y[live], tolerance(spec), f"{what}: y of sequences {live}",
                 ("b", "t"))
    for b in sorted(padded):
        assert y[b].isnan().all(), f"{what}: y of padded sequence {b} was written"
    assert y_whole[:, C:].isnan().all(), f"{what}: y was written past its {C} channels"
    for name, now in bound.buffers.items():
        if not same_bits(now, expected[name]):
            wrong = (~((now == expected[name]) | (now.isnan() & expected[name].isnan())))
            where = wrong.flatten(-2).any(-1).nonzero().tolist()[:8]
            raise AssertionError(f"{what}: {name} differs from what the launch should leave at "
                                 f"{int(wrong.sum())} elements, in tiles {where}")
    return y.clone(), live


# ---- the cases --------------------------------------------------------------------------------

CASES = [(rollback, addressing, cols_major)
         for rollback in ("intermediate", "window")
         for addressing in ("strided", "table", "slot")
         for cols_major in (False, True)]


def check_case(jit, rollback, addressing, cols_major):
    run_case(jit, rollback, addressing, cols_major)


def check_addressings_and_paths_agree(jit, rollback):
    """The same inputs through every addressing mode and both kernel paths give y bit for bit
    (the library's contract: the paths compute the same values; the addressing modes only
    change where the tiles are)."""
    runs = {}
    for addressing in ("strided", "table", "slot"):
        for path in ("wide", "narrow"):
            runs[(addressing, path)] = run_case(jit, rollback, addressing, cols_major=True,
                                                path=path, seed=70)
    (y0, live0), first = runs[("strided", "wide")], ("strided", "wide")
    for key, (y, live) in runs.items():
        common = sorted(set(live) & set(live0))
        assert torch.equal(y[common], y0[common]), (
            f"{rollback}: y of {key} differs from {first} on sequences {common} "
            f"(max {(y[common].double() - y0[common].double()).abs().max().item():.3e})")


def check_window_rollback_equals_intermediate(jit, steps=4):
    """Several steps with random accepted counts (1..K): the window form, told the accepted
    count as the next offset, reads the same history as the intermediate form whose engine
    takes the state after the last accepted token; y is equal bit for bit, and equal to the
    reference that replays the accepted tokens."""
    window_spec = spec_of("window", "strided")
    inter_spec = window_spec.replace(rollback="intermediate")  # the same options otherwise
    inter_kernel, window_kernel = jit.kernel(inter_spec), jit.kernel(window_spec)
    gen = generator(90)
    io = dtype_of("bf16")
    weight = (1.2 * torch.rand(C, W, device=DEVICE, generator=gen) - 0.6).to(io)
    history = torch.randn(B, C, H, device=DEVICE, generator=gen).to(io)
    state = tiles((B,), H, io, cols_major=True)  # intermediate form: [B, C, W-1]
    state.copy_(history)
    inter = tiles((B, K - 1), H, io, cols_major=True)
    window = tiles((B,), H + K, io, cols_major=False)  # window form: [B, C, W-1+K]
    window[:, :, :H] = history
    offsets = torch.zeros(B, dtype=torch.int32, device=DEVICE)
    common = dict(batch=B, channels=C, weight=weight, stream=current_stream())
    for step in range(steps):
        x = torch.randn(B, K, C, device=DEVICE, generator=gen).to(io)
        want, z = reference(window_spec, x, weight, None, history)
        y_inter, _ = output_rows(B * K, io)
        y_window, _ = output_rows(B * K, io)
        LAUNCH(inter_kernel, x=packed_rows(x), y=y_inter, state=state, inter=inter, **common)
        LAUNCH(window_kernel, x=x, y=y_window, state=window, window_offset=offsets, **common)
        synchronize()
        assert torch.equal(y_inter, y_window), f"step {step}: the two forms' y differ"
        assert_close(y_window.view(B, K, C), want, 1e-2, f"step {step}: y", ("b", "t"))
        accepted = torch.randint(1, K + 1, (B,), generator=torch.Generator().manual_seed(step))
        for b, a in enumerate(accepted.tolist()):
            kept = state[b] if a == K else inter[b, a - 1]  # the state after token a-1
            history[b] = z[b, :, a:a + H].to(io)
            assert torch.equal(kept, history[b]), f"step {step}: state after token {a - 1}"
            state[b] = kept.clone()
        offsets.copy_(accepted.to(torch.int32))


def check_torch_graph(jit):
    """Window form, slot addressing, captured once with torch.cuda.graph and replayed with new
    x, new offsets and new slots."""
    spec = spec_of("window", "slot")
    kernel = jit.kernel(spec)
    io = dtype_of(spec.io)
    cols = H + K
    pool = tiles((2 * B,), cols, io, cols_major=True)
    x = torch.empty(B, K, C, device=DEVICE, dtype=io)
    y = torch.empty(B, K, C, device=DEVICE, dtype=io)
    weight = (1.2 * torch.rand(C, W, device=DEVICE) - 0.6).to(io)
    offsets = torch.zeros(B, dtype=torch.int32, device=DEVICE)
    read_slot = torch.arange(B, dtype=torch.int32, device=DEVICE)
    write_slot = torch.arange(B, 2 * B, dtype=torch.int32, device=DEVICE)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        LAUNCH(kernel, batch=B, channels=C, x=x, y=y, weight=weight, state=pool,
               read_slot=read_slot, write_slot=write_slot, window_offset=offsets,
               stream=torch.cuda.current_stream())
    for replay in range(4):
        gen = generator(200 + replay)
        x.copy_(torch.randn(B, K, C, device=DEVICE, generator=gen).to(io))
        pool[read_slot.long()] = torch.randn(B, C, cols, device=DEVICE, generator=gen).to(io)
        offsets.copy_(torch.randint(0, K + 1, (B,), device=DEVICE, generator=gen,
                                    dtype=torch.int32))
        off = offsets.tolist()
        history = torch.stack([pool[int(s)][:, o:o + H] for s, o in zip(read_slot.tolist(), off)])
        want, z = reference(spec, x, weight, None, history)
        y.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        assert_close(y, want, tolerance(spec), f"replay {replay}: y", ("b", "t"))
        got = pool[write_slot.long()][:, :, :H + K]
        assert torch.equal(got, z.to(io)), f"replay {replay}: the window written"
        # the next replay reads where this one wrote: new slots, copied into the captured tensors
        reads = read_slot.clone()
        read_slot.copy_(write_slot)
        write_slot.copy_(reads)
    del graph


def check_errors_on_the_gpu(jit):
    spec = spec_of("intermediate", "strided")
    kernel = jit.kernel(spec)
    io = dtype_of(spec.io)
    p = make_problem(spec, H, seed=30)
    state = tiles((B,), H, io, cols_major=False)
    inter = tiles((B, K - 1), H, io, cols_major=False)
    y = torch.empty(B, K, C, device=DEVICE, dtype=io)
    arguments = dict(batch=B, channels=C, x=p["x"], y=y, weight=p["weight"], bias=p["bias"],
                     state=state, inter=inter)
    try:
        LAUNCH(kernel, **dict(arguments, x=p["x"].float()))
    except wyjit.InvalidArgumentError as e:
        assert "x has dtype f32, the variant needs bf16" in str(e), e
    else:
        raise AssertionError("a float32 x was accepted by a bf16 variant")
    try:
        LAUNCH(kernel, **dict(arguments, state=state.cpu()))
    except wyjit.InvalidArgumentError as e:
        assert "state is on cpu" in str(e), e
    else:
        raise AssertionError("a CPU state was accepted")
