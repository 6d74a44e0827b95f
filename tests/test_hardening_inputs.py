"""Hardening (issue 12): every read of a kernel is bounded, uploads do not wrap, a live
column reads back clamped to its capacity. References are NumPy or worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, fieldc, ops
from procgen_nb.columns import Column, LiveCount
from procgen_nb.errors import BindingError, UploadError


def K(name):
    return asset.resolve(f"procgen/{name}", "computeShader")


def col(values, dtype, device="cpu"):
    return Column(wp.array(np.asarray(values), dtype=dtype, device=device))


def word(n, device="cpu"):
    return Column(wp.array([n], dtype=wp.uint32, device=device))


def short_inputs(device):
    """Four-element inputs for each kernel of the reproducers (binding -> Column)."""
    i4 = col(np.arange(4), wp.int32, device)
    f4 = col(np.arange(4), wp.float32, device)
    p4 = col(np.zeros((4, 2)), wp.vec2f, device)
    return {
        "gather": ({"TYPE": "f32"}, {"src": f4, "idx": i4}, "idx", {}),
        "compact": (None, {"flags": i4}, "flags", {}),
        "scan": ({"TYPE": "f32"}, {"src": f4}, "src", {}),
        "scatter": ({"TYPE": "f32"}, {"idx": i4, "src": f4, "dst": f4}, "idx", {}),
        "jump": (None, {"parent": i4, "value": i4, "span": i4}, "parent", {}),
        "inside": (None, {"points": p4}, "points", {"center": (0, 0), "radius": 1.0}),
    }


CASES = ["gather", "compact", "scan", "scatter", "jump", "inside"]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("n", [50_000_000, 50_000, 5])
def test_an_input_shorter_than_the_domain_is_refused_before_the_launch(device, name, n):
    spec, bind, first, uniforms = short_inputs(device)[name]
    before = pg.traffic().launches
    with pytest.raises(BindingError) as info:
        ops.device.kernel(kernel=K(name), specialize=spec, bind=bind, domain=n, uniforms=uniforms)
    assert str(info.value) == (
        f"procgen/{name}: binding {first!r}: expected a Column of at least {n} elements "
        f"(the domain of {n}), got one of 4"
    )
    assert pg.traffic().launches == before  # refused before anything ran


@pytest.mark.parametrize("name", CASES)
def test_a_live_count_is_checked_by_its_capacity(device, name):
    spec, bind, first, uniforms = short_inputs(device)[name]
    dom = ops.device.bound(value=word(2, device), capacity=9)
    with pytest.raises(BindingError) as info:
        ops.device.kernel(kernel=K(name), specialize=spec, bind=bind, domain=dom, uniforms=uniforms)
    assert str(info.value) == (
        f"procgen/{name}: binding {first!r}: expected a Column of at least 9 elements "
        "(the capacity 9 of the live-count domain), got one of 4"
    )


def test_a_capacity_that_fits_runs_and_a_count_past_it_is_clamped(device):
    src = col([10.0, 11.0, 12.0, 13.0], wp.float32, device)
    idx = col([3, 2, 1, 0], wp.int32, device)
    # the count word states 1000, the capacity 4: the dispatch reads 4 slots at most
    dom = ops.device.bound(value=word(1000, device), capacity=4)
    out = ops.device.kernel(kernel=K("gather"), bind={"src": src, "idx": idx}, domain=dom)
    assert out["columns"]["dst"].data.numpy().tolist() == [13.0, 12.0, 11.0, 10.0]


def test_a_bound_output_shorter_than_the_domain_is_refused(device):
    f4 = col(np.arange(4), wp.float32, device)
    i8 = col(np.arange(8), wp.int32, device)
    with pytest.raises(BindingError) as info:
        ops.device.kernel(kernel=K("gather"), bind={"src": f4, "idx": i8, "dst": f4}, domain=8)
    assert str(info.value) == (
        "procgen/gather: binding 'dst': expected a Column of at least 8 elements "
        "(the domain of 8), got one of 4"
    )


def test_a_count_word_of_no_elements_is_refused(device):
    empty = col(np.zeros(0), wp.uint32, device)
    with pytest.raises(BindingError) as info:
        ops.device.kernel(
            kernel=K("reduce"),
            specialize={"COUNT": "device"},
            bind={
                "src": col([1.0], wp.float32, device),
                "starts": col([0], wp.int32, device),
                "src_count": empty,
            },
            domain={"count": word(1, device), "capacity": 1},
        )
    assert str(info.value) == (
        "procgen/reduce: binding 'src_count': expected a Column of at least 1 elements "
        "(the binding's length 1), got one of 0"
    )


def test_a_domain_past_32_bits_is_refused():
    with pytest.raises(
        BindingError,
        match=r"^procgen/compact: domain: expected at most "
        r"2147483647 slots, got 4294967296$",
    ):
        ops.device.kernel(kernel=K("compact"), bind={"flags": col([1], wp.int32)}, domain=2**32)


# -- index-like inputs: every access is bounded on the device ----------------------------


def _mix(k: int) -> int:
    m = 0xFFFFFFFF
    h = k ^ (k >> 16)
    h = (h * 0x7FEB352D) & m
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & m
    return h ^ (h >> 16)


def _hook_reference(keys, slots):
    """The hook stage run slot by slot in Python (the CPU's order), MATCH=key."""
    slots = list(slots)
    t, n = len(slots), len(keys)
    parent, hooked, full = [0] * n, 0, 0
    for i, key in enumerate(keys):
        done = False
        h = _mix(int(key)) % t if t else 0
        for probe in range(t):
            s = (h + probe) % t
            cur = slots[s]
            if cur == -1:
                slots[s] = i
                parent[i], done = i, True
                break
            if 0 <= cur < n and keys[cur] == key:
                parent[i], done = cur, True
                hooked += 1
                break
        if not done:
            parent[i] = i
            full += 1
    return parent, slots, hooked, full


@pytest.mark.parametrize("fill", [2_000_000_000, -7, 5])
def test_hash_hook_passes_over_slot_words_that_name_no_element(fill):
    keys = np.array([4, 9, 4, 4, 9, 1], np.uint32)
    rng = np.random.default_rng(1)
    slots = np.full(16, -1, np.int32)
    slots[rng.choice(16, 10, replace=False)] = fill  # foreign words in a bound table
    out = ops.device.kernel(
        kernel=K("hash_hook"),
        specialize={"STAGE": "hook", "MATCH": "key"},
        bind={"keys": col(keys, wp.uint32), "slots": col(slots, wp.int32)},
        domain=len(keys),
    )["columns"]
    parent, table, hooked, full = _hook_reference(keys.tolist(), slots.tolist())
    assert out["parent"].data.numpy().tolist() == parent
    assert out["slots"].data.numpy().tolist() == table
    assert int(out["hooked"].data.numpy()[0]) == hooked
    assert int(out["full"].data.numpy()[0]) == full


def test_hash_hook_over_a_table_of_foreign_words_counts_every_element_in_full():
    keys = np.array([1, 2, 1], np.uint32)
    out = ops.device.kernel(
        kernel=K("hash_hook"),
        specialize={"STAGE": "hook", "MATCH": "key"},
        bind={"keys": col(keys, wp.uint32), "slots": col(np.full(8, 2_000_000_000), wp.int32)},
        domain=3,
    )["columns"]
    assert out["parent"].data.numpy().tolist() == [0, 1, 2]
    assert int(out["full"].data.numpy()[0]) == 3 and int(out["hooked"].data.numpy()[0]) == 0


def _walk(u, pos, steps=2, dt=0.5, cols=None):
    return ops.device.kernel(
        kernel=K("walk"),
        bind={
            "pos": col(pos, wp.vec2f),
            "u": col(np.asarray(u, np.float32), wp.float32),
            "cols": cols or {},
        },
        domain=len(pos),
        uniforms={"dt": dt, "steps": steps},
    )["columns"]


def test_walk_runs_a_malformed_program_without_reading_past_u():
    # u[0] = 1e9 steps' worth of program in a five-word u: the length is clamped to u's,
    # (0, 1) pushes 1, the words past u read 0 (push 0): the step field is (1, 1)
    pos = np.array([[0.0, 0.0], [2.0, -1.0]], np.float32)
    out = _walk([1e9, 0, 0, 0, 1], pos, steps=2, dt=0.5)
    np.testing.assert_allclose(out["out"].data.numpy(), pos + 1.0)
    assert out["taken"].data.numpy().tolist() == [2, 2]


@pytest.mark.parametrize(
    "u, want",
    [
        ([float("nan"), 0, 0], [0.0, 0.0]),  # a NaN length runs nothing: the field is 0
        ([-5, 0, 0, 0, 3], [0.0, 0.0]),  # a negative length runs nothing
        ([2, 0, 0, 13, 0, 0, 7], [0.0, 0.0]),  # div pops an empty stack: 0/0 -> then push 7
        ([1, 0, 0, 38, 1e9], [0.0, 0.0]),  # lane 1e9 of an empty stack: lane 3 of 0
        ([1, 0, 0, 2, 8 * 1_000_000 + 2], [0.0, 0.0]),  # a column row past cols reads 0
        ([1, 0, 0, 50, 1e9], [0.0, 0.0]),  # a vector of 1e9 lanes: 4 lanes of zeros
        ([], [0.0, 0.0]),  # an empty u
    ],
)
def test_walk_malformed_programs_read_zero(u, want):
    out = _walk(u, np.zeros((1, 2), np.float32), steps=1, dt=1.0)
    got = out["out"].data.numpy()[0]
    if u[:1] == [2]:
        # 13 on an empty stack: 0/0 is NaN in lane 0; the push of 7 lands above it
        assert np.isnan(got).all()
    else:
        np.testing.assert_array_equal(got, want)


def test_walk_stack_overflow_drops_the_pushes_past_sixteen():
    # 20 pushes of 1, 2, ... 20 then 19 adds: the stack keeps 1..16, and the adds fold them
    prog = [[0, float(k)] for k in range(1, 21)] + [[10, 0]] * 19
    words = [float(len(prog)), 0, 0] + [w for p in prog for w in p]
    out = _walk(words, np.zeros((1, 2), np.float32), steps=1, dt=1.0)
    # the adds fold 1..16 into 136; the extra adds find one value and add a popped 0
    assert out["out"].data.numpy()[0].tolist() == [136.0, 136.0]


# -- uploads ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, message",
    [
        (
            np.array([2**40, -(2**40), 2**31], np.int64),
            "values['v']: expected Int numbers in [-2147483648, 2147483647] (32-bit words), "
            "got 1099511627776 at index 0 (a int64 array)",
        ),
        (
            np.array([0, 5, 2**31], np.int64),
            "values['v']: expected Int numbers in [-2147483648, 2147483647] (32-bit words), "
            "got 2147483648 at index 2 (a int64 array)",
        ),
        (
            np.array([1, 2**32], np.uint64),
            "values['v']: expected UInt numbers in [0, 4294967295] (32-bit words), "
            "got 4294967296 at index 1 (a uint64 array)",
        ),
        (
            {"type": "Int", "values": [1, -(2**31) - 1]},
            "values['v'].values: expected Int numbers in [-2147483648, 2147483647] "
            "(32-bit words), got -2147483649 at index 1",
        ),
        (
            {"type": "UInt", "values": [3, -1]},
            "values['v'].values: expected UInt numbers in [0, 4294967295] (32-bit words), "
            "got -1 at index 1",
        ),
    ],
)
def test_integer_uploads_outside_32_bits_are_refused(value, message):
    with pytest.raises(UploadError) as info:
        ops.transfer.upload(values={"v": value})
    assert str(info.value) == message


def test_integer_uploads_inside_32_bits_keep_their_values(device):
    vals = np.array([-(2**31), -1, 0, 2**31 - 1], np.int64)
    got = ops.transfer.upload(values={"v": vals}, device=device)["columns"]["v"]
    assert got.type == "Int" and got.numpy().tolist() == vals.tolist()
    u = np.array([0, 2**32 - 1], np.uint64)
    got = ops.transfer.upload(values={"v": u}, device=device)["columns"]["v"]
    assert got.type == "UInt" and got.numpy().tolist() == u.tolist()


def test_column_from_numpy_refuses_values_a_word_cannot_hold():
    from procgen_nb.columns import column_from_numpy

    with pytest.raises(
        UploadError,
        match=r"^column of type Int: expected numbers in "
        r"\[-2147483648, 2147483647\] \(32-bit words\), got nan at index 1$",
    ):
        column_from_numpy(np.array([1.0, np.nan]), "Int", "cpu")
    with pytest.raises(UploadError, match=r"got 4294967296 at index 0$"):
        column_from_numpy(np.array([2**32], np.int64), "UInt", "cpu")


def test_cast_by_value_saturates_instead_of_wrapping(device):
    # a Float column meeting an i32 binding (compact's flags) is read by value: NaN is 0,
    # out-of-range values saturate; compact keeps the non-zero ones
    vals = np.array([np.nan, 3e9, -3e9, 0.4, -0.4, 2.0], np.float32)
    flags = Column(wp.array(vals, dtype=wp.float32, device=device))
    out = ops.device.kernel(kernel=K("compact"), bind={"flags": flags}, domain=6)["columns"]
    want = [i for i, v in enumerate([0, 2**31 - 1, -(2**31), 0, 0, 2]) if v != 0]
    assert out["indices"].numpy(live=True).tolist() == want
    from procgen_nb import _cast
    from procgen_nb.launch import default_context

    ctx = default_context(device)
    src = wp.array(vals, dtype=wp.float32, device=device)
    assert _cast.cast(ctx, src, "f32", "i32").numpy().tolist() == [0, 2**31 - 1, -(2**31), 0, 0, 2]
    assert _cast.cast(ctx, src, "f32", "u32").numpy().tolist() == [0, 3_000_000_000, 0, 0, 0, 2]
    big = wp.array(np.array([5, 3_000_000_000], np.uint32), dtype=wp.uint32, device=device)
    assert _cast.cast(ctx, big, "u32", "i32").numpy().tolist() == [5, 2**31 - 1]
    neg = wp.array(np.array([-5, 7], np.int32), dtype=wp.int32, device=device)
    assert _cast.cast(ctx, neg, "i32", "u32").numpy().tolist() == [0, 7]


# -- readback of an overflowed live column ----------------------------------------------


def test_an_overflowed_live_column_reads_back_clamped_to_its_capacity(device):
    # expand: counts 3, 4, 3 over 4 output slots: the counter states 10, 6 did not fit
    counts = np.array([3, 4, 3], np.int32)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
    out = ops.device.kernel(
        kernel=K("expand"),
        bind={
            "counts": col(counts, wp.int32, device),
            "offsets": col(offsets, wp.int32, device),
            "n": 4,
        },
        domain=3,
    )["columns"]
    owner = np.repeat(np.arange(3), counts)  # NumPy: the owner of every slot
    got = ops.transfer.readback(columns={"owner": out["owner"], "count": out["owner_count"]})
    assert got["values"]["count"] == 10  # the true count, past the capacity
    assert got["values"]["owner"] == owner[:4].tolist()  # the capacity's slots only
    assert out["owner"].numpy(live=True).tolist() == owner[:4].tolist()


def test_a_live_count_past_the_column_reads_back_the_column(device):
    values = col([1.0, 2.0, 3.0], wp.float32, device)
    live = values.with_live(LiveCount(wp.array([7], dtype=wp.uint32, device=device), 3))
    got = ops.transfer.readback(columns={"v": live})["values"]["v"]
    assert got == [1.0, 2.0, 3.0]
    live2 = ops.device.live(values=values, count=word(2, device))
    assert ops.transfer.readback(columns={"v": live2})["values"]["v"] == [1.0, 2.0]


# -- the field compiler and graphs ------------------------------------------------------


def test_a_field_bound_to_a_binding_lands_in_a_column_over_the_domain(device):
    a = col(np.arange(4), wp.float32, device)
    idx = col(np.arange(6) % 4, wp.int32, device)
    out = ops.device.kernel(kernel=K("gather"), bind={"src": a, "idx": fieldc.col(idx)}, domain=6)[
        "columns"
    ]
    assert out["dst"].numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 1.0]


def test_a_graph_whose_input_shrinks_plans_again_and_refuses():
    @pg.node(params={"n": pg.Field(8, bounds=(0, 64))})
    def values(n):
        return ops.transfer.upload(values={"f": {"type": "Int", "values": [1] * n}})["columns"]["f"]

    @pg.node
    def kept(values):
        return ops.device.kernel(kernel=K("compact"), bind={"flags": values}, domain=8)["columns"][
            "indices_count"
        ]

    g = pg.Graph("shrink", record=True)
    g.add("values", values)
    g.add("kept", kept, values="values")
    assert g.cook()["kept"].capacity == 8
    with pytest.raises(pg.ProcgenError) as info:
        g.cook(params={"values.n": 3})
    assert "procgen/compact: binding 'flags': expected a Column of at least 8 elements" in str(
        info.value
    )


def test_a_live_bound_replays_inside_inputs_and_refuses_a_room_past_them():
    src_np = np.arange(64, dtype=np.float32) * 2
    idx_np = np.arange(64, dtype=np.int32)[::-1].copy()

    @pg.node(params={"n": pg.Field(40, bounds=(0, 1000), dynamic=True)})
    def counted(n):
        lc = ops.device.bound(value=n, live=True)
        src, idx = Column(wp.array(src_np)), Column(wp.array(idx_np))
        return ops.device.kernel(kernel=K("gather"), bind={"src": src, "idx": idx}, domain=lc)[
            "columns"
        ]["dst"]

    g = pg.Graph("room", record=True)
    g.add("counted", counted)
    assert g.cook()["counted"].live.capacity == 64
    for n in (50, 3, 64):
        r = g.cook(params={"counted.n": n})
        assert r.report.replayed
        want = np.where(np.arange(64) < n, src_np[idx_np], 0)  # NumPy: the live slots only
        np.testing.assert_array_equal(r["counted"].data.numpy(), want)
    with pytest.raises(pg.ProcgenError) as info:
        g.cook(params={"counted.n": 70})  # the room grows to 128, past the 64 inputs
    assert (
        "procgen/gather: binding 'idx': expected a Column of at least 128 elements "
        "(the capacity 128 of the live-count domain), got one of 64"
    ) in str(info.value)


def test_a_field_reads_zero_past_the_end_of_a_shorter_column(device):
    # the field compiler bounds every read of a column by its length
    a = col([1.0, 2.0], wp.float32, device)
    got = fieldc.evaluate(fieldc.col(a) + 1.0, domain=4).numpy().tolist()
    assert got == [2.0, 3.0, 1.0, 1.0]


def test_hash_gather_a_cell_of_the_largest_i32_lists_nothing():
    # c + 1 would wrap to the least i32 and pass a "c + 1 < len(start)" test
    out = ops.device.kernel(
        kernel=K("hash_gather"),
        bind={
            "qcell": col([2**31 - 1, 0], wp.int32),
            "start": col([0, 2, 3], wp.int32),
            "order": col([2, 1, 0], wp.int32),
            "total": 4,
        },
        domain=2,
    )["columns"]
    assert ops.transfer.readback(columns={"n": out["items_count"]})["values"]["n"] == 2
    assert out["items"].data.numpy().tolist() == [2, 1, 0, 0]  # query 1's cell 0: 2, 1
    assert out["query"].data.numpy().tolist() == [1, 1, 0, 0]


def test_scan_over_a_count_word_past_2_31_clamps_to_the_capacity():
    """Seed: the live count is min(domain_count, zero_n()) with the word read as u32."""
    out = ops.device.kernel(
        kernel=K("scan"),
        specialize={"TYPE": "i32"},
        bind={"src": col([5, 6, 7], wp.int32)},
        domain={"count": word(2**32 - 1), "capacity": 3},
    )["columns"]
    # the word 2^32-1 clamps to the capacity 3: an exclusive scan of [5, 6, 7] (by hand)
    assert out["dst"].data.numpy().tolist() == [0, 5, 11]
    assert out["ends"].data.numpy().tolist() == [5, 11, 18]
    assert out["total"].data.numpy().tolist() == [18]


def test_expand_visits_only_the_slots_inside_its_capacity():
    # a count of two billion over 4 slots: the kernel writes 4 slots and states the count
    t0 = __import__("time").perf_counter()
    out = ops.device.kernel(
        kernel=K("expand"),
        bind={
            "counts": col([2_000_000_000, 3], wp.int32),
            "offsets": col([-2, 1], wp.int32),
            "n": 4,
        },
        domain=2,
    )["columns"]
    assert __import__("time").perf_counter() - t0 < 5.0
    # element 0 covers slots -2..; slots 0..3 are its t = 2..5; element 1 then writes 1..3
    assert out["owner"].data.numpy().tolist() == [0, 1, 1, 1]
    assert out["local_index"].data.numpy().tolist() == [2, 0, 1, 2]
    assert ops.transfer.readback(columns={"n": out["owner_count"]})["values"]["n"] == 2_000_000_003


def test_walk_reads_zero_past_the_end_of_a_shorter_column():
    rate = col([1.0, 2.0], wp.float32)  # two rates for four walkers
    step = fieldc.vec2(fieldc.col(rate), 0.0)
    spec = fieldc.walk_spec(step, {"dt": 0.5, "steps": 2})
    bound = fieldc.bind_spec(spec)
    pos = np.zeros((4, 2), np.float32)
    out = ops.device.kernel(
        kernel=K("walk"),
        specialize=spec.specialize,
        bind={"pos": Column(wp.array(pos, dtype=wp.vec2f)), "cols": bound.cols, "u": bound.u},
        domain=4,
        uniforms=spec.uniforms,
    )["columns"]
    # NumPy: x moves dt * rate per step for the walkers the column covers, 0 past it
    want = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [0.0, 0.0]], np.float32)
    np.testing.assert_array_equal(out["out"].data.numpy(), want)


def _walk_steps(steps):
    return ops.device.kernel(
        kernel=K("walk"),
        bind={
            "pos": col(np.zeros((2, 2)), wp.vec2f),
            "u": col([0.0, 0, 0], wp.float32),
            "cols": {},
        },
        domain=2,
        uniforms={"dt": 0.1, "steps": steps},
    )["columns"]


@pytest.mark.parametrize("steps", [2**40, -(2**31) - 1, 2.5, float("nan")])
def test_an_int_uniform_its_word_cannot_hold_is_refused(steps):
    # Warp would pack 2**40 as 0 and refuse a float with its own RuntimeError
    with pytest.raises(BindingError) as info:
        _walk_steps(steps)
    assert str(info.value) == (
        "procgen/walk: uniform 'steps': expected a whole Number in [-2147483648, 2147483647] "
        f"(int32), got {steps!r}"
    )


def test_a_whole_float_for_an_int_uniform_is_taken_as_its_int():
    assert _walk_steps(3.0)["taken"].data.numpy().tolist() == [3, 3]


@pytest.mark.parametrize("n", [-1, 2.5, 2**31])
def test_an_output_size_outside_the_slots_a_dispatch_indexes_is_refused(n):
    with pytest.raises(BindingError) as info:
        ops.device.kernel(
            kernel=K("expand"),
            bind={"counts": col([1], wp.int32), "offsets": col([0], wp.int32), "n": n},
            domain=1,
        )
    assert str(info.value) == (
        f"procgen/expand: bind 'n': expected a whole Number in [0, 2147483647] sizing an "
        f"output, got {n!r}"
    )


@pytest.mark.parametrize(
    "width, height, message",
    [
        (-2, -2, "texture width: expected a whole Number >= 0, got -2"),
        (2, 2.0, "texture height: expected a whole Number >= 0, got 2.0"),
        (True, 4, "texture width: expected a whole Number >= 0, got True"),
    ],
)
def test_a_texture_of_negative_or_fractional_size_is_refused(width, height, message):
    texels = col(np.zeros(4), wp.float32)
    with pytest.raises(BindingError) as info:
        pg.Texture(texels, width, height)
    assert str(info.value) == message
