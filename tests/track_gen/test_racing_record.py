"""``racing_line`` inside a recording and the outputs a call keeps: a recorded call (widths
from a number, the validity ``track_width`` or a curriculum band) replayed over new tracks
gives the bytes of a fresh call on them; a RacingLine returned outside a recording is not
changed by a later call; the ``racing`` dicts of metrics, sweep and MetricBand refuse keys
that ``racing_line`` does not take."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb.errors import NotCapturableError, ParamsError
from procgen_nb.track_gen import MetricBand, VehicleParams, metrics, presets, racing_line, sweep

VEH = VehicleParams(mu=1.0, v_max=50.0, a_max=5.0, width=1.0)


def _bytes(line):
    return {k: v.tobytes() for k, v in line.numpy().items()}


@pytest.mark.parametrize(
    "widths",
    [{}, {"w_right": 0.02, "w_left": 0.03}],
    ids=["validity-track-width", "numbers"],
)
def test_a_recorded_call_replays_the_bytes_of_a_fresh_call(widths):
    gen = presets.track(num_envs=16, num_points=64, seed=3)
    held = []
    call = lambda: racing_line(gen, vehicle=VEH, scale=100.0, **widths)  # noqa: E731
    rec = gen.result.ctx.record(lambda: held.append(call()))
    before = gen.result.numpy()["xy"].tobytes()
    gen.generate(epoch=7)  # new tracks in the same arrays
    assert gen.result.numpy()["xy"].tobytes() != before
    rec.replay()
    (line,) = held
    got = _bytes(line)
    fresh = call()
    assert fresh.lap_time.data is not line.lap_time.data
    want = _bytes(fresh)
    for name in want:
        assert got[name] == want[name], name
    assert np.isfinite(line.numpy()["lap_time"]).any()
    # copy(): a recorded call's values outlive the next replay over other tracks
    kept = line.copy()
    gen.generate(epoch=8)
    rec.replay()
    assert _bytes(kept) == want
    assert _bytes(line) != want


def test_host_array_widths_are_refused_inside_a_recording():
    gen = presets.track(num_envs=4, num_points=32, seed=3)
    w = np.full((4, 32), 0.02)
    with pytest.raises(NotCapturableError, match=r"racing_line w_left: .*got an \[E, N\] host"):
        gen.result.ctx.record(lambda: racing_line(gen, w, w, VEH, scale=100.0))


def test_a_recorded_curriculum_band_replays_the_bytes_of_a_fresh_band():
    def make():
        gen = presets.track(num_envs=16, num_points=64, seed=3)
        return gen, MetricBand("difficulty", 0.2, 0.5, racing={"vehicle": VEH, "scale": 100.0})

    gen, band = make()
    rec = gen.result.ctx.record(lambda: gen.regenerate(band))
    gen.generate(epoch=5)
    rec.replay()
    ref, ref_band = make()
    ref.generate(epoch=5)
    ref.regenerate(ref_band)
    assert gen.result.numpy()["xy"].tobytes() == ref.result.numpy()["xy"].tobytes()
    np.testing.assert_array_equal(band.outside.numpy(), ref_band.outside.numpy())
    np.testing.assert_array_equal(band.regenerated.numpy(), ref_band.regenerated.numpy())
    assert ref_band.regenerated.numpy().any()  # the band did regenerate some envs


def test_a_held_racing_line_keeps_its_values():
    gen = presets.track(num_envs=8, num_points=64, seed=3)
    a = racing_line(gen, vehicle=VEH, scale=100.0, objective="linearised")
    want = _bytes(a)
    b = racing_line(gen, vehicle=VehicleParams(mu=1.5, width=0.5), scale=100.0)
    c = racing_line(gen.result, 0.02, 0.02, VEH, scale=100.0)
    assert _bytes(a) == want
    lap = {k: x.numpy()["lap_time"] for k, x in (("a", a), ("b", b), ("c", c))}
    ok = np.isfinite(lap["a"])
    assert ok.any() and not np.array_equal(lap["a"][ok], lap["b"][ok])
    copy = a.copy()
    assert copy.xy.data is not a.xy.data and _bytes(copy) == want


@pytest.mark.parametrize(
    "entry",
    ["metrics.compute", "result.metrics", "metrics.table", "sweep", "MetricBand"],
)
def test_an_unknown_racing_key_is_refused_by_name(entry):
    gen = presets.track(num_envs=2, num_points=32, seed=1)
    racing = {"scale": 100.0, "mu": 1.0}
    calls = {
        "metrics.compute": lambda: metrics.compute(gen.result, racing=racing),
        "result.metrics": lambda: gen.result.metrics(racing=racing),
        "metrics.table": lambda: metrics.table(gen.result, racing=racing),
        "sweep": lambda: sweep(gen, {"radius_jitter": [0.1]}, racing=racing, progress=False),
        "MetricBand": lambda: MetricBand("difficulty", 0.1, 0.5, racing=racing),
    }
    label = {"result.metrics": "metrics", "metrics.table": "metrics"}.get(entry, entry)
    label = label.split(".")[0]
    with pytest.raises(
        ParamsError,
        match=rf"{label} racing: expected racing_line keyword arguments "
        r"\(w_right, w_left, vehicle, scale, .*objective, device\), got 'mu'",
    ):
        calls[entry]()


@pytest.mark.parametrize("mask", [lambda m: m["difficulty"] > 0.5, print])
def test_regenerate_refuses_a_function_for_a_mask(mask):
    gen = presets.track(num_envs=4, num_points=32, seed=1)
    before = gen.result.numpy()["xy"].tobytes()
    with pytest.raises(
        ParamsError,
        match=r"regenerate mask: expected a mask \(4 integers or bools\) or a "
        r"curriculum.MetricBand, got a function",
    ):
        gen.regenerate(mask)
    assert gen.result.numpy()["xy"].tobytes() == before
