"""``view.select(i)`` on a course and on graphs (a generator node alone, a course node,
a kernel node after a generator): the seed, the epoch and the code, run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from procgen_nb import Graph
from procgen_nb.columns import Column
from procgen_nb.track_gen import presets
from procgen_nb.track_gen.gates import build
from procgen_nb.track_gen.generators.basic import PolarParams
from procgen_nb.ui import explore
from procgen_nb.ui.timeline import Selection
from procgen_nb.ui.track_target import TrackTarget

E, N = 5, 96
#: what a course's one env must repeat of env i of the batch, byte for byte
KEYS = ("xy", "z", "gate_xy", "gate_heading", "gate_count", "gate_valid", "valid", "reason")


@pytest.mark.parametrize("gates", ["arc_length", "free"])
def test_select_on_a_course_rebuilds_that_one_course(gates):
    extra = {"max_gates": 16} if gates == "free" else {}
    v = explore(gates, num_envs=E, num_points=N, min_interval=0.0, **extra)
    try:
        v.wait(300)
        v.update(**{"course.seed": 3})
        v.wait(300)
        v.update(**{"course.epoch": 2})  # an epoch change generates again (no new build)
        frame = v.wait(300)
        assert v.error == ""
        sel = v.select(4)
        assert (sel.env, sel.seed, sel.epoch, sel.alone) == (4, 7, 2, True)
        assert sel.valid == bool(frame.valid[4])
        # the result is the Course drawn: its arrays are the frame's
        assert type(v.result).__name__ == "Course"
        batch = v.result.numpy()
        np.testing.assert_array_equal(batch["xy"], frame.tracks)
        scope: dict = {}
        exec(sel.code(), scope)  # noqa: S102 - the code the view hands a person
        one = scope["course"].numpy()
        assert one["xy"].shape[0] == 1
        for k in KEYS:
            assert one[k][0].tobytes() == batch[k][4].tobytes(), k
        # env 0 of the batch is not env 4 (the test would see a wrong seed)
        assert one["xy"][0].tobytes() != batch["xy"][0].tobytes()
    finally:
        v.close()


def _env_of(record, env: int, envs: int) -> dict[str, bytes]:
    """Every Column of a node's output (a Record) as the bytes of env ``env``."""
    out = {}
    for k, col in record.items():
        if isinstance(col, Column):
            out[k] = col.numpy().reshape(envs, -1)[env].tobytes()
    return out


@pytest.mark.parametrize(
    "seeds",
    [
        {"seed": 4},
        {"env_seeds": [11, 7, 30, 2, 19]},
        # the generator's other config travels too: per-point widths, a random direction
        # (env 2 at seed 7 drives clockwise: a rebuild with the default "ccw" differs)
        {"seed": 7, "width": {"left": 0.03, "variation": 0.2}, "direction": "random"},
    ],
)
def test_select_on_a_generator_node_rebuilds_that_env_alone(seeds):
    gen = presets.track(generator="polar", num_envs=E, num_points=64, z_profile=True, **seeds)
    g = Graph("tracks")
    g.add("track", gen.node())
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        # a static field (a rebuild of the generator) and the epoch, moved in the form
        v.update(**{"track.lobes": 6, "track.epoch": 3})
        frame = v.wait(300)
        assert v.error == "" and frame.tracks.shape[0] == E
        sel = v.select(2)
        seed = seeds["seed"] + 2 if "seed" in seeds else seeds["env_seeds"][2]
        assert (sel.env, sel.seed, sel.epoch, sel.alone) == (2, seed, 3, True)
        assert sel.valid == bool(frame.valid[2])
        if "seed" in seeds:  # the seed a track target gives the same generator's env 2
            t = TrackTarget("polar", PolarParams, num_envs=E, num_points=64, seed=seeds["seed"])
            assert t.select(t.initial.replace(epoch=3), 2)[:2] == (sel.seed, 3)
        code = sel.code()
        assert "num_envs=1," in code and "'lobes': 6," in code and "graph.cook" not in code
        scope: dict = {}
        exec(code, scope)  # noqa: S102 - the code the view hands a person
        one = scope["result"]
        assert one.num_envs == 1
        batch = _env_of(v.result.outputs["track"], 2, E)
        alone = _env_of(one.columns(), 0, 1)
        assert {"xy", "valid", "reason", "z"} <= set(batch)
        if "width" in seeds:
            assert {"width_left", "width_right"} <= set(batch)
        assert batch.keys() - {"valid_count"} <= alone.keys()  # every column, rebuilt
        for k in batch.keys() - {"valid_count"}:
            assert alone[k] == batch[k], k
        # the frame drew those bytes; env 1 of the batch is another track
        assert alone["xy"] == frame.tracks[2].astype(np.float32).tobytes()
        assert alone["xy"] != _env_of(v.result.outputs["track"], 1, E)["xy"]
    finally:
        v.close()


@pytest.mark.parametrize("gates", ["arc_length", "free"])
def test_select_on_a_course_node_rebuilds_that_course_alone(gates):
    extra = {"max_gates": 16} if gates == "free" else {}
    course = build(4, gate_generator=gates, num_points=64, seed=3, **extra)
    g = Graph("courses")
    g.add("course", course.node())
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        # the epoch, a validity threshold, a height and a gate field moved in the form
        own = {"course.gates_jitter": 0.35} if gates == "arc_length" else {"course.gates_tries": 12}
        v.update(
            **{
                "course.epoch": 2,
                "course.track_validity_min_turn_radius": 0.5,  # every centerline fails
                "course.track_z_amplitude": 0.3,
                **own,
            }
        )
        v.wait(300)
        assert v.error == ""
        sel = v.select(3)
        assert (sel.env, sel.seed, sel.epoch, sel.alone) == (3, 6, 2, True)
        scope: dict = {}
        exec(sel.code(), scope)  # noqa: S102
        one = scope["course"]
        batch = _env_of(v.result.outputs["course"], 3, 4)
        alone = _env_of(one.columns(), 0, 1)
        assert {"xy", "gate_position", "gate_count", "valid"} <= set(batch) <= set(alone)
        for k in batch.keys() - {"valid_count"}:
            assert alone[k] == batch[k], k
        assert alone["xy"] != _env_of(v.result.outputs["course"], 0, 4)["xy"]
    finally:
        v.close()


def test_select_through_a_kernel_node_cooks_the_graph_and_says_why():
    n = 64
    # epoch 3 from the config: the first cook's (a host node such as this one is reused,
    # not run again, when a later cook replays the generator)
    gen = presets.track(generator="polar", num_envs=E, num_points=n, seed=4, epoch=3)

    def flip(tracks):  # a node after the generator: env i is the generator's env E-1-i
        xy = tracks["xy"].numpy().reshape(E, n, 2)[::-1].copy()
        return {"xy": xy, "valid": tracks["valid"].numpy().reshape(E)[::-1].copy()}

    g = Graph("flipped")
    g.add("track", gen.node())
    g.add("flip", flip, tracks="track")
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        frame = v.wait(300)
        assert v.error == ""
        sel = v.select(1)
        # 'flip' is drawn: env 1 is not env 1 of the generator, so no seed and no alone
        assert (sel.env, sel.seed, sel.epoch, sel.alone) == (1, None, 3, False)
        code = sel.code()
        assert "from generator node 'track' through the nodes ['flip']" in code
        assert "index 1 of 'flip'" in code and "'track.epoch': 3" in code
        scope = {"graph": g}
        exec(code, scope)  # noqa: S102
        got = scope["result"]["flip"]["xy"][1]
        assert got.tobytes() == frame.tracks[1].astype(got.dtype).tobytes()
        mirror = scope["result"]["track"]["xy"].numpy().reshape(E, n, 2)[E - 2]
        assert got.tobytes() == mirror.tobytes()  # what an alone code at seed 4 + 1 misses
    finally:
        v.close()
    # the generator node drawn (outputs=): its env alone again
    v = explore(g, outputs="track", min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        sel = v.select(1)
        assert (sel.seed, sel.epoch, sel.alone) == (5, 3, True)
    finally:
        v.close()


def test_select_on_a_graph_of_two_generators():
    a = presets.track(generator="polar", num_envs=3, num_points=64, seed=0)
    b = presets.track(generator="polar", num_envs=3, num_points=64, seed=10, epoch=1)
    g = Graph("two")
    g.add("a", a.node())
    g.add("b", b.node())
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        sel = v.select(1)  # the last output holding tracks is drawn: b's, seed 10 + 1
        assert (sel.seed, sel.epoch, sel.alone) == (11, 1, True)
        scope: dict = {}
        exec(sel.code(), scope)  # noqa: S102
        assert (
            _env_of(scope["result"].columns(), 0, 1)["xy"]
            == (_env_of(v.result.outputs["b"], 1, 3)["xy"])
        )
    finally:
        v.close()

    def pick(first, second):  # reads both generators: which env is whose is its own
        return {"xy": second["xy"].numpy().reshape(3, 64, 2), "valid": first["valid"].numpy()}

    g.add("pick", pick, first="a", second="b")
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        sel = v.select(1)
        # two generators upstream, two epochs: neither a seed nor an epoch, the graph cooked
        assert (sel.seed, sel.epoch, sel.alone) == (None, None, False)
        assert "index 1 of 'pick'" in sel.code() and "graph.cook" in sel.code()
    finally:
        v.close()


def test_selection_code_is_a_method_of_a_frozen_selection():
    sel = Selection(env=1, seed=8, epoch=0, valid=True, code="x = 1\n", alone=True)
    assert sel.code() == "x = 1\n"
    assert (sel.env, sel.seed, sel.epoch, sel.valid, sel.alone) == (1, 8, 0, True, True)
    assert Selection(1, 8, 0, True, "x = 1\n").alone is False  # alone defaults to False
    assert sel == Selection(1, 8, 0, True, "x = 1\n", True)
    assert sel != Selection(1, 8, 0, True, "x = 2\n", True)  # the code counts
    assert "x = 1" not in repr(sel) and "env=1" in repr(sel)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sel.env = 2  # type: ignore[misc]
