# SPDX-License-Identifier: Apache-2.0
"""The manager through Python: precompile into a temporary cache, counters, cache roots, no-JIT,
and the errors a machine without a GPU reports."""

import pytest

import wyjit

SMALL = ["gdn_verify.k1.io_f32.st_f32.strided.vk.d64", "gdn_verify.k2.io_bf16.st_f32.strided.kv.d64"]


def test_precompile_writes_cubins_and_counts_compiles(tmp_path):
    with wyjit.Jit(tmp_path) as jit:
        assert jit.cache_dir == str(tmp_path)
        jit.precompile(SMALL, target="sm_90", jobs=2)
        counters = jit.counters()
        assert counters["compiles"] == 2
        assert counters["compile_ms_total"] > 0
        entries = {".".join(p.name.split(".")[:-2]) for p in (tmp_path / "sm_90").glob("*.cubin")}
        assert entries == set(SMALL)
        jit.precompile(SMALL, target="sm_90")  # already in memory
        assert jit.counters()["compiles"] == 2
    with wyjit.Jit(tmp_path) as again:  # a new manager reads them from disk
        again.precompile(SMALL, target="sm_90")
        counters = again.counters()
        assert counters["compiles"] == 0
        assert counters["disk_hits"] == 2


def test_precompile_for_ptx(tmp_path):
    with wyjit.Jit(tmp_path) as jit:
        jit.precompile([wyjit.Spec.make("gdn_verify", k=1, io="f32", dk=64, dv=64)],
                       target="compute_90")
        assert list((tmp_path / "compute_90").glob("*.ptx"))


def test_precompile_errors_name_the_culprit(tmp_path):
    with wyjit.Jit(tmp_path) as jit:
        with pytest.raises(wyjit.InvalidArgumentError, match="sm_9x"):
            jit.precompile(SMALL, target="sm_9x")
        with pytest.raises(wyjit.InvalidSpecError, match=r"names\[1\].*dk is 96"):
            jit.precompile([wyjit.Spec.make("gdn_verify"),
                            "gdn_verify.k4.io_bf16.st_f32.strided.vk.d96"], target="sm_90")
        with pytest.raises(wyjit.InvalidArgumentError, match=r"specs\[0\] is 4: pass a wyjit.Spec"):
            jit.precompile([4], target="sm_90")
        assert jit.counters()["compiles"] == 0  # nothing compiled when a spec is bad


def test_memory_only_manager_writes_nothing(tmp_path):
    with wyjit.Jit(tmp_path, disk_cache=False) as jit:
        assert jit.cache_dir == ""
        jit.precompile(SMALL[:1])
        assert jit.counters()["compiles"] == 1
    assert not any(tmp_path.iterdir())


def test_no_jit_turns_a_miss_into_an_error_and_reads_read_only_roots(tmp_path):
    shipped = tmp_path / "shipped"
    with wyjit.Jit(shipped) as builder:
        builder.precompile(SMALL[:1])
    empty = tmp_path / "writable"
    with wyjit.Jit(empty, no_jit=True) as jit:
        with pytest.raises(wyjit.NoJitMissError, match=SMALL[0].replace(".", r"\.")):
            jit.precompile(SMALL[:1])
        assert jit.counters()["compiles"] == 0
    with wyjit.Jit(empty, read_only_dirs=[shipped], no_jit=True) as jit:
        jit.precompile(SMALL[:1])  # found in the read-only root
        counters = jit.counters()
        assert counters["compiles"] == 0
        assert counters["ro_disk_hits"] == 1


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(wyjit.InvalidArgumentError, match="log_level is 'loud'"):
        wyjit.Jit(tmp_path, log_level="loud")
    with pytest.raises(wyjit.InvalidArgumentError, match=r"read_only_dirs\[0\] is NULL or empty"):
        wyjit.Jit(tmp_path, read_only_dirs=[""])


def test_a_closed_manager_is_an_error(tmp_path):
    jit = wyjit.Jit(tmp_path)
    jit.close()
    with pytest.raises(wyjit.InvalidArgumentError, match="closed"):
        jit.counters()


def test_set_log_level():
    wyjit.set_log_level("warn")
    with pytest.raises(wyjit.InvalidArgumentError, match="log_level is 9"):
        wyjit.set_log_level(9)


def test_device_count_and_the_reason_for_none():
    count = wyjit.device_count()
    assert count >= 0
    if count == 0:
        assert wyjit.device_unavailable_reason() != ""
    else:
        assert wyjit.device_unavailable_reason() == ""


@pytest.mark.skipif(wyjit.device_count() > 0, reason="this machine has a GPU")
def test_kernel_without_a_gpu_is_a_driver_error(tmp_path):
    with wyjit.Jit(tmp_path) as jit:
        with pytest.raises(wyjit.DriverError, match="driver|device|context"):
            jit.kernel(SMALL[0])
