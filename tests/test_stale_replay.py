"""A node that reads its input back on the host never replays stale.

A node whose body reads an array back (``Column.numpy()``, ``LaunchContext.readback``)
computes in Python from the words it read; a recording cannot redo that. When anything it
read may have moved (an upstream node that replays at a new dynamic value, a dynamic value
the node depends on), the node runs again, and so does everything downstream of it.

References: a fresh graph over a fresh generator cooked once at the same values (bit for
bit), and NumPy (the flip of the points read back from that fresh generator).
"""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import asset, cookrun, ops
from procgen_nb.columns import Column
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator

GATHER = asset.resolve("procgen/gather", "computeShader")
ENVS, POINTS = 4, 32


def _tg():
    return TrackGenerator(
        TrackGenConfig(generator="polar", num_envs=ENVS, num_points=POINTS, seed=3, device="cpu")
    )


@pg.node
def flip(tracks):
    """Reads the points back and uploads them with the envs in reverse order."""
    xy = tracks["xy"].numpy().reshape(ENVS, POINTS, 2)
    return ops.transfer.upload(values={"xy": np.ascontiguousarray(xy[::-1]).reshape(-1, 2)})[
        "columns"
    ]["xy"]


@pg.node
def copy_of(flipped):
    """A device gather of the flipped points (no readback): downstream of the host read."""
    every = ops.transfer.upload(values={"i": np.arange(len(flipped), dtype=np.int32)})["columns"]
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": "vec2"},
        bind={"src": flipped, "idx": every["i"]},
        domain=len(flipped),
    )["columns"]["dst"]


def _graph(tg, record=True):
    g = pg.Graph("flip", record=record)
    g.add("tracks", tg.node())
    g.add("flip", flip, tracks="tracks")
    g.add("copy", copy_of, flipped="flip")
    return g


def _bytes(out):
    return {
        n: (v.numpy().tobytes() if isinstance(v, Column) else v["xy"].numpy().tobytes())
        for n, v in out.outputs.items()
    }


def _fresh(params):
    return _bytes(_graph(_tg(), record=False).cook(params=params))


def _numpy_flip(epoch, jitter=None):
    tg = _tg()
    if jitter is not None:
        tg.update(generator_params={"radius_jitter": jitter})
    xy = tg.generate(epoch=epoch).xy.numpy().reshape(ENVS, POINTS, 2)
    return np.ascontiguousarray(xy[::-1]).reshape(-1, 2)


@pytest.mark.parametrize(
    "moves",
    [
        [{"tracks.epoch": 3}],
        [{"tracks.epoch": 3}, {"tracks.epoch": 1}, {"tracks.epoch": 1}, {"tracks.epoch": 4}],
        [{"tracks.radius_jitter": 0.7}, {"tracks.epoch": 2, "tracks.radius_jitter": 0.2}],
    ],
)
def test_a_host_reading_node_runs_again_when_its_upstream_replays(moves):
    tg = _tg()
    g = _graph(tg)
    g.cook(params={"tracks.epoch": 0})
    params = {"tracks.epoch": 0}
    for move in moves:
        params = {**params, **move}
        out = g.cook(params=params)
        by = {r.name: r.mode for r in out.report.nodes}
        assert _bytes(out) == _fresh(params)
        want = _numpy_flip(params["tracks.epoch"], params.get("tracks.radius_jitter"))
        assert np.array_equal(out["flip"].numpy(), want)
        assert np.array_equal(out["copy"].numpy(), want)
        if by["tracks"] != "reused":
            # the points moved: the node that read them ran again, and its downstream
            assert by["flip"] == by["copy"] == "cooked", by
        else:
            assert by == {"tracks": "reused", "flip": "reused", "copy": "reused"}


def test_a_host_reading_node_is_reused_when_nothing_it_read_moved():
    tg = _tg()
    g = _graph(tg)
    g.cook(params={"tracks.epoch": 2})
    out = g.cook(params={"tracks.epoch": 2})
    assert out.report.reused == ["tracks", "flip", "copy"]  # nothing moved: all reused
    assert _bytes(out) == _fresh({"tracks.epoch": 2})


def test_an_outside_call_between_cooks_does_not_reach_a_host_reading_node():
    tg = _tg()
    g = _graph(tg)
    g.cook(params={"tracks.epoch": 1})
    tg.generate(epoch=4)  # another cell calls the same generator
    out = g.cook(params={"tracks.epoch": 3})
    assert _bytes(out) == _fresh({"tracks.epoch": 3})
    tg.generate(epoch=0)
    out = g.cook(params={"tracks.epoch": 3})
    assert _bytes(out) == _fresh({"tracks.epoch": 3})


def test_a_node_reading_a_dynamic_upstream_column_back_plans_again():
    """The rule is the runtime's, not the track node's: a kernel node's output read back."""
    radius = pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)
    pts = np.random.default_rng(5).uniform(-1, 1, size=(64, 2)).astype(np.float32)
    inside = asset.resolve("procgen/inside", "computeShader")

    @pg.node(params={"radius": radius})
    def flags(radius):
        p = ops.transfer.upload(values={"P": pts})["columns"]["P"]
        return ops.device.kernel(
            kernel=inside,
            bind={"points": p},
            domain=p,
            uniforms={"center": (0, 0), "radius": radius},
        )["columns"]["flags"]

    @pg.node
    def total(flags):
        n = int(flags.numpy().sum())  # a readback, then Python
        return ops.transfer.upload(values={"n": {"type": "Int", "values": [n]}})["columns"]["n"]

    def build(record=True):
        g = pg.Graph("total", record=record)
        g.add("flags", flags)
        g.add("total", total, flags="flags")
        return g

    g = build()
    g.cook(params={"flags.radius": 0.3})
    plans = cookrun.counts().plans
    for r in (0.8, 0.3, 1.2):
        out = g.cook(params={"flags.radius": r})
        want = int((np.linalg.norm(pts, axis=1) <= np.float32(r)).sum())
        assert out["total"].numpy().tolist() == [want]
        fresh = build(record=False).cook(params={"flags.radius": r})
        assert out["flags"].numpy().tobytes() == fresh["flags"].numpy().tobytes()
    assert cookrun.counts().plans > plans  # the host-reading node planned again


INSIDE = asset.resolve("procgen/inside", "computeShader")
PTS = np.random.default_rng(9).uniform(-1, 1, size=(64, 2)).astype(np.float32)


def _inside(radius):
    p = ops.transfer.upload(values={"P": PTS})["columns"]["P"]
    return ops.device.kernel(
        kernel=INSIDE, bind={"points": p}, domain=p, uniforms={"center": (0, 0), "radius": radius}
    )["columns"]["flags"]


def _numpy_inside(radius):
    return int((np.linalg.norm(PTS, axis=1) <= np.float32(radius)).sum())


def test_a_node_reading_back_its_own_dynamic_launch_plans_again():
    @pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)})
    def counted(radius):
        n = int(_inside(radius).numpy().sum())  # its own kernel's flags, read back
        return ops.transfer.upload(values={"n": {"type": "Int", "values": [n]}})["columns"]["n"]

    g = pg.Graph("own")
    g.add("counted", counted)
    for r in (0.3, 0.9, 0.3, 1.4):
        out = g.cook(params={"counted.radius": r})
        assert out["counted"].numpy().tolist() == [_numpy_inside(r)]


def test_a_host_reading_node_two_wires_down_runs_again():
    @pg.node
    def reader(copied):
        xy = copied.numpy()
        return ops.transfer.upload(values={"s": np.ascontiguousarray(xy[::-1])})["columns"]["s"]

    def build(tg, record=True):
        g = pg.Graph("two", record=record)
        g.add("tracks", tg.node())
        g.add("copy", copy_of, flipped="tracks.xy")
        g.add("reader", reader, copied="copy")
        return g

    g = build(_tg())
    g.cook()
    for epoch in (2, 4):
        out = g.cook(params={"tracks.epoch": epoch})
        fresh = build(_tg(), record=False).cook(params={"tracks.epoch": epoch})
        assert out["reader"].numpy().tobytes() == fresh["reader"].numpy().tobytes()
        assert out.report.node("reader").mode == "cooked"


def test_a_host_reading_node_off_the_moved_branch_is_reused_and_the_graph_replays():
    @pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)})
    def flags(radius):
        return _inside(radius)

    g = _graph(_tg())
    g.add("flags", flags)
    g.cook(params={"tracks.epoch": 1, "flags.radius": 0.2})
    plans, before = cookrun.counts().plans, pg.traffic()
    for r in (0.6, 1.1):
        out = g.cook(params={"flags.radius": r})  # moves nothing the flip read
        assert out.report.node("flip").mode == "reused"
        assert out.report.node("flags").mode == "replayed"
        assert int(out["flags"].numpy().sum()) == _numpy_inside(r)
    assert cookrun.counts().plans == plans  # replayed: no plan
    assert (pg.traffic() - before).readbacks == 2  # the two checks above, nothing else
    fresh = _fresh({"tracks.epoch": 1})
    assert {k: v for k, v in _bytes(out).items() if k != "flags"} == fresh


def test_a_replay_reports_the_nodes_downstream_of_a_moved_value_replayed():
    @pg.node
    def points():
        return ops.transfer.upload(values={"P": PTS})["columns"]["P"]

    @pg.node(params={"radius": pg.Field(0.5, bounds=(0.0, 2.0), dynamic=True)})
    def near(points, radius):
        return ops.device.kernel(
            kernel=INSIDE,
            bind={"points": points},
            domain=points,
            uniforms={"center": (0, 0), "radius": radius},
        )["columns"]["flags"]

    @pg.node
    def moved(near):  # reads its input on the device only: replayed with it
        every = ops.transfer.upload(values={"i": np.arange(len(near), dtype=np.int32)})
        return ops.device.kernel(
            kernel=GATHER,
            specialize={"TYPE": "i32"},
            bind={"src": near, "idx": every["columns"]["i"]},
            domain=len(near),
        )["columns"]["dst"]

    g = pg.Graph("modes")
    g.add("points", points)
    g.add("near", near, points="points")
    g.add("moved", moved, near="near")
    g.add("aside", copy_of, flipped="points")
    g.cook(params={"near.radius": 0.3})
    plans = cookrun.counts().plans
    out = g.cook(params={"near.radius": 0.8})
    assert cookrun.counts().plans == plans
    modes = {r.name: r.mode for r in out.report.nodes}
    assert modes == {"points": "reused", "near": "replayed", "moved": "replayed", "aside": "reused"}
    assert int(out["moved"].numpy().sum()) == _numpy_inside(0.8)
