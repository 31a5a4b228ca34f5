# SPDX-License-Identifier: Apache-2.0
"""gdn_replay's argument checks on the CPU, for its three launches (verify, commit,
materialize): tensor stand-ins and raw pointers, checked in Python and then by the library's
guards (wyjit.check_gdn_replay_* run both without launching)."""

import pytest

import wyjit
from fakes import FakeTensor

B, HK, HV = 3, 2, 4
SPEC = wyjit.Spec.make("gdn_replay", k=4, log=16, io="bf16", dk=64, dv=64)
LOG = 16 * (HK * 64 + HV * 64 + HV)  # floats of one log tile
TILE = HV * 64 * 64


def refused(match):
    return pytest.raises(wyjit.InvalidArgumentError, match=match)


class FakeStager:
    """A TableStager's stand-in: what a launch reads of it."""

    def __init__(self, writes, max_batch, tables=0x7F6000000000):
        self.writes, self.max_batch = writes, max_batch
        self.tables, self.slab_stride = tables, max_batch


def tokens(spec=SPEC):
    K, dk, dv = spec.k, spec.dk, spec.dv
    bf = "bfloat16"
    return dict(
        batch=B, num_k_heads=HK, num_v_heads=HV,
        q=FakeTensor((B, K, HK, dk), bf), k=FakeTensor((B, K, HK, dk), bf),
        v=FakeTensor((B * K, HV * dv), bf), out=FakeTensor((B * K, HV * dv), bf),
        g=FakeTensor((B * K, HV)), beta=FakeTensor((B * K, HV)),
    )


def strided(spec=SPEC):
    return dict(tokens(spec), state=FakeTensor((B, HV, 64, 64)), log=FakeTensor((B, LOG)),
                cursor=FakeTensor((B, 2), "int32"))


def test_the_log_tile_is_l_entries_of_k_u_and_g():
    assert wyjit.gdn_replay_log_floats(SPEC, HK, HV) == LOG
    assert wyjit.gdn_replay_log_floats(SPEC.name, 16, 32) == 16 * (16 * 64 + 32 * 64 + 32)
    with refused("gdn_verify.* is a gdn_verify variant, not gdn_replay"):
        wyjit.gdn_replay_log_floats("gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", HK, HV)


def test_a_dense_strided_verify_passes_and_gives_dense_strides():
    args = strided()
    wyjit.check_gdn_replay_verify(SPEC, **args)
    c = wyjit.build_gdn_replay_verify_args(SPEC, **args)
    assert (c.batch, c.num_k_heads, c.num_v_heads, c.k, c.dk, c.dv) == (B, HK, HV, 4, 64, 64)
    assert c.states.state_seq_stride == TILE and c.log.state_seq_stride == LOG
    assert c.cursor == args["cursor"].data_ptr() and c.cursor_stride == 2
    assert c.log.state == args["log"].data_ptr() and c.states.inter is None


def test_the_verify_form_is_automatic_unless_a_path_is_named():
    assert wyjit.build_gdn_replay_verify_args(SPEC, **strided()).path == 0
    for name, code in (("auto", 0), ("in_turn", 1), ("wy", 2)):
        wyjit.check_gdn_replay_verify(SPEC, **strided(), path=name)
        assert wyjit.build_gdn_replay_verify_args(SPEC, **strided(), path=name).path == code
    with refused("path is 'fast', allowed: auto, in_turn, wy"):
        wyjit.build_gdn_replay_verify_args(SPEC, **strided(), path="fast")


def test_a_cursor_row_may_be_wider_than_base_and_len():
    args = dict(strided(), cursor=FakeTensor((B, 4), "int32"))
    assert wyjit.build_gdn_replay_verify_args(SPEC, **args).cursor_stride == 4
    args["cursor"] = FakeTensor((B, 2), "int32", strides=(8, 1))  # a view of a wider array
    assert wyjit.build_gdn_replay_verify_args(SPEC, **args).cursor_stride == 8


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(log=None), "log is required by gdn_replay"),
        (dict(log=FakeTensor((B, LOG), "bfloat16")), "log has dtype bf16, the variant needs f32"),
        (dict(log=FakeTensor((B, LOG - 4))), rf"log \(shape \[3, {LOG - 4}\].*{LOG}"),
        (dict(state=FakeTensor((B, HV, 64, 64), "bfloat16")),
         "state has dtype bf16, the variant needs f32"),
        (dict(cursor=None), r"cursor is required: int32 \[batch, 2\]"),
        (dict(cursor=FakeTensor((B, 2), "int64")), "cursor has dtype int64"),
        (dict(cursor=FakeTensor((B, 1), "int32")), r"cursor has shape \[3, 1\], expected \[3, >= 2\]"),
        (dict(cursor=FakeTensor((B + 1, 2), "int32")), r"cursor has shape \[4, 2\]"),
        (dict(log_tables=FakeStager(1, B)), r"log_tables is given but .* \(strided addressing\)"),
        (dict(log_slot=FakeTensor((B,), "int32")), r"log_slot is given but .* \(strided addressing\)"),
        (dict(log=FakeTensor((B, LOG), device="cuda:1")), "different devices"),
    ],
)
def test_verify_refusals_name_the_argument(change, message):
    args = strided()
    args.update(change)
    with refused(message):
        wyjit.check_gdn_replay_verify(SPEC, **args)


def test_the_library_checks_what_python_cannot_see():
    args = strided()
    args.update(log=0x7F0000000004, log_seq_stride=LOG)  # a raw pointer, 4-byte aligned
    with refused(r"args\.log\.state .*16"):
        wyjit.check_gdn_replay_verify(SPEC, **args)
    args.update(log=0x7F0000000000, cursor=0x7F1000000000, cursor_stride=1)
    with refused(r"args\.cursor_stride is 1, must be >= 2"):
        wyjit.check_gdn_replay_verify(SPEC, **args)
    args.update(cursor_stride=None)
    with refused("cursor is a raw pointer: pass cursor_stride"):
        wyjit.check_gdn_replay_verify(SPEC, **args)


def test_table_addressing_takes_a_one_tile_stager_for_each_reference():
    spec = SPEC.replace(addressing="table")
    args = dict(tokens(spec), tables=FakeStager(1, B), log_tables=FakeStager(1, B, 0x7F6100000000),
                cursor=FakeTensor((B, 2), "int32"))
    wyjit.check_gdn_replay_verify(spec, **args)
    c = wyjit.build_gdn_replay_verify_args(spec, **args)
    assert (c.states.tables, c.log.tables) == (0x7F6000000000, 0x7F6100000000)
    with refused(r"log_tables is a TableStager for 4 writes a sequence, .* writes 1: make it "
                 r"with TableStager\(1, max_batch\)"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log_tables=FakeStager(4, B)))
    with refused(r"batch is 3, the TableStager holds max_batch=2 \(log_tables\)"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log_tables=FakeStager(1, 2)))
    with refused(r"log_tables is required by .* \(a TableStager\)"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log_tables=None))
    with refused(r"log is given but .* \(table addressing\)"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log=FakeTensor((B, LOG))))


def test_slot_addressing_reads_the_log_from_its_own_pool():
    spec = SPEC.replace(addressing="slot")
    args = dict(tokens(spec), state=FakeTensor((8, HV, 64, 64)), read_slot=FakeTensor((B,), "int32"),
                write_slot=FakeTensor((B,), "int32"), log=FakeTensor((5, LOG)),
                log_slot=FakeTensor((B,), "int32"), cursor=FakeTensor((B, 2), "int32"))
    wyjit.check_gdn_replay_verify(spec, **args)
    c = wyjit.build_gdn_replay_verify_args(spec, **args)
    assert (c.states.num_slots, c.log.num_slots, c.log.slot_stride) == (8, 5, LOG)
    assert c.log.read_slot == args["log_slot"].data_ptr() and c.log.write_slot is None
    with refused(r"log_slot is required by gdn_replay"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log_slot=None))
    with refused(r"log_num_slots is 4 but log has 5 slots"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, log_num_slots=4))
    with refused("write_slot is required"):
        wyjit.check_gdn_replay_verify(spec, **dict(args, write_slot=None))


def test_commit_checks_cursor_and_accepted():
    cursor, accepted = FakeTensor((B, 2), "int32"), FakeTensor((B,), "int32")
    wyjit.check_gdn_replay_commit(SPEC, batch=B, cursor=cursor, accepted=accepted)
    c = wyjit.build_gdn_replay_commit_args(SPEC, batch=B, cursor=cursor, accepted=accepted)
    assert (c.batch, c.k, c.cursor_stride, c.accepted) == (B, 4, 2, accepted.data_ptr())
    with refused(r"accepted is required: int32 \[batch\]"):
        wyjit.check_gdn_replay_commit(SPEC, batch=B, cursor=cursor, accepted=None)
    with refused("accepted has dtype int64"):
        wyjit.check_gdn_replay_commit(SPEC, batch=B, cursor=cursor,
                                      accepted=FakeTensor((B,), "int64"))
    with refused(r"accepted .*expected 3 rows of 1"):
        wyjit.check_gdn_replay_commit(SPEC, batch=B, cursor=cursor,
                                      accepted=FakeTensor((B + 1,), "int32"))
    with refused("batch is 0, must be a positive int"):
        wyjit.check_gdn_replay_commit(SPEC, batch=0, cursor=cursor, accepted=accepted)
    with refused(r"args\.accepted .*null"):
        wyjit.check_gdn_replay_commit(SPEC, batch=B, cursor=cursor, accepted=0)


def test_materialize_writes_into_its_own_references():
    args = dict(batch=B, num_k_heads=HK, num_v_heads=HV, state=FakeTensor((B, HV, 64, 64)),
                log=FakeTensor((B, LOG)), cursor=FakeTensor((B, 2), "int32"),
                out=FakeTensor((B, HV, 64, 64)))
    wyjit.check_gdn_replay_materialize(SPEC, **args)
    c = wyjit.build_gdn_replay_materialize_args(SPEC, **args)
    assert c.out.state == args["out"].data_ptr() and c.out.state_seq_stride == TILE
    with refused("out is required by gdn_replay"):
        wyjit.check_gdn_replay_materialize(SPEC, **dict(args, out=None))
    with refused("out has dtype bf16, the variant needs f32"):
        wyjit.check_gdn_replay_materialize(SPEC, **dict(args, out=FakeTensor((B, HV, 64, 64),
                                                                             "bfloat16")))
    slot = SPEC.replace(addressing="slot")
    sargs = dict(batch=B, num_k_heads=HK, num_v_heads=HV, state=FakeTensor((6, HV, 64, 64)),
                 read_slot=FakeTensor((B,), "int32"), log=FakeTensor((6, LOG)),
                 log_slot=FakeTensor((B,), "int32"), cursor=FakeTensor((B, 2), "int32"),
                 out=FakeTensor((7, HV, 64, 64)), out_slot=FakeTensor((B,), "int32"))
    wyjit.check_gdn_replay_materialize(slot, **sargs)
    c = wyjit.build_gdn_replay_materialize_args(slot, **sargs)
    assert (c.out.num_slots, c.out.read_slot, c.out.write_slot_stride) == (7, None, 1)
    with refused("out_slot is required"):
        wyjit.check_gdn_replay_materialize(slot, **dict(sargs, out_slot=None))
    table = SPEC.replace(addressing="table")
    targs = dict(batch=B, num_k_heads=HK, num_v_heads=HV, tables=FakeStager(1, B),
                 log_tables=FakeStager(1, B), cursor=FakeTensor((B, 2), "int32"),
                 out_tables=FakeStager(1, B))
    wyjit.check_gdn_replay_materialize(table, **targs)
    with refused(r"out_tables is required by .* \(a TableStager\)"):
        wyjit.check_gdn_replay_materialize(table, **dict(targs, out_tables=None))


def test_a_launch_of_another_family_is_refused():
    with refused("gdn_replay_verify: gdn_verify.* is a gdn_verify variant, not gdn_replay"):
        wyjit.check_gdn_replay_verify("gdn_verify.k4.io_bf16.st_f32.strided.vk.d64", **strided())
