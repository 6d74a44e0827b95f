"""Issue 21, item 3: a refused update changes nothing (params, buffers, bytes), and the
next good update works as a fresh generator with those values does."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb.errors import GeneratorError, ParamsError
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator
from procgen_nb.track_gen.gates import GateGenConfig, GateGenerator


def _bytes(result) -> bytes:
    return b"".join(
        np.ascontiguousarray(a.numpy()).tobytes()
        for a in (result.xy, result.valid, result.reason, result.crossings, result.turning)
    )


def _cfg(**gp):
    return TrackGenConfig(generator="bezier", num_envs=4, num_points=64, seed=11, **gp)


def test_a_refused_bezier_rebuild_leaves_params_buffers_and_bytes():
    tg = TrackGenerator(_cfg())
    before = _bytes(tg.generate())
    params, config, xy, steps = tg.params, tg.config, tg.result.xy, tg._steps
    with pytest.raises(GeneratorError, match=r"min_corners <= max_corners, got \(20, 10\)"):
        tg.update(generator_params={"min_corners": 20})
    assert tg.params is params and tg.params.min_corners == 5
    assert tg.config is config and tg.config.generator_params.min_corners == 5
    assert tg.result.xy is xy and tg._steps is steps
    res = tg.generate()
    assert res.valid.numpy().all()  # every env valid, as before the refusal
    assert _bytes(res) == before
    # the next good update works, and gives a fresh generator's bytes
    assert tg.update(generator_params={"min_corners": 7}) is True
    fresh = TrackGenerator(_cfg(generator_params={"min_corners": 7}))
    assert _bytes(tg.generate()) == _bytes(fresh.generate())
    # and one more after it (the refusal left nothing that refuses later updates)
    tg.update(generator_params={"max_corners": 12})
    assert tg.params.max_corners == 12 and tg.params.min_corners == 7


def test_a_refused_value_check_changes_nothing():
    tg = TrackGenerator(_cfg())
    before = _bytes(tg.generate())
    with pytest.raises(GeneratorError):
        tg.update(generator_params={"min_corners": -1})
    with pytest.raises(ParamsError):
        tg.update(validity={"no_such_field": 1})
    with pytest.raises(ParamsError):
        tg.update(generator_params=[("min_corners", 6)])
    assert tg.params.min_corners == 5
    assert _bytes(tg.generate()) == before


def test_a_refused_gate_rebuild_leaves_the_gate_generator():
    track = TrackGenerator(TrackGenConfig(num_envs=4, num_points=64, seed=3))
    track.generate()
    g = GateGenerator(GateGenConfig(num_envs=4, generator="arc_length", seed=3), track=track)
    first = g.generate()
    snap = {k: np.array(v.numpy()) for k, v in vars(first).items() if hasattr(v, "numpy")}
    params = g.params
    with pytest.raises(GeneratorError, match="min_count: expected <= max_count"):
        g.update(generator_params={"min_count": g.params.max_count + 1})
    assert g.params is params
    again = g.generate()
    for k, v in snap.items():
        np.testing.assert_array_equal(getattr(again, k).numpy(), v)
    assert g.update(generator_params={"min_count": 2}) is True
    assert g.params.min_count == 2
