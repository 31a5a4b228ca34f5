# SPDX-License-Identifier: Apache-2.0
"""wyjit.torch_ops without a GPU: every launch is an op whose schema marks exactly the tensors
the launch writes; torch.library.opcheck passes on CPU tensors with the launch stubbed; a
function calling every op compiles with fullgraph=True (no graph break) and equals eager, and
inductor hands the op the caller's own tensors (table pools too, which the launch writes through
pointers); on CUDA fake tensors the fake implementation raises the plain checks' errors, and on
real tensors a bad call raises the plain launch's error; kernels are loaded once per variant and
device. Then the GPU cases (gpu_torch_ops.py) dry-run here with the launches stubbed, and catch a
wrong op.

The stub writes every tensor the launch writes (WRITES, this file's own list), from its old value
and the contents of every other tensor argument, so results depend on the order and the inputs
of the calls, and opcheck sees a write the schema does not declare.

Skipped without torch (CPU torch is enough)."""

import contextlib
import inspect
import math
import os
import subprocess
import sys
import types

import pytest

torch = pytest.importorskip("torch", reason="wyjit.torch_ops needs torch (CPU is enough)")

import gpu_prepared  # noqa: E402
import gpu_torch_ops  # noqa: E402
import launch_cases  # noqa: E402
import wyjit  # noqa: E402
import wyjit.torch_ops as torch_ops  # noqa: E402
from fakes import FakeTensor  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensor as FakeTensorType  # noqa: E402

#: What each launch writes (include/wyjit/*.h): the schema must mark exactly these.
WRITES = {
    "gdn_verify": {"out", "state", "inter", "pools"},
    "conv1d_update": {"y", "state", "inter", "pools"},
    "gdn_replay_verify": {"out", "log", "state", "pools"},
    "gdn_replay_commit": {"cursor"},
    "gdn_replay_materialize": {"out", "out_pools"},
}
_OWN = {"variant", "pools", "out_pools"}  # the ops' arguments that the plain launches lack


def schema(name):
    return getattr(torch.ops.wyjit, name).default._schema


def emulate(name, arguments, bias=0.0):
    """The stub launch: each tensor WRITES names becomes half its old value plus a number made of
    the contents of the tensors read (`bias` added: a wrong kernel)."""
    writes = WRITES[name]
    read = [v for n, v in arguments.items() if isinstance(v, torch.Tensor) and n not in writes]
    seed = math.fmod(sum(float(t.double().nan_to_num().abs().sum()) for t in read), 1.0) + bias
    for n in writes:
        value = arguments.get(n)
        for w in value if isinstance(value, list) else [] if value is None else [value]:
            if w.dtype.is_floating_point:
                w.copy_(w.double().nan_to_num().mul(0.5).add(seed))
            else:
                w.copy_(w.long().add(int(seed * 1000)).remainder(1000))


@pytest.fixture
def stubbed(monkeypatch):
    """The ops' launch replaced by the stub (the rest of the op, its checks included, runs)."""
    monkeypatch.setattr(torch_ops, "_run", lambda name, spec, arguments: emulate(name, arguments))


def cpu_tensors(seed=0):
    gen = torch.Generator().manual_seed(seed)

    def make(shape, dtype):
        dtype = getattr(torch, dtype)
        if dtype.is_floating_point:
            return (0.1 * torch.randn(shape, generator=gen)).to(dtype)
        return torch.zeros(shape, dtype=dtype)

    return make


def op_call(case, make):
    """The case's op arguments on tensors from `make`, each stand-in stager's pool a tensor."""
    pools = {n: make((4, 16), "float32") for n, v in case.arguments.items()
             if isinstance(v, launch_cases.Stager)}
    return gpu_torch_ops.op_arguments(case, case.arguments, pools)


def cases(make):
    return {c.label: c for c in launch_cases.cases(make)}


# ---- registration -----------------------------------------------------------------------------


def test_every_launch_is_an_op():
    launches = {n[len("prepare_"):] for n in wyjit.__all__ if n.startswith("prepare_")}
    assert set(torch_ops.OPS) == launches == set(WRITES)
    for name in launches:
        assert getattr(torch.ops.wyjit, name).default is not None


@pytest.mark.parametrize("name", sorted(WRITES))
def test_the_schema_marks_exactly_what_the_launch_writes(name):
    s = schema(name)
    written = {a.name for a in s.arguments if a.alias_info is not None and a.alias_info.is_write}
    assert written == WRITES[name] == set(torch_ops.OPS[name])
    assert len(s.returns) == 0, f"{name} returns {s.returns}: the ops write caller-provided tensors"
    assert s.arguments[0].name == "variant" and str(s.arguments[0].type) == "str"


@pytest.mark.parametrize("name", sorted(WRITES))
def test_an_ops_arguments_are_its_plain_launchs(name):
    """Every argument but the variant and the pools goes to the plain launch by name; what the op
    leaves out of the plain launch's arguments is only what tensors carry (strides, counts)."""
    ours = {a.name for a in schema(name).arguments}
    plain = set(inspect.signature(getattr(wyjit, f"build_{name}_args")).parameters) - {"spec"}
    assert ours - _OWN <= plain, ours - _OWN - plain
    assert all(n.endswith(("_stride", "num_slots")) for n in plain - ours), plain - ours


@pytest.mark.parametrize("label", gpu_torch_ops.LABELS)
def test_opcheck_on_cpu_tensors_with_the_launch_stubbed(stubbed, label):
    case = cases(cpu_tensors())[label]
    op = getattr(torch.ops.wyjit, case.launch)
    torch.library.opcheck(op, (case.spec.name,), op_call(case, cpu_tensors()))


# ---- torch.compile ----------------------------------------------------------------------------


def _every_op(tensors):
    """One strided case of each launch (commit's one case), as one function of their tensors."""
    chosen = [c for c in tensors.values() if c.addressing in ("strided", "-")]
    calls = [(c.launch, c.spec.name, op_call(c, None)) for c in chosen]

    def step():
        for launch, variant, arguments in calls:
            getattr(torch.ops.wyjit, launch)(variant, **arguments)

    return step, [t for c in chosen for t in c.arguments.values() if isinstance(t, torch.Tensor)]


def test_a_function_calling_every_op_compiles_whole_and_equals_eager(stubbed):
    eager, eager_tensors = _every_op(cases(cpu_tensors(1)))
    step, tensors = _every_op(cases(cpu_tensors(1)))
    explained = torch._dynamo.explain(_every_op(cases(cpu_tensors(1)))[0])()
    assert explained.graph_break_count == 0 and explained.graph_count == 1, explained
    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    for _ in range(2):
        eager()
        compiled()
        for want, got in zip(eager_tensors, tensors):
            assert gpu_prepared._same_bits(got, want)


def _pointers(arguments):
    return {n: [x.data_ptr() for x in v] if isinstance(v, list) else v.data_ptr()
            for n, v in arguments.items() if isinstance(v, (list, torch.Tensor))}


def test_inductor_launches_on_the_callers_own_tensors(monkeypatch, stubbed):
    """No clone handed to a launch (the table pools above all: a launch writes them through the
    table's pointers, so a clone copied back would undo its writes)."""
    seen = []
    plain = torch_ops._plain

    def recording(name, family, arguments):
        if not any(isinstance(v, FakeTensorType) for v in arguments.values()):
                seen.append(_pointers(arguments))
        return plain(name, family, arguments)

    monkeypatch.setattr(torch_ops, "_plain", recording)
    chosen = [c for c in cases(cpu_tensors()).values() if c.launch == "gdn_verify"]
    calls = [(c.spec.name, op_call(c, cpu_tensors())) for c in chosen]

    def step():
        for variant, arguments in calls:
            torch.ops.wyjit.gdn_verify(variant, **arguments)

    torch.compile(step, fullgraph=True, backend="inductor")()
    want = [_pointers(arguments) for _, arguments in calls]
    assert seen[-len(calls):] == want
    assert any("pools" in w for w in want)


# ---- errors -----------------------------------------------------------------------------------


def _message(call):
    try:
        call()
    except wyjit.Error as e:
        return f"{type(e).__name__}: {e}"
    raise AssertionError("a bad call was accepted")


@contextlib.contextmanager
def fake_cuda():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        try:
            torch.empty(1, device="cuda")
        except (RuntimeError, AssertionError) as e:
            pytest.skip(f"this torch makes no fake CUDA tensors: {e}")
        yield


BAD = {  # (label, argument, what it becomes)
    "q in f16": ("gdn_verify strided", "q", lambda make: make((4, 2048), "float16")),
    "state of the wrong shape": ("gdn_verify slot", "state", lambda make: make((8, 32, 128, 64),
                                                                               "float32")),
    "a [batch, 1] cursor": ("gdn_replay_verify strided", "cursor",
                            lambda make: make((1, 1), "int32")),
    "accepted of the wrong dtype": ("gdn_replay_commit -", "accepted",
                                    lambda make: make((1,), "float32")),
    "conv x misshapen": ("conv1d_update slot", "x", lambda make: make((3, 8192), "bfloat16")),
}


@pytest.mark.parametrize("bad", list(BAD))
def test_the_fake_raises_the_plain_checks_error_on_cuda_fake_tensors(bad):
    label, name, value = BAD[bad]

    def fakes(shape, dtype):
        return FakeTensor(shape, dtype)

    plain_case = cases(fakes)[label]
    want = _message(lambda: getattr(wyjit, f"check_{plain_case.launch}")(
        plain_case.spec, **dict(plain_case.arguments, **{name: value(fakes)})))
    with fake_cuda():
        def make(shape, dtype):
            return torch.empty(shape, dtype=getattr(torch, dtype), device="cuda")

        case = cases(make)[label]
        op = getattr(torch.ops.wyjit, case.launch)
        op(case.spec.name, **op_call(case, make))  # the good call passes
        got = _message(lambda: op(case.spec.name, **dict(op_call(case, make),
                                                         **{name: value(make)})))
    assert got == want


def _refused(label, **changed):
    """The op's message and the plain launch's for the case on CPU tensors with `changed`."""
    case = cases(cpu_tensors())[label]
    arguments = dict(op_call(case, cpu_tensors()), **changed)
    variant = arguments.pop("variant", case.spec.name)
    kernel = types.SimpleNamespace(spec=wyjit.Spec.parse(variant), handle=0)
    plain = {n: v for n, v in arguments.items() if n not in _OWN}
    got = _message(lambda: getattr(torch.ops.wyjit, case.launch)(variant, **arguments))
    return got, _message(lambda: getattr(wyjit, case.launch)(kernel, **plain))


@pytest.mark.parametrize("label, changed, expected", [
    ("gdn_verify strided", {}, "q is on cpu: it must be a CUDA tensor"),
    ("conv1d_update strided", {"batch": 0}, "batch is 0, must be a positive int"),
    ("gdn_replay_materialize slot", {}, "on cpu: it must be a CUDA tensor"),
    ("gdn_verify strided", {"variant": "conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu"},
     "gdn_verify: conv1d_update.k4.io_bf16.w4.wt_bf16.window.slot.silu is a conv1d_update "
     "variant, not gdn_verify"),
])
def test_a_bad_call_raises_the_plain_launchs_error(label, changed, expected):
    got, want = _refused(label, **changed)
    assert got == want and expected in got, (got, want)


def test_an_unknown_variant_raises_the_specs_error():
    case = cases(cpu_tensors())["gdn_verify strided"]
    bad = "gdn_verify.k99.io_bf16"
    want = _message(lambda: wyjit.Spec.parse(bad))
    got = _message(lambda: torch.ops.wyjit.gdn_verify(bad, **op_call(case, cpu_tensors())))
    assert got == want and got.startswith("InvalidSpecError")


def test_pools_belong_to_table_addressing():
    case = cases(cpu_tensors())["gdn_verify slot"]
    arguments = dict(op_call(case, cpu_tensors()), pools=[torch.zeros(1)])
    got = _message(lambda: torch.ops.wyjit.gdn_verify(case.spec.name, **arguments))
    assert got == (f"InvalidArgumentError: pools is given but {case.spec.name} does not use it "
                   "(slot addressing: pools are table addressing's)")


# ---- kernels ----------------------------------------------------------------------------------


class CountingJit:
    def __init__(self):
        self.loaded = []

    def kernel(self, spec):
        self.loaded.append(spec.name)
        return types.SimpleNamespace(spec=spec)


def test_kernels_are_loaded_once_per_variant_and_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    jit = CountingJit()
    torch_ops.use_jit(jit)
    try:
        name = "gdn_verify.k4.io_bf16.st_f32.strided.vk.d128"
        first = torch_ops.kernel(name)
        assert torch_ops.kernel(name, 0) is first
        assert torch_ops.kernel(wyjit.Spec.parse(name), "cuda:0") is first
        assert torch_ops.kernel(name, torch.device("cuda", 1)) is not first
        assert jit.loaded == [name, name]
        with pytest.raises(wyjit.InvalidArgumentError, match="device is cpu"):
            torch_ops.kernel(name, "cpu")
        torch_ops.use_jit(jit)  # forgets what was loaded
        torch_ops.kernel(name)
        assert len(jit.loaded) == 3
    finally:
        torch_ops.use_jit(None)


def test_import_wyjit_imports_neither_torch_nor_the_ops():
    code = "import sys, wyjit; print('torch' in sys.modules, 'wyjit.torch_ops' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)
    assert done.stdout.split() == ["False", "False"], done.stdout + done.stderr


# ---- the GPU cases, dry-run ---------------------------------------------------------------------


@pytest.fixture
def dry_run(monkeypatch):
    """gpu_torch_ops on CPU tensors: launches stubbed (ops and plain launches alike), CUDA
    graphs replaced by calling the step, torch.compile on aot_eager."""
    monkeypatch.setattr(gpu_torch_ops, "DEVICE", "cpu")
    monkeypatch.setattr(gpu_torch_ops, "BACKEND", "aot_eager")
    monkeypatch.setattr(gpu_prepared, "DEVICE", "cpu")
    monkeypatch.setattr(gpu_torch_ops, "capture", lambda run, t: run)
    monkeypatch.setattr(torch_ops, "_run", lambda name, spec, arguments: emulate(name, arguments))
    for name in WRITES:
        monkeypatch.setattr(wyjit, name, lambda kernel, *, stream=None, _name=name, **arguments:
                            emulate(_name, arguments))

    class Jit:
        def kernel(self, spec):
            return types.SimpleNamespace(spec=wyjit.Spec.parse(spec) if isinstance(spec, str)
                                         else spec)

    return Jit()


@pytest.mark.parametrize("label", [n for n in gpu_torch_ops.LABELS if "table" not in n])
def test_dry_run_an_op_equals_the_plain_launch(dry_run, label):
    gpu_torch_ops.check_op_equals_plain(dry_run, label)


@pytest.mark.parametrize("problem", list(gpu_torch_ops.PROBLEMS))
def test_dry_run_a_compiled_step_equals_eager(dry_run, problem):
    gpu_torch_ops.check_compiled_step_equals_eager(dry_run, problem)


@pytest.mark.parametrize("problem", list(gpu_torch_ops.PROBLEMS))
def test_dry_run_a_graphed_step_equals_eager(dry_run, problem):
    gpu_torch_ops.check_graphed_step_equals_eager(dry_run, problem)


def test_dry_run_catches_a_wrong_op(dry_run, monkeypatch):
    monkeypatch.setattr(torch_ops, "_run",
                        lambda name, spec, arguments: emulate(name, arguments, bias=1e-3))
    with pytest.raises(AssertionError, match="differs"):
        gpu_torch_ops.check_op_equals_plain(dry_run, "gdn_verify slot")
    with pytest.raises(AssertionError, match="differs from eager"):
        gpu_torch_ops._check_runs(dry_run, "gdn_replay", {
            "wrong": lambda step, t: lambda: (step(t), t["cursor"].add_(1))})


# ---- docs/embedding.md ------------------------------------------------------------------------


def test_the_docs_example_passes_every_check_on_cuda_fake_tensors(repo_root, monkeypatch):
    """docs/embedding.md's example of the ops, run whole on CUDA fake tensors: its calls pass
    the plain checks (the fakes run them); torch.compile and the CUDA graph are stood in for."""
    text = (repo_root / "docs" / "embedding.md").read_text()
    section = text.split("### torch.compile and CUDA graphs: wyjit's custom ops", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    calls = []

    def compile_(fn, **options):
        assert options == {"fullgraph": True}
        return lambda *args: calls.append(fn(*args))

    monkeypatch.setattr(torch, "compile", compile_)
    monkeypatch.setattr(torch.cuda, "CUDAGraph", lambda: types.SimpleNamespace(replay=lambda: None))
    monkeypatch.setattr(torch.cuda, "graph", lambda graph: contextlib.nullcontext())
    with fake_cuda():
        exec(compile(code, "docs/embedding.md", "exec"), {})
    assert len(calls) == 2
