"""``view.select(i)`` on a course and on a graph: the seed, the epoch and the code, run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from procgen_nb import Graph
from procgen_nb.track_gen import presets
from procgen_nb.ui import explore
from procgen_nb.ui.timeline import Selection

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


def test_select_on_a_graph_says_what_it_holds():
    gen = presets.track(generator="polar", num_envs=E, num_points=64, seed=0)
    g = Graph("tracks")
    g.add("track", gen.node())
    v = explore(g, min_interval=0.0, poll_interval=0)
    try:
        v.wait(300)
        v.update(**{"track.epoch": 3})
        frame = v.wait(300)
        assert v.error == "" and frame.tracks.shape[0] == E
        sel = v.select(2)
        # a graph has no one seed; the epoch is its generator node's; the code cooks the
        # graph (the whole batch) and names the env
        assert (sel.env, sel.seed, sel.epoch, sel.alone) == (2, None, 3, False)
        assert "'track.epoch': 3" in sel.code() and "index 2" in sel.code()
        assert "seed + 2 (TrackGenerator.config.seed)" in sel.code()
        scope = {"graph": g}
        exec(sel.code(), scope)  # noqa: S102
        xy = scope["result"]["track"]["xy"].numpy().reshape(E, 64, 2)
        assert xy[2].tobytes() == frame.tracks[2].astype(xy.dtype).tobytes()
        # what the code's comment says: the generator's seed + 2 at that epoch, alone
        one = presets.track(generator="polar", num_envs=1, num_points=64, seed=0 + 2)
        alone = one.generate(epoch=3).xy.numpy().reshape(1, 64, 2)[0]
        assert alone.tobytes() == xy[2].tobytes()
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
