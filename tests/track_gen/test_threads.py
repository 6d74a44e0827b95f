"""PROCGEN_NB_THREADS: a call split across worker threads gives the bytes of one thread."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import TrackGenConfig, TrackGenerator, _threads, pipeline


def _arrays(res) -> dict[str, np.ndarray]:
    out = dict(res.numpy())
    out.pop("attributes", None)
    return {k: np.asarray(v) for k, v in out.items()}


def _same(a, b) -> None:
    ra, rb = _arrays(a), _arrays(b)
    assert ra.keys() == rb.keys()
    for k in ra:
        assert ra[k].tobytes() == rb[k].tobytes(), k


def _pair(monkeypatch, threads: int, **cfg):
    monkeypatch.setattr(_threads, "MIN_ENVS_PER_THREAD", 8)
    monkeypatch.setenv("PROCGEN_NB_THREADS", "1")
    one = TrackGenerator(TrackGenConfig(device="cpu", **cfg))
    monkeypatch.setenv("PROCGEN_NB_THREADS", str(threads))
    split = TrackGenerator(TrackGenConfig(device="cpu", **cfg))
    assert len(split._parts) == threads and not one._parts
    return one, split


@pytest.mark.parametrize("name", ["polar", "voronoi", "hull"])
@pytest.mark.parametrize("threads", [2, 3])
def test_split_calls_give_the_bytes_of_one_thread(monkeypatch, name, threads):
    one, split = _pair(monkeypatch, threads, generator=name, num_envs=50, num_points=64, seed=9)
    _same(one.generate(), split.generate())
    _same(one.generate(epoch=4), split.generate(epoch=4))
    _same(one.regenerate(), split.regenerate())
    mask = np.arange(50) % 3 == 0
    _same(one.regenerate(mask), split.regenerate(mask))
    assert one.result.fingerprint() == split.result.fingerprint()
    assert one.result.num_valid() == split.result.num_valid()
    np.testing.assert_array_equal(one.seeds.numpy(), split.seeds.numpy())


def test_split_follows_updates_and_z_profile(monkeypatch):
    one, split = _pair(
        monkeypatch, 2, generator="polar", num_envs=40, num_points=32, z_profile=True
    )
    _same(one.generate(), split.generate())
    for tg in (one, split):
        tg.update(validity={"track_width": 0.0})
    _same(one.generate(), split.generate())  # the z attribute among the arrays compared
    assert "z" in split.result.numpy()


def test_small_calls_and_bad_values(monkeypatch):
    monkeypatch.setenv("PROCGEN_NB_THREADS", "4")
    tg = TrackGenerator(TrackGenConfig(generator="polar", num_envs=16, num_points=32))
    assert tg._parts == []  # fewer envs than MIN_ENVS_PER_THREAD per thread: one thread
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("PROCGEN_NB_THREADS", bad)
        with pytest.raises(ParamsError, match="PROCGEN_NB_THREADS"):
            pipeline.threads_wanted()
