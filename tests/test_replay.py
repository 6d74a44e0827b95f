"""Recording and replay of cooks; device.bound, device.live and device.guard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, cookrun, ops
from procgen_nb.columns import Column, LiveCount

INSIDE = asset.resolve("procgen/inside")
COMPACT = asset.resolve("procgen/compact")
GATHER = asset.resolve("procgen/gather")
N = 512
PTS = np.random.default_rng(11).uniform(-1, 1, size=(N, 2)).astype(np.float32)


@pg.node
def points():
    return ops.transfer.upload(values={"P": PTS})["columns"]["P"]


@pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)})
def keep(points, radius):
    flags = ops.device.kernel(
        kernel=INSIDE,
        bind={"points": points},
        domain=points,
        uniforms={"center": (0.0, 0.0), "radius": radius},
    )["columns"]["flags"]
    return ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=points)["columns"]


@pg.node
def kept(points, keep):
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": points, "idx": keep["indices"]},
        domain=keep["indices"],
    )["columns"]["dst"]


def graph(record=True):
    g = pg.Graph("replay", record=record)
    g.add("points", points)
    g.add("keep", keep, points="points")
    g.add("kept", kept, points="points", keep="keep")
    return g


def snapshot(result):
    n = int(result["keep"]["indices_count"].words.numpy()[0])
    return (
        n,
        result["kept"].data.numpy()[:n].tobytes(),
        result["keep"]["inverse"].data.numpy().tobytes(),
    )


def expected_count(radius):
    return int((np.linalg.norm(PTS, axis=1) <= np.float32(radius)).sum())


def test_replayed_cook_gives_the_same_bytes_as_a_fresh_one_and_reads_nothing():
    g = graph()
    first = g.cook(params={"keep.radius": 0.5})
    assert first.report.cooked == ["points", "keep", "kept"]
    before = cookrun.counts()
    for radius in (0.3, 0.8, 0.55):
        r = g.cook(params={"keep.radius": radius})
        assert r.report.replayed and r.report.cooked == []
        assert r.report.totals.readbacks == 0 and r.report.totals.waits == 0
        assert r.report.totals.launches == 3  # inside, compact, gather
        fresh = graph(record=False).cook(params={"keep.radius": radius})
        assert snapshot(r) == snapshot(fresh)
        assert snapshot(r)[0] == expected_count(radius)
    assert cookrun.counts().replays - before.replays == 3
    # nothing moved at all: every node is reused, nothing launches
    r = g.cook(params={"keep.radius": 0.55})
    assert r.report.reused == ["points", "keep", "kept"] and r.report.totals.launches == 0


def test_static_change_plans_again():
    g = graph()
    g.cook()
    g.cook(params={"keep.radius": 0.4})
    assert g.last.report.replayed

    @pg.node
    def other():
        return ops.transfer.upload(values={"P": PTS[:10]})["columns"]["P"]

    g2 = pg.Graph("static")
    g2.add("points", other)
    g2.add("keep", keep, points="points")
    g2.cook()
    r = g2.cook(params={"keep.radius": 2.0})
    assert r.report.replayed and int(r["keep"]["indices_count"].words.numpy()[0]) == 10


def test_time_and_frame_are_dynamic_in_replays(tmp_path):
    folder = Path(__file__).parent / "assets" / "kernels"
    asset.add_path("tkr", folder)
    try:
        ref = asset.resolve("tkr/tk_uniforms")

        @pg.node
        def clock(time, frame):
            return ops.device.kernel(
                kernel=ref,
                domain=1,
                uniforms={
                    "a": 1.0,
                    "off": (0.0, 0.0),
                    "flag": 0,
                    "time": time,
                    "frame": frame,
                    "dt": 0.0,
                },
            )["columns"]["dst"]

        g = pg.Graph("clock")
        g.add("clock", clock)
        g.cook(time=1.0, frame=1)
        r = g.cook(time=2.5, frame=7)
        assert r.report.replayed
        assert r["clock"].data.numpy()[3:5].tolist() == [2.5, 7.0]
    finally:
        asset.remove_path("tkr")


def test_python_use_of_a_dynamic_value_plans_again():
    @pg.node
    def py(time):
        return float(time) * 2

    g = pg.Graph("py")
    g.add("py", py)
    g.cook(time=1.0)
    r = g.cook(time=3.0)
    assert not r.report.replayed and r["py"] == 6.0


# -- device.bound -----------------------------------------------------------------------


@pg.node
def measured(keep):
    return ops.device.bound(value=keep["indices_count"].words)


@pg.node
def over(points, measured):
    """Scans ones over the measured count: the total is the count the dispatch saw."""
    ones = Column(wp.ones(measured.capacity, dtype=wp.int32, device=points.device))
    return ops.device.kernel(
        kernel=asset.resolve("procgen/scan"),
        specialize={"TYPE": "i32"},
        bind={"src": ones},
        domain=measured,
    )["columns"]


def bound_graph():
    g = pg.Graph("bound")
    g.add("points", points)
    g.add("keep", keep, points="points")
    g.add("measured", measured, keep="keep")
    g.add("over", over, points="points", measured="measured")
    return g


def test_bound_measures_room_and_guard_rerecords_with_four_times_the_room():
    g = bound_graph()
    r = g.cook(params={"keep.radius": 0.2})
    c1 = expected_count(0.2)
    room1 = r["measured"].capacity
    assert room1 == 1 << (2 * c1 - 1).bit_length()  # twice the count, in powers of two
    assert r.report.waits == [("measured", f"device.bound measures a count ({c1})")]
    # a count inside the room replays with no wait, reading the guard word deferred
    small = 0.21
    before = pg.traffic()
    r = g.cook(params={"keep.radius": small})
    d = pg.traffic() - before
    assert r.report.replayed and d.readbacks == 0 and d.deferred_reads == 1
    assert int(r["over"]["total"].numpy()[0]) == expected_count(small)
    # a count that outgrows the room: the replay clamps it, the next cook finds the guard
    big = 0.9
    c_big = expected_count(big)
    assert c_big > room1
    r = g.cook(params={"keep.radius": big})
    assert r.report.replayed
    assert int(r["over"]["total"].numpy()[0]) == room1  # clamped to its room
    guarded = cookrun.counts().guarded
    r = g.cook(params={"keep.radius": big})
    assert cookrun.counts().guarded == guarded + 1
    assert not r.report.replayed and "measured" in r.report.cooked
    # four times the room, or twice the count; never more than the N slots it counts
    assert r["measured"].capacity == min(N, max(4 * room1, 1 << (2 * c_big - 1).bit_length()))
    assert ("guard", "a replay ran past a guard of node 'measured'") in r.report.node(
        "measured"
    ).events
    assert int(r["over"]["total"].numpy()[0]) == c_big


def test_bound_forms_and_refusals():
    words = wp.array([5], dtype=wp.uint32)
    lc = ops.device.bound(value=Column(words), capacity=8)
    assert isinstance(lc, LiveCount) and lc.capacity == 8 and lc.words is words
    assert ops.device.bound(value=7) == 7
    live = ops.device.bound(value=5, live=True)
    assert live.capacity == 8 and int(live.words.numpy()[0]) == 5
    assert ops.device.bound(value=lc) is lc
    with pytest.raises(
        pg.BindingError,
        match=r"device.bound value: expected a count \(a whole Number >= 0\), got 2.5",
    ):
        ops.device.bound(value=2.5)
    with pytest.raises(
        pg.BindingError, match=r"device.bound capacity: expected a Number >= 0, got -1"
    ):
        ops.device.bound(value=Column(words), capacity=-1)
    with pytest.raises(
        pg.BindingError, match=r"device.bound value: expected a one-word Column, a live count"
    ):
        ops.device.bound(value="many")


def test_live_bound_replays_inside_its_room_and_records_again_outside():
    @pg.node(params={"n": pg.Field(5, bounds=(0, 1000), dynamic=True)})
    def counted(n):
        lc = ops.device.bound(value=n, live=True)
        src = Column(wp.array(np.arange(64, dtype=np.float32)))
        idx = Column(wp.array(np.arange(64, dtype=np.int32)))
        return ops.device.kernel(kernel=GATHER, bind={"src": src, "idx": idx}, domain=lc)[
            "columns"
        ]["dst"]

    g = pg.Graph("live")
    g.add("counted", counted)
    r = g.cook()
    assert r["counted"].live.capacity == 8
    r = g.cook(params={"counted.n": 7})
    assert r.report.replayed
    assert r["counted"].data.numpy().tolist() == [0, 1, 2, 3, 4, 5, 6, 0]
    r = g.cook(params={"counted.n": 9})
    assert not r.report.replayed and r["counted"].live.capacity == 16


def test_guard_and_live_ops():
    assert ops.device.guard(value=3, flag=0, why="never") == 3
    with pytest.raises(pg.GuardError, match="^not a solid$"):
        ops.device.guard(value=3, flag=1, why="not a solid")
    with pytest.raises(pg.GuardError, match="^not a solid: 4 holes$"):
        ops.device.guard(
            value=3, flag=wp.array([1], dtype=wp.int32), why="not a solid", detail=lambda: "4 holes"
        )

    def boom():
        raise pg.CapacityError("node x: count 9 > capacity 8")

    with pytest.raises(pg.CapacityError, match="count 9 > capacity 8"):
        ops.device.guard(value=3, flag=1, why="overflow", detail=boom)
    with pytest.raises(pg.BindingError, match="device.guard why: expected the refusal's text"):
        ops.device.guard(value=3, flag=0, why="")
    col = Column(wp.zeros(4, dtype=wp.float32))
    out = ops.device.live(values=col, count=Column(wp.array([2], dtype=wp.uint32)))
    assert out.live.capacity == 4 and int(out.live.words.numpy()[0]) == 2
    with pytest.raises(
        pg.BindingError,
        match=r"device.live count: expected a capacity <= the column's 4 slots, got 8",
    ):
        ops.device.live(values=col, count=LiveCount(wp.array([2], dtype=wp.uint32), 8))


def test_guard_in_a_recording_is_checked_by_the_next_cook():
    @pg.node(params={"limit": pg.Field(0.5, dynamic=True)})
    def checked(keep, limit):
        flag = ops.device.kernel(
            kernel=asset.resolve("procgen/inside"),
            bind={"points": Column(wp.array([[0.6, 0.0]], dtype=wp.vec2f))},
            domain=1,
            uniforms={"center": (0.0, 0.0), "radius": limit},
        )["columns"]["flags"]
        return ops.device.guard(value=keep, flag=flag, why="the probe point fell inside")

    g = pg.Graph("guarded")
    g.add("points", points)
    g.add("keep", keep, points="points")
    g.add("checked", checked, keep="keep")
    g.cook()
    r = g.cook(params={"checked.limit": 0.55})
    assert r.report.replayed
    r = g.cook(params={"checked.limit": 0.9})  # the replay runs past the guard (deferred)
    assert r.report.replayed
    with pytest.raises(
        pg.CookError,
        match=r"node 'checked' .*failed in op device.guard: GuardError: the probe point fell inside",
    ):
        g.cook(params={"checked.limit": 0.9})
