"""The track view's cook: its frame built directly (track_frame) equals frame_from's, its
readbacks are copies counted one by one, and a cook of the same values reuses the generator."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb import _traffic
from procgen_nb.errors import NotCapturableError, ParamsError
from procgen_nb.ui import explore, frame_from
from procgen_nb.ui.frame import track_frame
from procgen_nb.ui.track_target import _Drawn, _read_result


def _same(a, b):
    assert list(a.counts.items()) == list(b.counts.items())
    for k in ("tracks", "valid", "reasons"):
        x, y = getattr(a, k), getattr(b, k)
        assert x.dtype == y.dtype and x.shape == y.shape, k
        np.testing.assert_array_equal(x, y)
    assert a.gates is None and b.gates is None and a.points == b.points == {}
    assert a.fingerprint == b.fingerprint and len(a.hashed) == len(b.hashed) == 2
    assert a.report == b.report and a.elapsed_ms == b.elapsed_ms and a.traffic == b.traffic


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nan", [False, True])
def test_track_frame_equals_frame_from(dtype, nan):
    rng = np.random.default_rng(7)
    xy = (rng.standard_normal((13, 57, 2)) * 40).astype(dtype)
    if nan:
        xy[3, 9] = np.nan
    valid = rng.integers(0, 2, 13).astype(np.int32)
    reason = (rng.integers(0, 64, 13) * (1 - valid)).astype(np.int32)
    traffic = _traffic.Traffic(readbacks=3, waits=3)
    kw = {"elapsed_ms": 1.5, "traffic": traffic}
    got = track_frame(xy, valid, reason, **kw)
    want = frame_from({"xy": xy, "valid": valid, "reason": reason}, num_envs=13, **kw)
    _same(got, want)
    assert got.valid is not valid and got.reasons is not reason  # int64 copies


def test_track_frame_refuses_other_forms():
    xy = np.zeros((4, 8, 2), np.float32)
    flags = np.zeros(4, np.int32)
    for bad in (xy.reshape(-1, 2), xy[:, ::2], xy.astype(np.int32), np.zeros((4, 8, 3))):
        with pytest.raises(ParamsError, match="track_frame: expected"):
            track_frame(bad, flags, flags)
    with pytest.raises(ParamsError, match="track_frame: expected"):
        track_frame(xy, flags[:3], flags)


@pytest.fixture(scope="module")
def view():
    v = explore("polar", num_envs=7, num_points=48, min_interval=0.0)
    v.wait(300)
    yield v
    v.close()


def test_cook_counts_three_readbacks_and_waits(view):
    target, params = view.target, view.value
    before = _traffic.traffic()
    frame = target.cook(params)
    spent = _traffic.traffic() - before
    assert [r.name for r in frame.report] == ["polar: reused", "generate", "read back for the view"]
    read = frame.report[2]
    assert (read.readbacks, read.waits, read.launches, read.uploads) == (3, 3, 0, 0)
    assert frame.traffic.readbacks == spent.readbacks == 3
    assert frame.traffic.waits == spent.waits == 3
    assert frame.traffic.launches == spent.launches == frame.report[1].launches > 0


def test_the_view_reads_back_through_ctx_readback(view):
    target, params = view.target, view.value
    target.cook(params)
    res = target._gen.generate()
    arrays = (res.xy, res.valid, res.reason)
    with _traffic.collect() as slow:
        want = [res.ctx.readback(a) for a in arrays]  # one array at a time
    with _traffic.collect() as fast:
        got = _read_result(res)
    assert isinstance(got, _Drawn)
    assert slow == fast and fast.readbacks == 3 and fast.waits == 3
    want[0] = want[0].reshape(got.xy.shape)
    for g, w, arr in zip(got, want, arrays, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
        assert not np.shares_memory(g, arr.numpy())  # a copy, not the device's memory


def test_frames_keep_their_tracks_across_cooks(view):
    target, params = view.target, view.value
    a = target.cook(params)
    tracks, fp = a.tracks.copy(), a.fingerprint
    b = target.cook(params.replace(epoch=params.epoch + 1))
    assert b.report[0].name == "polar: reused" and not np.array_equal(b.tracks, tracks)
    np.testing.assert_array_equal(a.tracks, tracks)
    assert a.fingerprint == fp
    c = target.cook(params.replace(radius_jitter=round(params.radius_jitter * 0.5, 4)))
    assert c.report[0].name == "polar: updated"
    d = target.cook(params)  # back: an update again, the tracks of a
    assert d.report[0].name == "polar: updated"
    np.testing.assert_array_equal(d.tracks, tracks)
    e = target.cook(type(params)(**params.to_dict()))  # equal values, another object
    assert e.report[0].name == "polar: reused"
    np.testing.assert_array_equal(e.tracks, tracks)


def test_the_view_read_is_refused_where_ctx_readback_refuses(view):
    target = view.target
    target.cook(view.value)
    res = target._gen.generate()
    with res.ctx.strict():
        with pytest.raises(NotCapturableError, match="readback"):
            _read_result(res)


def test_a_drawn_result_of_another_form_goes_through_frame_from(view, monkeypatch):
    from procgen_nb.ui import track_target

    target, params = view.target, view.value
    want = target.cook(params)
    real = track_target._read_result

    def flat(result):  # xy as [E*N, 2]: track_frame refuses it
        d = real(result)
        return _Drawn(d.xy.reshape(-1, 2), d.valid, d.reason)

    monkeypatch.setattr(track_target, "_read_result", flat)
    got = target.cook(params)
    assert list(got.counts.items()) == list(want.counts.items())
    np.testing.assert_array_equal(got.tracks, want.tracks)
    np.testing.assert_array_equal(got.reasons, want.reasons)
    assert got.fingerprint == want.fingerprint
