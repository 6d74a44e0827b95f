"""Count arithmetic over live counts, domains over them, waits and the overflow check."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import asset, fieldc, ops
from procgen_nb.columns import column_from_numpy
from procgen_nb.counts import check_capacity, count, count_max, count_min, resolve_domain
from procgen_nb.errors import BindingError, CapacityError

COMPACT = asset.resolve("procgen/compact", "computeShader")
GATHER = asset.resolve("procgen/gather", "computeShader")
EXPAND = asset.resolve("procgen/expand", "computeShader")
SCAN = asset.resolve("procgen/scan", "computeShader")


def _word(n: int, cap: int):
    col = column_from_numpy(np.asarray([n], np.uint32), "UInt", "cpu")
    return count({"count": col, "capacity": cap})


@settings(max_examples=40, deadline=None)
@given(
    a=st.integers(0, 1000),
    b=st.integers(0, 1000),
    k=st.integers(0, 50),
    form=st.sampled_from(["mul", "add", "min", "max", "sub_const", "prod"]),
)
def test_growing_counts_evaluate_on_the_device(a, b, k, form):
    ca, cb = _word(a, 1000), _word(b, 1000)
    expr, want, cap = {
        "mul": (ca * k, a * k, 1000 * k),
        "add": (k + ca + cb, a + b + k, 2000 + k),
        "min": (count_min(ca, cb, 700), min(a, b, 700), 700),
        "max": (count_max(ca, k), max(a, k), max(1000, k)),
        "sub_const": (ca - k, max(a - k, 0), 1000 - k),
        "prod": (ca * cb, a * b, 10**6),
    }[form]
    assert expr.grows
    before = pg.traffic()
    dom = resolve_domain(expr)
    assert dom.live is not None and dom.n == cap and dom.live.capacity == cap
    assert int(dom.live.words.numpy()[0]) == want
    assert (pg.traffic() - before).readbacks == 0


@settings(max_examples=25, deadline=None)
@given(a=st.integers(0, 1000), b=st.integers(0, 1000))
def test_subtracting_counts_are_read_back(a, b):
    ca, cb = _word(a, 1000), _word(b, 1000)
    expr = ca - cb
    assert not expr.grows and expr.capacity is None
    before = pg.traffic()
    dom = resolve_domain(expr)
    assert dom.live is None and dom.number == max(a - b, 0)
    spent = pg.traffic() - before
    assert spent.readbacks == 1 and spent.waits == 1
    assert not (ca * -1).grows and not (1000 - ca).grows


def test_a_count_reads_as_its_expression():
    ca, cb = _word(3, 10), _word(1, 4)
    assert (ca - 3).text == "(<count cap 10> - 3)"
    assert (2 * ca).text == "(2 * <count cap 10>)"  # the swapped operand stays first
    assert count_min(ca + cb, 8).text == "min((<count cap 10> + <count cap 4>), 8)"
    assert count_max(ca, cb * 2).text == "max(<count cap 10>, (<count cap 4> * 2))"
    assert repr(ca - cb).startswith("Count((<count cap 10> - <count cap 4>), grows=False")


def test_count_refuses_what_is_no_count():
    with pytest.raises(BindingError, match=r"count\(value\): expected a live count"):
        count("seven")
    with pytest.raises(BindingError, match=r"count\(capacity\): expected a whole number >= 0"):
        count(3, capacity=-1)


def _flags_node(n: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    return ops.transfer.upload(
        values={
            "f": {"type": "Int", "values": (rng.random(n) < 0.4).astype(int).tolist()},
            "three": {"type": "Int", "values": [3] * n},
        }
    )["columns"]


def _graph(subtract: bool) -> pg.Graph:
    @pg.node(params={"n": pg.Field(500, bounds=(0, 10_000))})
    def flags(n):
        return _flags_node(n)

    @pg.node
    def keep(flags):
        f = flags["f"]
        return ops.device.kernel(kernel=COMPACT, bind={"flags": f}, domain=f)["columns"]

    @pg.node
    def grow(flags, keep):
        kept = keep["indices"]
        # three per kept element, over the count the device holds: count(kept) * 3 slots
        threes = ops.device.kernel(
            kernel=GATHER,
            specialize={"TYPE": "i32"},
            bind={"src": flags["three"], "idx": kept},
            domain=kept,
        )["columns"]["dst"]
        offsets = ops.device.kernel(
            kernel=SCAN, specialize={"TYPE": "i32"}, bind={"src": threes}, domain=kept
        )["columns"]["dst"]
        return ops.device.kernel(
            kernel=EXPAND,
            bind={"counts": threes, "offsets": offsets, "n": {"live": count(kept) * 3}},
            domain=kept,
        )["columns"]

    @pg.node
    def rest(flags, keep):
        flags = flags["f"]
        dom = count(flags) - count(keep["indices"]) if subtract else count(keep["indices"])
        return ops.device.kernel(
            kernel=GATHER,
            specialize={"TYPE": "i32"},
            bind={"src": flags, "idx": keep["inverse"]},
            domain=dom,
        )["columns"]["dst"]

    g = pg.Graph("counts")
    g.add("flags", flags)
    g.add("keep", keep, flags="flags")
    g.add("grow", grow, flags="flags", keep="keep")
    g.add("rest", rest, flags="flags", keep="keep")
    return g


def test_a_chain_of_live_count_kernels_reads_nothing_back():
    g = _graph(subtract=False)
    result = g.cook()
    for name in ("keep", "grow", "rest"):
        assert result.report.node(name).readbacks == 0
        assert result.report.node(name).waits == 0
    assert result.report.totals.readbacks == 0
    assert result.report.waits == []
    grown = result["grow"]
    assert grown["owner"].live is grown["owner_count"]
    # the expand ran over the kept count: check it against NumPy now (outside the cook)
    flags = ops.transfer.readback(columns={"f": result["flags"]["f"]})["values"]["f"]
    kept = int(np.count_nonzero(flags))
    out = ops.transfer.readback(columns={"o": grown["owner"]})["values"]["o"]
    assert out == np.repeat(np.arange(kept), 3).tolist()
    assert grown["owner_count"].capacity == 3 * len(flags)
    assert len(grown["local_index"]) == 3 * len(flags)


def test_a_subtracting_count_shows_one_wait():
    g = _graph(subtract=True)
    result = g.cook()
    rest = result.report.node("rest")
    assert rest.readbacks == 1
    assert len(result.report.waits) == 1
    node, what = result.report.waits[0]
    assert node == "rest" and "subtracts" in what
    flags = ops.transfer.readback(columns={"f": result["flags"]["f"]})["values"]["f"]
    assert len(result["rest"]) == len(flags) - int(np.count_nonzero(flags))


def test_overflow_states_the_true_count_and_the_check_names_the_node():
    flags = column_from_numpy(np.ones(10, np.int32), "Int", "cpu")
    counts_col = column_from_numpy(np.full(10, 3, np.int32), "Int", "cpu")
    offsets = column_from_numpy(np.arange(0, 30, 3, dtype=np.int32), "Int", "cpu")
    out = ops.device.kernel(
        kernel=EXPAND, bind={"counts": counts_col, "offsets": offsets, "n": 16}, domain=flags
    )["columns"]
    owner = out["owner"].data.numpy()
    assert owner.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5]
    assert check_capacity(count(out["owner_count"]), 40, node="spread") == 30
    with pytest.raises(
        CapacityError,
        match=r"node 'spread': expected count <= capacity, got count 30 over "
        r"capacity 16 \(14 did not fit\)",
    ):
        check_capacity(out["owner_count"], node="spread")


def test_a_scan_total_is_a_count_with_a_stated_capacity():
    flags = column_from_numpy(np.array([1, 0, 1, 1], np.int32), "Int", "cpu")
    total = ops.device.kernel(
        kernel=SCAN, specialize={"TYPE": "i32"}, bind={"src": flags}, domain=flags
    )["columns"]["total"]
    c = count(total, capacity=4) * 2
    dom = resolve_domain(c)
    assert dom.n == 8 and int(dom.live.words.numpy()[0]) == 6


def test_readback_of_count_arithmetic():
    a, b = _word(7, 10), _word(2, 10)
    values = ops.transfer.readback(columns={"grow": a * 3 + b, "take": a - b})["values"]
    assert values == {"grow": 23, "take": 5}


def test_a_node_reading_a_count_back_is_planned_again_not_replayed():
    pts = column_from_numpy(np.linspace(0, 1, 100, dtype=np.float32), "Float", "cpu")

    @pg.node(params={"cut": pg.Field(0.5, bounds=(0.0, 1.0), dynamic=True)})
    def rest(cut):
        flags = ops.device.kernel(
            kernel=asset.resolve("procgen/gather", "computeShader"),
            specialize={"TYPE": "f32"},
            bind={"src": pts, "idx": column_from_numpy(np.arange(100), "Int", "cpu")},
            domain=100,
        )["columns"]["dst"]
        kept = ops.device.kernel(
            kernel=COMPACT, bind={"flags": fieldc.col(flags) < cut}, domain=100
        )["columns"]["indices"]
        return len(
            ops.device.kernel(
                kernel=GATHER,
                specialize={"TYPE": "i32"},
                bind={"src": kept, "idx": kept},
                domain=count(100) - count(kept),
            )["columns"]["dst"]
        )

    g = pg.Graph("subtract")
    g.add("rest", rest)
    for cut in (0.5, 0.25):
        res = g.cook(params={"rest.cut": cut})
        assert res.report.node("rest").mode == "cooked"
        assert res["rest"] == 100 - int(np.count_nonzero(np.linspace(0, 1, 100) < cut))
