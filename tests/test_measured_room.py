"""A measured room (``device.bound`` of a count word, no capacity) runs over the columns
the count counts: its room is never more than their slots, so nothing reads past them."""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb.columns import column_from_numpy

INSIDE = asset.resolve("procgen/inside")
COMPACT = asset.resolve("procgen/compact")
GATHER = asset.resolve("procgen/gather")
N = 4000
P = np.random.default_rng(1).uniform(-1, 1, size=(N, 2)).astype(np.float32)
RADIUS = pg.Field(0.9, bounds=(0.0, 2.0), dynamic=True)


def _measured(radius):
    pts = ops.transfer.upload(values={"P": P})["columns"]["P"]
    flags = ops.device.kernel(
        kernel=INSIDE,
        bind={"points": pts},
        domain=pts,
        uniforms={"center": (0, 0), "radius": radius},
    )["columns"]["flags"]
    found = ops.device.kernel(kernel=COMPACT, bind={"flags": flags}, domain=pts)["columns"]
    room = ops.device.bound(value=found["indices_count"].words)
    out = ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": pts, "idx": found["indices"]},
        domain=room,
    )["columns"]
    return {"dst": out["dst"], "room": room}


def _build(record):
    g = pg.Graph("room", record=record)
    g.add("n", pg.node(params={"radius": RADIUS})(_measured))
    return g


def _inside(radius):
    return np.flatnonzero(np.hypot(P[:, 0], P[:, 1]) <= radius)


def test_a_gather_over_a_measured_room_runs_over_the_columns_it_counts():
    r = _build(True).cook(params={"n.radius": 0.9})
    keep = _inside(0.9)
    assert 2 * len(keep) > N  # twice the count in powers of two would be 8192 slots
    room = r["n"]["room"]
    assert room.capacity == N  # the room of the 4000 slots the count counts
    assert int(room.words.numpy()[0]) == len(keep) and int(room.guard.numpy()[0]) == 0
    dst = r["n"]["dst"].data.numpy()
    assert dst.shape == (N, 2)
    np.testing.assert_array_equal(dst[: len(keep)], P[keep])  # NumPy's own gather
    assert not dst[len(keep) :].any()  # zeros past the live count


def test_a_measured_room_replays_exactly_within_its_slots():
    # a fresh cook measures a room of its own (twice its count); a replay keeps the room
    # of its recording, so the reference is per cook: NumPy's gather, zeros past the count
    g = _build(True)
    for i, radius in enumerate((1.5, 0.2, 0.9, 0.05, 1.2)):
        r = g.cook(params={"n.radius": radius})
        assert r.report.replayed == (i > 0)
        keep = _inside(radius)
        dst = r["n"]["dst"].data.numpy()
        assert int(r["n"]["room"].words.numpy()[0]) == len(keep)
        np.testing.assert_array_equal(dst[: len(keep)], P[keep])
        assert not dst[len(keep) :].any()


def test_a_small_room_grows_after_the_replay_that_outgrew_it():
    g = _build(True)
    g.cook(params={"n.radius": 0.1})
    assert g.last["n"]["room"].capacity < N
    g.cook(params={"n.radius": 1.5})  # ran past its room: handed out clamped, guard set
    r = g.cook(params={"n.radius": 1.5})  # the next cook plans again, with a room that fits
    keep = _inside(1.5)
    assert int(r["n"]["room"].words.numpy()[0]) == len(keep)
    np.testing.assert_array_equal(r["n"]["dst"].data.numpy()[: len(keep)], P[keep])


def test_a_count_above_the_slots_it_counts_is_clamped_and_guarded():
    # hash_gather's counter states the true count (5 pairs) over its 2 slots: an overflow
    bind = {
        "qcell": column_from_numpy(np.int32([0, 0, 0, 0, 0]), "Int", "cpu"),
        "start": column_from_numpy(np.int32([0, 1]), "Int", "cpu"),
        "order": column_from_numpy(np.int32([0]), "Int", "cpu"),
        "total": 2,
    }
    out = ops.device.kernel(kernel=asset.resolve("procgen/hash_gather"), bind=bind, domain=5)[
        "columns"
    ]
    assert int(out["items_count"].words.numpy()[0]) == 5
    room = ops.device.bound(value=out["items_count"].words)
    assert room.capacity == 2
    assert int(room.words.numpy()[0]) == 2 and int(room.guard.numpy()[0]) == 1


def test_a_word_of_no_live_count_keeps_the_measured_room_and_is_refused_past_its_columns():
    word = column_from_numpy(np.uint32([3000]), "UInt", "cpu")
    room = ops.device.bound(value=word)
    assert room.capacity == 8192  # nothing states what it counts: twice it, a power of two
    src = column_from_numpy(P, "Vec2", "cpu")
    idx = column_from_numpy(np.arange(N, dtype=np.int32), "Int", "cpu")
    with pytest.raises(pg.BindingError, match="at least 8192 elements"):
        ops.device.kernel(
            kernel=GATHER, specialize={"TYPE": "vec2"}, bind={"src": src, "idx": idx}, domain=room
        )
