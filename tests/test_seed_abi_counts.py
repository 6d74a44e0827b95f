"""The abi seed's count rules: count arithmetic, class counts, and counts at the edges.

Each test quotes the rule it checks and compares with a reference worked out apart from
the code under test (Python integers, NumPy, a hand-worked case).
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb.columns import Column, Domain, Geometry, LiveCount, column_from_numpy
from procgen_nb.counts import Count, count_max, count_min, resolve_domain
from procgen_nb.errors import BindingError

WORD_MAX = 2**32 - 1
GATHER = asset.resolve("procgen/gather", "computeShader")
LOOPS = asset.resolve("procgen/loops", "computeShader")


def word(n: int, cap: int, device: str = "cpu", dtype=np.uint32) -> LiveCount:
    col = column_from_numpy(np.asarray([n], dtype), "UInt" if dtype == np.uint32 else "Int", device)
    return LiveCount(col.data.view(wp.uint32), cap)


def value(lc) -> int:
    wp.synchronize()
    return int(lc.words.numpy()[0])


# -- count arithmetic on live counts and class counts -----------------------------------


@pytest.mark.parametrize(
    "form",
    ["mul8", "rmul", "plus1", "radd", "sum", "min_room", "max", "nested"],
)
def test_arithmetic_over_live_counts_is_a_domain_read_on_the_device(device, form):
    """Seed: "A count that is arithmetic over live counts (geometry.point.count * 8,
    min(kept.count, room)) is a domain too when the arithmetic only grows with the counts
    it reads: the dispatch covers the most it can reach and the kernel reads the count the
    arithmetic comes to, evaluated on the device."
    """
    a, b, room = 37, 5, 20
    ca, cb = word(a, 64, device), word(b, 10, device)
    geo = Geometry(point=Domain({}, ca))
    expr, want, most = {
        "mul8": (geo.point.count * 8, a * 8, 64 * 8),
        "rmul": (3 * ca, 3 * a, 3 * 64),
        "plus1": (ca + 1, a + 1, 65),
        "radd": (1 + ca, a + 1, 65),
        "sum": (ca + cb, a + b, 74),
        "min_room": (count_min(ca, room), min(a, room), room),
        "max": (count_max(ca, cb * 10), max(a, b * 10), max(64, 100)),
        "nested": ((ca + cb) * 2 + 1, (a + b) * 2 + 1, 149),
    }[form]
    assert isinstance(expr, Count) and expr.grows
    before = pg.traffic()
    dom = resolve_domain(expr)
    assert dom.n == most and dom.live is not None and dom.live.capacity == most
    assert value(dom.live) == want
    assert (pg.traffic() - before).readbacks == 0


def test_a_kernel_runs_over_class_count_arithmetic(device):
    """Seed: "the dispatch covers the most it can reach and the kernel reads the count the
    arithmetic comes to" (gather: "dst is zeros" past the live count)."""
    n_live, cap = 3, 4
    geo = Geometry(point=Domain({}, word(n_live, cap, device)))
    domain = geo.point.count * 2  # live 6 of a capacity of 8
    src = column_from_numpy(np.arange(10, 20, dtype=np.float32), "Float", device)
    idx = column_from_numpy(np.arange(8, dtype=np.int32), "Int", device)
    out = ops.device.kernel(kernel=GATHER, bind={"src": src, "idx": idx}, domain=domain)
    dst = out["columns"]["dst"]
    want = np.where(np.arange(8) < 6, np.arange(10, 18), 0).astype(np.float32)
    wp.synchronize()
    np.testing.assert_array_equal(dst.data.numpy(), want)
    assert ops.transfer.readback(columns={"d": dst})["values"]["d"] == want[:6].tolist()


def test_arithmetic_that_takes_a_count_away_is_read_back():
    """Seed: "Arithmetic that takes a count away from something is read back where the
    dispatch needs the number." (count + 1 grows; room - count takes away.)"""
    c = word(9, 16)
    grows, takes = c + 1, 40 - c
    assert grows.grows and not takes.grows and takes.capacity is None
    before = pg.traffic()
    dom = resolve_domain(takes)
    assert dom.live is None and dom.number == 31 and dom.n == 31
    assert (pg.traffic() - before).readbacks == 1


def test_a_count_with_a_stated_capacity_is_a_count_as_it_is():
    """Seed: "device.bound { value, capacity? } answers value as a live count: a count
    Column that carries the most it can reach" (value may be arithmetic over counts): once
    bounded, arithmetic that only grows over it is a domain again (count + 1)."""
    a, b = word(7, 10), word(3, 10)
    bounded = ops.device.bound(value=a - b, capacity=10)  # read back once: it takes away
    for bounded_form in (bounded, ops.device.count(a - b, capacity=10)):
        expr = bounded_form + 1
        assert expr.grows and expr.capacity == 11
        dom = resolve_domain(expr)
        assert (dom.n, value(dom.live)) == (11, 7 - 3 + 1)
    assert ops.device.count(5, capacity=10).read() == 5


def test_builtin_min_and_order_are_refused_naming_count_min():
    """Seed: "min(kept.count, room)": the builtin min would compare in Python (a read
    back); it is refused naming count_min/count_max, which fold on the device."""
    kept = word(3, 8)
    for attempt in (lambda: min(kept, 5), lambda: max(5, kept), lambda: kept < 2):
        with pytest.raises(BindingError, match=r"expected count_min\(\.\.\.\) or count_max"):
            attempt()
    with pytest.raises(BindingError, match=r"count comparison: expected count_min"):
        min(kept + 1, 5)
    with pytest.raises(BindingError, match=r"int\(count\): expected a Number.*read\(\)"):
        int(kept)
    with pytest.raises(BindingError, match=r"int\(count\)"):
        range(kept * 2)


def test_device_count_is_a_count_source():
    """Seed: "{ count = <one-word Column>, capacity = <Number> } for any other count held
    on the device (a scan's total, a count made by proc.device.count; its words are read
    as u32)"."""
    words = column_from_numpy(np.asarray([-1], np.int32), "Int", "cpu")  # 0xFFFFFFFF as u32
    c = ops.device.count({"count": words, "capacity": 100})
    assert c.capacity == 100
    assert value(resolve_domain(c).live) == WORD_MAX
    small = ops.device.count(column_from_numpy(np.asarray([7], np.uint32), "UInt", "cpu"), 10)
    assert value(resolve_domain(ops.device.count_min(small * 8, 50)).live) == 50
    assert value(resolve_domain(ops.device.count_max(small, 9)).live) == 9


@pytest.mark.parametrize(
    ("a", "b"),
    [(3_000_000_000, 3_000_000_000), (2**31, 2), (WORD_MAX, WORD_MAX), (65536, 65536)],
)
def test_count_arithmetic_saturates_at_the_word(a, b):
    """Words are u32: arithmetic is evaluated in 64 bits and the count it comes to is
    clamped to [0, 2**32 - 1] (a product of two large words saturates, it does not wrap)."""
    ca, cb = word(a, WORD_MAX), word(b, WORD_MAX)
    for expr, want in (
        (ca * cb, a * b),
        (ca + cb, a + b),
        (ca * cb * cb - ca, a * b * b - a),
        (count_min(ca * 4, cb), min(a * 4, b)),
    ):
        got = value(LiveCount(expr.words(), 1))
        assert got == min(max(want, 0), WORD_MAX), (expr, got)


# -- class.count = count --------------------------------------------------------------


def test_class_count_assignment_carries_a_live_count_without_a_read(device):
    """Seed: "device.bound ... answers value as a live count: a count Column that carries
    the most it can reach, so a kernel runs over it (domain = count), a geometry carries it
    (class.count = count) and nothing is read back."""
    p = column_from_numpy(np.arange(8, dtype=np.float32) + 1, "Float", device)
    geo = Geometry(point={"P": p})
    assert geo.point.count == 8
    words = column_from_numpy(np.asarray([5], np.uint32), "UInt", device)
    before = pg.traffic()
    geo.point.count = ops.device.bound(value=words, capacity=8)
    assert (pg.traffic() - before).readbacks == 0
    assert isinstance(geo.point.count, LiveCount) and geo.point.count.capacity == 8
    # a kernel over the class takes its count as its domain
    idx = column_from_numpy(np.arange(8, dtype=np.int32), "Int", device)
    out = ops.device.kernel(kernel=GATHER, bind={"src": p, "idx": idx}, columns=geo.point)
    wp.synchronize()
    np.testing.assert_array_equal(out["columns"]["dst"].data.numpy(), [1, 2, 3, 4, 5, 0, 0, 0])
    # the copy of the geometry holds what its columns held: the first 5
    got = ops.transfer.readback(columns={"g": geo})["values"]["g"]
    assert got == {"point": {"count": 5, "P": [1.0, 2.0, 3.0, 4.0, 5.0]}}
    # arithmetic that grows, and a plain number
    geo.point.count = count_min(geo.point.count + 2, 8)
    assert ops.transfer.readback(columns={"n": geo.point.count})["values"]["n"] == 7
    geo.point.count = 2
    assert ops.transfer.readback(columns={"g": geo})["values"]["g"]["point"]["P"] == [1.0, 2.0]


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (-1, r"class\.count: expected a whole Number in \[0, 4\]"),
        (5, r"class\.count: expected a whole Number in \[0, 4\]"),
        (True, r"class\.count: expected a whole Number >= 0 or a live count, got True"),
        ("3", r"class\.count: expected a whole Number >= 0, a live count or count arithmetic"),
        ("big", r"class\.count: expected a count whose capacity fits the class's columns"),
        (
            "takes",
            r"class\.count: expected count arithmetic that only grows.*got "
            r"\(4 - <count cap 4>\) \(it subtracts",
        ),
    ],
)
def test_class_count_assignment_refusals(bad, match):
    geo = Geometry(point={"P": column_from_numpy(np.zeros(4, np.float32), "Float", "cpu")})
    if bad == "big":
        bad = word(1, 16)
    elif bad == "takes":
        bad = 4 - word(1, 4)
    with pytest.raises(BindingError, match=match):
        geo.point.count = bad
    assert geo.point.count == 4


# -- counts at the edges ---------------------------------------------------------------

N = 8


def _i(values) -> Column:
    return column_from_numpy(np.asarray(values, np.int32), "Int", "cpu")


def _u(values) -> Column:
    return column_from_numpy(np.asarray(values, np.uint32), "UInt", "cpu")


def _f(values) -> Column:
    return column_from_numpy(np.asarray(values, np.float32), "Float", "cpu")


def _v(values, t) -> Column:
    return column_from_numpy(np.asarray(values, np.float32), t, "cpu")


def _cases():
    """One COUNT=device call per built-in kernel: (specialize, bind, uniforms)."""
    rng = np.random.default_rng(7)
    r = lambda lo, hi, n=N: rng.integers(lo, hi, n)  # noqa: E731
    counts = r(0, 3)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    ka = np.sort(r(0, 3))
    return {
        "compact": ({}, {"flags": _i(r(0, 2))}, {}),
        "gather": ({}, {"src": _f(np.arange(5) + 1.0), "idx": _i(r(-1, 6))}, {}),
        "scan": ({"TYPE": "i32"}, {"src": _i(r(0, 5))}, {}),
        "scatter": (
            {"TYPE": "i32"},
            {"idx": _i(r(0, 4)), "src": _i(r(1, 9)), "dst": _i(np.zeros(4))},
            {},
        ),
        "inside": (
            {},
            {"points": _v(rng.uniform(-2, 2, (N, 2)), "Vec2")},
            {"center_x": 0.0, "center_y": 0.0, "radius": 1.0},
        ),
        "reduce": (
            {},
            {
                "src": _f(rng.uniform(0, 1, 20)),
                "starts": _i(np.arange(N) * 2),
                "src_count": _u([20]),
            },
            {},
        ),
        "jump": ({}, {"parent": _i(r(0, N)), "value": _i(r(0, 9)), "span": _i(r(0, 2))}, {}),
        "loops": (
            {"STAGE": "link"},
            {
                "a": _i(r(0, 4)),
                "b": _i(r(0, 4)),
                "out_edge": _i(r(-1, N, 4)),
                "in_edge": _i(r(-1, N, 4)),
            },
            {},
        ),
        "loops_cut": ({}, {k: _i(r(-1, N)) for k in ("prev", "start", "rep", "root")}, {}),
        "loops_place": ({}, {k: _i(r(0, N)) for k in ("head", "ring_of", "root", "rank")}, {}),
        "edges_runs": ({"STAGE": "heads"}, {"ka": _i(ka), "kb": _i(ka + r(0, 2))}, {}),
        "expand": ({}, {"counts": _i(counts), "offsets": _i(offsets), "n": 3 * N}, {}),
        "hash_gather": (
            {},
            {
                "qcell": _i(r(-1, 3)),
                "start": _i([0, 2, 3, 5]),
                "order": _i(r(0, 6, 5)),
                "total": 64,
                "point_count": _u([6]),
            },
            {},
        ),
        "hash_hook": (
            {"STAGE": "hook"},
            {"keys": _u(r(0, 3)), "normal": _v(np.tile([0, 0, 1], (N, 1)), "Vec3"), "table": 32},
            {"cos_tol": 0.9},
        ),
        "walk": (
            {},
            {"pos": _v(rng.uniform(-2, 2, (N, 2)), "Vec2"), "u": _f([]), "cols": {}},
            {"dt": 0.5, "steps": 2},
        ),
    }


CASES = _cases()
LIBRARY = sorted(
    p.name for p in asset.builtin_folder().iterdir() if (p / "bindings.yaml").is_file()
)


def _outputs(name: str, count_word: Column) -> dict[str, np.ndarray]:
    spec, bind, uniforms = CASES[name]
    out = ops.device.kernel(
        kernel=asset.resolve(f"procgen/{name}", "computeShader"),
        specialize={**spec, "COUNT": "device"},
        bind=bind,
        domain={"count": count_word, "capacity": N},
        uniforms=uniforms,
    )["columns"]
    wp.synchronize()
    return {
        k: (v.words.numpy() if isinstance(v, LiveCount) else v.data.numpy()).copy()
        for k, v in out.items()
    }


def test_every_count_kernel_of_the_library_has_an_edge_case():
    # the intersect_* kernels belong to another part of the project; they are checked there
    assert sorted(CASES) == [k for k in LIBRARY if not k.startswith("intersect_")]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize(
    "raw", [2**31, 3_000_000_000, 0xFFFFFFFF, -1], ids=["2^31", "3e9", "0xFFFFFFFF", "Int-1"]
)
def test_a_count_word_past_2_31_clamps_to_the_capacity(name, raw):
    """Seed: "What the shader does. The dispatch covers the capacity (zero_n()), ... and
    the live count is min(domain_count_get(0u), zero_n())" and "its words are read as u32":
    a word of 2**31 or more (a u32 3e9, an Int -1) is a count past the capacity, so every
    slot of the capacity is live, exactly as with a word equal to the capacity."""
    word = _i([raw]) if raw < 0 else _u([raw])
    got = _outputs(name, word)
    want = _outputs(name, _u([N]))
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name}.{k} with word {raw}")


def test_clamped_gather_and_compact_match_numpy():
    """Hand-worked: over a word of 3e9 and a capacity of 8, gather reads every slot and
    compact keeps every flagged one (nothing is inert)."""
    spec, bind, _ = CASES["gather"]
    got = _outputs("gather", _u([3_000_000_000]))
    src = np.arange(5) + 1.0
    idx = bind["idx"].data.numpy()
    want = np.where((idx >= 0) & (idx < 5), src[np.clip(idx, 0, 4)], 0.0)
    np.testing.assert_array_equal(got["dst"], want.astype(np.float32))
    flags = CASES["compact"][1]["flags"].data.numpy()
    got = _outputs("compact", _u([0xFFFFFFFF]))
    kept = np.flatnonzero(flags != 0)
    assert int(got["indices_count"][0]) == len(kept)
    np.testing.assert_array_equal(got["indices"][: len(kept)], kept)


def test_only_outputs_declared_live_carry_the_domain_count():
    """Seed: "A kernel output declared live: true in bindings.yaml carries the count its
    dispatch ran over the same way." loops declares next and head live; out_edge and
    in_edge (per vertex, not per slot) are not."""
    spec, bind, _ = CASES["loops"]
    live = word(5, N)
    out = ops.device.kernel(kernel=LOOPS, specialize=spec, bind=bind, domain=live)["columns"]
    declared = {b.name for b in LOOPS.spec.bindings if b.live}
    assert declared == {"next", "head"}
    assert out["next"].live is live and out["head"].live is live
    assert out["out_edge"].live is None and out["in_edge"].live is None


def test_device_bound_compares_the_word_as_u32():
    """Seed: "A recorded list runs the count on the device clamped to that room, and holds
    a guard: a word that is 1 when the count outgrew the room." A word of 3e9 outgrows a
    room of 16 (read as i32 it would be negative and pass)."""
    from procgen_nb.launch import default_context
    from procgen_nb.ops._live import _clamp_count

    ctx = default_context("cpu")
    for raw, room, want_count, want_guard in (
        (3_000_000_000, 16, 16, 1),
        (2**31, 2**31, 2**31, 0),
        (0xFFFFFFFF, 2**32 - 1, 2**32 - 1, 0),
        (9, 16, 9, 0),
    ):
        clamped = ctx.zeros(1, wp.uint32)
        guard = ctx.zeros(1, wp.int32)
        ctx.launch(_clamp_count, 1, [_u([raw]).data, room, clamped, guard])
        wp.synchronize()
        assert (int(clamped.numpy()[0]), int(guard.numpy()[0])) == (want_count, want_guard)


def _bound_here(n: int) -> LiveCount:
    return ops.device.bound(value=_u([n]))


def test_device_bound_rooms_outside_a_graph_are_per_call_site():
    """Seed: "A count held on the device with no capacity stated is allocated the room a
    cook of it measures: twice its count, in powers of two, and never less than an earlier
    recording of the same cook allocated." Outside a graph there is no cook: each call
    site keeps its own room, so a large count at one site does not widen another's."""
    big = ops.device.bound(value=_u([100]))  # room: 256
    small = ops.device.bound(value=_u([3]))  # another site: room 8, not 256
    assert (big.capacity, small.capacity) == (256, 8)
    rooms = [_bound_here(n).capacity for n in (100, 3)]  # one site: never less than before
    assert rooms == [256, 256]
