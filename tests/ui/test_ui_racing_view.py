"""The view's "racing line" toggle: off by default (no racing line computed), on it sends
each env's racing line, speed and lap time, the arrays ``racing_line`` gives."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import presets, racing_line
from procgen_nb.ui import explore
from procgen_nb.ui.track_target import RACING_TRACK_M

E, N = 6, 64


@pytest.fixture(scope="module")
def polar():
    v = explore("polar", num_envs=E, num_points=N, min_interval=0.0)
    v.wait(300)
    yield v
    v.close()


def _expected(values: dict) -> dict:
    """racing_line on the same tracks made directly with presets.track: a track
    ``track_width`` wide taken as RACING_TRACK_M metres, half the width each side."""
    own = {k: values[k] for k in ("lobes", "radius_jitter", "min_radius")}
    w = values["track_width"]
    gen = presets.track(
        generator="polar",
        generator_params=own,
        validity={"track_width": w},
        num_envs=values["num_envs"],
        num_points=values["num_points"],
        seed=values["seed"],
    )
    res = gen.generate(epoch=values["epoch"])
    scale = RACING_TRACK_M / w
    line = racing_line(res, w_right=w / 2, w_left=w / 2, scale=scale).numpy()
    return {"xy": line["xy"] / scale, "speed": line["speed"], "lap_time": line["lap_time"]}


def _sent(canvas) -> dict:
    e, n = canvas.racing_envs, canvas.racing_points
    return {
        "xy": np.frombuffer(canvas.racing_xy, "<f4").reshape(e, n, 2),
        "speed": np.frombuffer(canvas.racing_speed, "<f4").reshape(e, n),
        "lap_time": np.frombuffer(canvas.lap_time, "<f4").reshape(e),
    }


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls of ``track_gen.racing_line`` (what the view's racing line runs)."""
    import procgen_nb.track_gen as tg

    seen = []
    real = tg.racing_line

    def counted(*a, **kw):
        seen.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(tg, "racing_line", counted)
    return seen


def test_off_by_default_nothing_racing_is_computed_or_sent(polar, calls):
    assert polar.racing_toggle is not None and polar.racing_toggle.value is False
    assert polar.racing_toggle.description == "racing line"
    polar.update(lobes=6)
    polar.wait(120)
    polar.update(lobes=5)
    polar.wait(120)
    c = polar.canvas
    assert (c.racing_on, c.racing_envs, c.racing_xy, c.lap_time) == (False, 0, b"", b"")
    assert calls == []  # the cooks ran no racing line: the latency is the same


def test_on_the_canvas_gets_racing_lines_arrays_then_off_clears_them(polar, calls):
    cooks = polar.cooks
    polar.racing_toggle.value = True  # what a click on the checkbox does
    polar.wait(120)
    assert polar.cooks == cooks + 1 and polar.canvas.racing_on and len(calls) == 1
    want = _expected(polar.value.to_dict())
    got = _sent(polar.canvas)
    assert got["xy"].shape == (E, N, 2)
    for k in ("xy", "speed", "lap_time"):
        np.testing.assert_array_equal(got[k], want[k].astype(np.float32), err_msg=k)
    assert np.all(np.isfinite(got["lap_time"]) | ~polar.frame.valid.astype(bool))
    # a new value cooks its own racing line
    polar.update(lobes=7, seed=2)
    polar.wait(120)
    want = _expected(polar.value.to_dict())
    np.testing.assert_array_equal(_sent(polar.canvas)["xy"], want["xy"].astype(np.float32))
    np.testing.assert_array_equal(_sent(polar.canvas)["lap_time"], want["lap_time"])
    cooks = polar.cooks
    polar.racing_toggle.value = False
    polar.wait(60)
    c = polar.canvas
    assert polar.cooks == cooks  # off: the line goes, nothing cooks
    assert (c.racing_on, c.racing_envs, c.racing_xy, c.racing_speed) == (False, 0, b"", b"")
    polar.update(lobes=5, seed=0)
    polar.wait(120)
    assert c.racing_xy == b"" and len(calls) == 2  # the two cooks while on, none since


def test_a_racing_line_that_fails_is_said_and_the_picture_stays(polar, monkeypatch):
    def refuse(params):
        raise ParamsError("racing_line widths: expected w_right + w_left >= 2 m, got 1 m")

    monkeypatch.setattr(polar.target, "racing", refuse)
    polar.racing_toggle.value = True
    try:
        polar.wait(120)
        assert polar.error == "" and polar.frame is not None
        assert "racing line: racing_line widths: expected" in polar.status.value
        assert polar.canvas.racing_xy == b""
    finally:
        polar.racing_toggle.value = False
        polar.wait(60)


def test_a_course_draws_the_racing_line_of_its_centerlines():
    from procgen_nb.track_gen.gates import build

    v = explore("arc_length", num_envs=4, num_points=96, min_interval=0.0)
    try:
        v.wait(300)
        v.racing_toggle.value = True
        v.wait(300)
        w = v.value.to_dict()["course.track_width"]
        course = build(4, gate_generator="arc_length", num_points=96, track_width=w)
        scale = RACING_TRACK_M / w
        line = racing_line(course.track.result, w_right=w / 2, w_left=w / 2, scale=scale)
        want = line.numpy()
        got = _sent(v.canvas)
        np.testing.assert_array_equal(got["xy"], (want["xy"] / scale).astype(np.float32))
        np.testing.assert_array_equal(got["lap_time"], want["lap_time"])
    finally:
        v.close()


def test_racing_arrays_take_a_results_own_widths():
    """A result with per-point widths (``width_left`` / ``width_right``) drives between
    them; without, half the track width each side (by hand: the two differ)."""
    from procgen_nb.ui.track_target import RACING_WIDTH, racing_arrays

    res = presets.track("polar", num_envs=3, num_points=64, width={"left": 0.04}).generate()
    got = racing_arrays(res, 0.05)
    scale = RACING_TRACK_M / 0.05
    want = racing_line(res, scale=scale).numpy()  # its own widths
    np.testing.assert_array_equal(got["xy"], (want["xy"] / scale).astype(np.float32))
    np.testing.assert_array_equal(got["lap_time"], want["lap_time"])
    assert got["scale"] == scale
    plain = presets.track("polar", num_envs=3, num_points=64).generate()
    got = racing_arrays(plain, None)  # no width given: RACING_WIDTH
    scale = RACING_TRACK_M / RACING_WIDTH
    half = RACING_WIDTH / 2
    want = racing_line(plain, w_right=half, w_left=half, scale=scale).numpy()
    np.testing.assert_array_equal(got["speed"], want["speed"])
