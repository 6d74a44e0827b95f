"""Exact outputs: outputs sized by a dynamic number resize, and after any replay every output
holds the inert value of the kernel library's table past its live count.

The oracle: a fresh graph cooked once at the same values (``tests/exact_util.py``), every
slot of every output compared to the bit, past the live counts too.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_util import check_cooks

import procgen_nb as pg
from procgen_nb import asset, cookrun, ops
from procgen_nb.columns import column_from_numpy

INSIDE = asset.resolve("procgen/inside")
COMPACT = asset.resolve("procgen/compact")
N = 256
RNG = np.random.default_rng(5)
PTS = RNG.uniform(-1, 1, size=(N, 2)).astype(np.float32)
ROOM = pg.Field(2, bounds=(0, 64), dynamic=True)
RADIUS = pg.Field(0.9, bounds=(0.0, 2.0), dynamic=True)


def _ref(name):
    return asset.resolve(f"procgen/{name}", "computeShader")


def _up(values, type):
    return column_from_numpy(np.asarray(values), type, "cpu")


def _graph(fn, **params):
    def build(record):
        g = pg.Graph("exact", record=record)
        g.add("n", pg.node(params=params)(fn) if params else pg.node(fn))
        return g

    return build


# -- outputs sized by a dynamic number ----------------------------------------------------


def _expand(room):
    counts, offsets = _up(np.int32([2, 2, 2]), "Int"), _up(np.int32([0, 2, 4]), "Int")
    return ops.device.kernel(
        kernel=_ref("expand"), bind={"counts": counts, "offsets": offsets, "n": room}, domain=3
    )["columns"]


def test_expand_sized_by_a_dynamic_field_resizes():
    build = _graph(_expand, room=ROOM)
    g = check_cooks(build, [{"params": {"n.room": r}} for r in (2, 6, 3, 6)])
    # the hand-worked case of the issue: at 6 slots every element's two slots are there
    owner = g.cook(params={"n.room": 6})["n"]["owner"]
    assert owner.data.numpy().tolist() == [0, 0, 1, 1, 2, 2]
    assert g.cook(params={"n.room": 2})["n"]["owner"].data.numpy().tolist() == [0, 0]


def _gather_sized(total):
    bind = {
        "qcell": _up(np.int32([0, 1, 0]), "Int"),
        "start": _up(np.int32([0, 2, 3]), "Int"),
        "order": _up(np.int32([1, 0, 2]), "Int"),
        "total": total,
    }
    return ops.device.kernel(kernel=_ref("hash_gather"), bind=bind, domain=3)["columns"]


def test_hash_gather_total_of_a_dynamic_field_resizes():
    g = check_cooks(_graph(_gather_sized, total=ROOM), [{"params": {"n.total": t}} for t in (1, 5)])
    items = g.cook(params={"n.total": 5})["n"]["items"]
    assert items.data.numpy().tolist() == [1, 0, 2, 1, 0]  # cell 0, cell 1, cell 0


def test_a_count_sized_by_a_dynamic_expression_resizes():
    # local_index is sized `count: n`: an expression over the field resizes it too
    build = _graph(lambda room: _expand(room * 2), room=ROOM)
    check_cooks(build, [{"params": {"n.room": r}} for r in (1, 3, 2)])


# -- inert values past a live count after a replay ------------------------------------------


def _kept(radius):
    """A compact of the points inside a disk of a dynamic radius: a live count that moves."""
    pts = ops.transfer.upload(values={"P": PTS})["columns"]["P"]
    flags = ops.device.kernel(
        kernel=INSIDE,
        bind={"points": pts},
        domain=pts,
        uniforms={"center": (0, 0), "radius": radius},
    )["columns"]["flags"]
    return ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=pts)["columns"]


QCELL = RNG.integers(0, 16, size=N).astype(np.int32)
PCELL = RNG.integers(0, 16, size=300)
ORDER = np.argsort(PCELL, kind="stable").astype(np.int32)
START = np.searchsorted(PCELL[ORDER], np.arange(17)).astype(np.int32)


def _hash_gather(radius):
    kept = _kept(radius)
    bind = {
        "qcell": _up(QCELL, "Int"),
        "start": _up(START, "Int"),
        "order": _up(ORDER, "Int"),
        "point_count": _up(np.uint32([300]), "UInt"),
        "total": 8192,
    }
    return ops.device.kernel(kernel=_ref("hash_gather"), bind=bind, domain=kept["indices_count"])[
        "columns"
    ]


KEYS = RNG.integers(0, 40, size=N).astype(np.uint32)
SRC = RNG.integers(-9, 9, size=N).astype(np.int32)


def _hash_hook(radius):
    kept = _kept(radius)
    keys = _up(KEYS, "UInt")
    return ops.device.kernel(
        kernel=_ref("hash_hook"),
        specialize={"STAGE": "hook", "MATCH": "key"},
        bind={"keys": keys, "table": 1024},
        domain=kept["indices_count"],
    )["columns"]


KA = np.sort(RNG.integers(0, 30, size=N)).astype(np.int32)
KB = (KA + RNG.integers(0, 2, size=N)).astype(np.int32)


def _edges_runs(radius):
    kept = _kept(radius)
    dom = kept["indices_count"]
    ka, kb = _up(KA, "Int"), _up(KB, "Int")
    heads = ops.device.kernel(
        kernel=_ref("edges_runs"),
        specialize={"STAGE": "heads"},
        bind={"ka": ka, "kb": kb},
        domain=dom,
    )["columns"]
    incl = ops.device.kernel(
        kernel=_ref("scan"), specialize={"TYPE": "i32"}, bind={"src": heads["flag"]}, domain=dom
    )["columns"]["ends"]
    table = ops.device.kernel(
        kernel=_ref("edges_runs"),
        specialize={"STAGE": "table"},
        bind={"ka": ka, "kb": kb, "flag": heads["flag"], "edge": incl},
        domain=dom,
    )["columns"]
    return {"heads": heads, "table": table}


def _reduce(radius):
    kept = _kept(radius)
    src = _up(SRC, "Int")
    starts = _up(np.arange(N, dtype=np.int32), "Int")
    return ops.device.kernel(
        kernel=_ref("reduce"),
        specialize={"FOLD": "add", "TYPE": "i32"},
        bind={"src": src, "starts": starts, "src_count": _up(np.uint32([N]), "UInt")},
        domain=kept["indices_count"],
    )["columns"]


def _segmented_scan(radius):
    kept = _kept(radius)
    src = _up(SRC, "Int")
    starts = _up(np.arange(N, dtype=np.int32) // 2 * 2, "Int")
    return ops.device.kernel(
        kernel=_ref("scan"),
        specialize={"TYPE": "i32", "SEGMENTS": "device"},
        bind={"src": src, "starts": starts, "n": N},
        domain=kept["indices_count"],
    )["columns"]


SUCC = RNG.integers(0, N, size=N).astype(np.int32)
IDS = RNG.integers(-3, N, size=N).astype(np.int32)


def _jump(radius):
    kept = _kept(radius)
    cols = {"parent": _up(SUCC, "Int"), "value": _up(IDS, "Int"), "span": _up(SRC, "Int")}
    out = {}
    for mode in ("rank", "min"):
        out[mode] = ops.device.kernel(
            kernel=_ref("jump"), specialize={"MODE": mode}, bind=cols, domain=kept["indices_count"]
        )["columns"]
    return out


def _loops_place(radius):
    kept = _kept(radius)
    dom = kept["indices_count"]
    heads = (KEYS % 2).astype(np.int32)
    cut = ops.device.kernel(
        kernel=_ref("loops_cut"),
        bind={
            "prev": _up(IDS, "Int"),
            "start": _up(heads, "Int"),
            "rep": _up(SUCC, "Int"),
            "root": _up(SUCC[::-1].copy(), "Int"),
        },
        domain=dom,
    )["columns"]
    place = ops.device.kernel(
        kernel=_ref("loops_place"),
        bind={
            "head": cut["head"],
            "ring_of": _up(np.cumsum(heads).astype(np.int32), "Int"),
            "root": _up(SUCC, "Int"),
            "rank": _up(IDS, "Int"),
        },
        domain=dom,
    )["columns"]
    return {"cut": cut, "place": place}


@pytest.mark.parametrize(
    "fn",
    [_hash_gather, _hash_hook, _edges_runs, _reduce, _segmented_scan, _jump, _loops_place],
    ids=lambda f: f.__name__,
)
def test_a_replay_at_a_smaller_live_count_holds_the_inert_values(fn):
    radii = (1.5, 0.3, 0.9, 0.1, 1.5)
    before = cookrun.counts().replays
    check_cooks(_graph(fn, radius=RADIUS), [{"params": {"n.radius": r}} for r in radii])
    assert cookrun.counts().replays - before == len(radii) - 1  # every later cook replayed


def test_hash_gather_past_the_count_is_zero_after_a_replay():
    # the independent reference: the pairs listed by a loop; items and query past them are 0
    g = _graph(_hash_gather, radius=RADIUS)(True)
    g.cook(params={"n.radius": 1.5})
    out = g.cook(params={"n.radius": 0.3})
    assert out.report.replayed
    inside = np.flatnonzero(np.hypot(PTS[:, 0], PTS[:, 1]) <= 0.3)
    listed = sum(int(START[c + 1] - START[c]) for c in QCELL[: len(inside)])
    items, query = out["n"]["items"].data.numpy(), out["n"]["query"].data.numpy()
    assert int(out["n"]["items_count"].words.numpy()[0]) == listed
    assert not items[listed:].any() and not query[listed:].any()
    assert query[:listed].max(initial=0) < len(inside)


# -- a result kept from an earlier cook keeps its values ----------------------------------


def _flags(radius):
    return _kept(radius)


def _inside(radius):
    return (np.hypot(PTS[:, 0], PTS[:, 1]) <= radius).astype(np.int32)


def test_a_kept_result_keeps_its_values_after_a_replay():
    g = _graph(_flags, radius=RADIUS)(True)
    a = g.cook(params={"n.radius": 1.5})
    inverse = a["n"]["inverse"]  # a Column taken out of the result, kept on its own
    count = a["n"]["indices_count"]
    b = g.cook(params={"n.radius": 0.3})
    assert b.report.replayed
    # the reference: the flags a loop computes, at each cook's radius
    want_a, want_b = _inside(1.5), _inside(0.3)
    assert int(a["n"]["indices_count"].words.numpy()[0]) == int(want_a.sum())
    assert int(count.words.numpy()[0]) == int(want_a.sum())
    np.testing.assert_array_equal(
        a["n"]["indices"].data.numpy()[: want_a.sum()], np.flatnonzero(want_a)
    )
    np.testing.assert_array_equal(inverse.data.numpy() >= 0, want_a.astype(bool))
    assert int(b["n"]["indices_count"].words.numpy()[0]) == int(want_b.sum())
    np.testing.assert_array_equal(
        b["n"]["indices"].data.numpy()[: want_b.sum()], np.flatnonzero(want_b)
    )
    # a third cook moves b to its copy too; a is already its own
    g.cook(params={"n.radius": 0.9})
    assert int(b["n"]["indices_count"].words.numpy()[0]) == int(want_b.sum())
    assert int(a["n"]["indices_count"].words.numpy()[0]) == int(want_a.sum())


def test_a_result_nobody_holds_costs_no_copy():
    g = _graph(_flags, radius=RADIUS)(True)
    g.cook(params={"n.radius": 1.5})
    t0 = pg.traffic().copies
    r = g.cook(params={"n.radius": 0.3})  # the first result is held by nobody
    recorded = g._recording.copy_count
    assert r.report.replayed and pg.traffic().copies - t0 == recorded
    t1 = pg.traffic().copies
    g.cook(params={"n.radius": 0.4})  # r is held: the arrays the replay writes move first
    assert pg.traffic().copies - t1 > recorded
    assert int(r["n"]["indices_count"].words.numpy()[0]) == int(_inside(0.3).sum())
