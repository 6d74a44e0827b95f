"""frame_from / read_outputs / report_rows: results of any shape read into a Frame."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from procgen_nb import Column, Traffic
from procgen_nb.errors import ParamsError
from procgen_nb.ui import frame_from, read_outputs, report_rows


def _loops(e: int, n: int) -> np.ndarray:
    ang = 2 * np.pi * np.arange(n) / n
    r = 1.0 + np.arange(e)[:, None]
    return np.stack([r * np.cos(ang), r * np.sin(ang)], axis=-1)


def test_flat_xy_with_num_envs_and_lengths_against_numpy():
    xy = _loops(3, 50)
    frame = frame_from({"xy": xy.reshape(-1, 2)}, num_envs=3)
    assert frame.tracks.shape == (3, 50, 2)
    assert frame.counts["envs"] == 3 and frame.counts["valid envs"] == 3
    # polygon perimeter of a regular 50-gon of radius r, by hand
    per = 50 * 2 * np.sin(np.pi / 50) * (1.0 + np.arange(3))
    assert frame.counts["mean length"] == pytest.approx(per.mean(), abs=1e-4)
    assert len(frame.fingerprint) == 12


def test_warp_arrays_and_columns_are_read():
    xy = _loops(2, 8).astype(np.float32)
    arr = wp.array(xy.reshape(-1, 2), dtype=wp.vec2f, device="cpu")
    valid = Column(wp.array([1, 0], dtype=wp.int32, device="cpu"))
    frame = frame_from({"centerline": arr, "valid": valid})
    np.testing.assert_array_equal(frame.tracks, xy)
    assert frame.counts["valid envs"] == 1
    assert frame_from({"xy": xy, "valid": [1, 0]}).fingerprint == frame.fingerprint


def test_shapes_that_disagree_are_refused():
    with pytest.raises(ParamsError, match="valid: expected 2 flags, got 3"):
        frame_from({"xy": _loops(2, 8), "valid": [1, 1, 1]})
    with pytest.raises(ParamsError, match="xy: expected a multiple of 3 points, got 16"):
        frame_from({"xy": np.zeros((16, 2))}, num_envs=3)
    with pytest.raises(ParamsError, match=r"counts\['x'\]: expected a number"):
        frame_from({"counts": {"x": "many"}})
    with pytest.raises(ParamsError, match="gates: expected positions and count"):
        frame_from({"gates": {"count": [1]}})


def test_gates_flat_with_heading_and_order():
    pos = np.arange(2 * 3 * 3, dtype=float).reshape(6, 3)
    g = {"positions": pos, "count": [3, 2], "heading": np.zeros(6), "order": [2, 1, 0, 0, 1, 2]}
    frame = frame_from({"gates": g})
    assert frame.gates.positions.shape == (2, 3, 3)
    assert frame.gates.order.tolist() == [[2, 1, 0], [0, 1, 2]]
    assert frame.counts == {
        "gates per env (mean)": 2.5,
        "gates per env (min)": 2,
        "gates per env (max)": 3,
    }
    assert frame.tracks is None and frame.fingerprint


def test_read_outputs_prefers_the_last_output_with_valid():
    xy = Column(wp.array(_loops(2, 4).reshape(-1, 2).astype(np.float32), dtype=wp.vec2f))
    valid = Column(wp.array([1, 1], dtype=wp.int32))
    total = Column(wp.array([7], dtype=wp.int32))
    outputs = {
        "raw": {"xy": xy},
        "checked": {"xy": xy, "valid": valid},
        "stats": {"total": total, "n": 5, "flag": True},
    }
    tracks, points, counts = read_outputs(outputs)
    assert tracks is outputs["checked"]
    assert set(points) == {"raw.xy"}
    assert counts == {"raw.xy": 8, "stats.total": 7, "stats.n": 5}


def test_report_rows_from_entries_and_objects():
    class Entry:
        def __init__(self, name, reused):
            self.name, self.reused, self.time_ms = name, reused, 1.5
            self.launches, self.readbacks, self.builds = 3, 1, 0

    class Report:
        nodes = [Entry("a", False), Entry("b", True)]

    rows = report_rows(Report())
    assert [(r.name, r.reused, r.launches, r.readbacks) for r in rows] == [
        ("a", False, 3, 1),
        ("b", True, 3, 1),
    ]
    rows = report_rows([{"name": "x", "time_ms": 2.0, "launches": 4}])
    assert rows[0].name == "x" and rows[0].launches == 4 and rows[0].reused is None
    assert report_rows(None) == () and report_rows(object()) == ()
    assert frame_from({}).traffic == Traffic()


def test_lengths_skip_nan_segments_and_keep_float32_tracks():
    xy = _loops(2, 40).astype(np.float32)
    xy[1, 5] = np.nan  # the two segments touching point 5 are skipped
    frame = frame_from({"xy": xy})
    assert frame.tracks.dtype == np.float32
    closed = np.concatenate([xy, xy[:, :1]], axis=1).astype(np.float64)
    seg = np.sqrt((np.diff(closed, axis=1) ** 2).sum(-1))
    want = np.mean([np.nansum(s) for s in seg])
    assert frame.counts["mean length"] == pytest.approx(want, abs=1e-4)


def test_reason_counts_against_a_loop_over_envs():
    from procgen_nb.ui.track_target import reason_counts

    rng = np.random.default_rng(3)
    reason = rng.integers(0, 2**7, size=97).astype(np.int32)  # bit 64 is not asked for
    labels = {1: "a", 2: "b", 4: "c", 8: "d", 16: "e", 32: "f"}
    want = {f"x {t}": sum(1 for r in reason.tolist() if r & b) for b, t in labels.items()}
    assert reason_counts(reason, labels, "x ") == want
    far = {1: "low", 1 << 20: "high"}  # bits far apart: the comparison path
    words = np.array([1, 1 << 20, (1 << 20) | 1, 0])
    assert reason_counts(words, far, "") == {"low": 2, "high": 2}
