"""TrackCanvas: what one cook sends to the browser, and the hover metrics against loops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from procgen_nb.ui.canvas import TrackCanvas, env_metrics
from procgen_nb.ui.frame import frame_from


def _circle(r: float, n: int, phase: float = 0.0) -> np.ndarray:
    a = phase + 2 * np.pi * np.arange(n) / n
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=-1)


def _reference(track: np.ndarray, width: float) -> tuple[float, float, float]:
    """Plain loops: closed length, smallest circumradius of consecutive points, and the
    smallest distance between points more than pi*width/2 apart along the track."""
    n = len(track)
    pts = [tuple(map(float, p)) for p in track]
    seg = [math.dist(pts[i], pts[(i + 1) % n]) for i in range(n)]
    length = sum(seg)
    radii = []
    for i in range(n):
        a, b, c = pts[i - 1], pts[i], pts[(i + 1) % n]
        ab, bc, ca = math.dist(a, b), math.dist(b, c), math.dist(c, a)
        cross = abs((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]))
        radii.append(ab * bc * ca / (2 * cross) if cross > 0 else math.inf)
    arc = [sum(seg[:i]) for i in range(n)]
    clear = math.inf
    for i in range(n):
        for j in range(n):
            along = abs(arc[i] - arc[j])
            along = min(along, length - along)
            if along > math.pi * width / 2:
                clear = min(clear, math.dist(pts[i], pts[j]))
    return length, min(radii), clear


@pytest.mark.parametrize("width", [0.05, 0.2])
def test_metrics_match_plain_loops(width):
    rng = np.random.default_rng(3)
    wobbly = _circle(1.0, 48) * (1 + 0.2 * rng.uniform(-1, 1, size=(48, 1)))
    tracks = np.stack([_circle(0.5, 48, 0.3), wobbly])
    got = env_metrics(tracks, width)
    for e in range(2):
        np.testing.assert_allclose(got[e], _reference(tracks[e], width), rtol=1e-9)
    # a circle's points all lie on it: every circumradius is its radius
    assert got[0, 1] == pytest.approx(0.5, rel=1e-9)


def test_one_cook_is_one_message_of_binary_buffers():
    rng = np.random.default_rng(0)
    xy = rng.normal(size=(5, 16, 2))
    frame = frame_from(
        {
            "xy": xy,
            "valid": [1, 0, 1, 1, 0],
            "reason": [0, 4, 0, 0, 32],
            "gates": {"positions": xy[:, :3], "count": [3, 3, 2, 3, 1]},
        }
    )
    canvas = TrackCanvas(max_envs=4)
    sent = []

    class Comm:  # what the kernel's comm would carry to the browser
        kernel = object()
        comm_id = "test"

        def send(self, data=None, buffers=None):
            sent.append((data, buffers))

        def close(self, *args, **kwargs):
            pass

        def on_msg(self, callback):
            pass

    canvas.comm = Comm()
    canvas.show(frame, reason_labels={4: "self-intersecting", 32: "clearance"}, width=0.1)
    # the picture and its counts in one message; the hover's metrics when asked for
    assert len(sent) == 1
    canvas._on_message(canvas, {"type": "metrics", "seq": 0}, [])  # an older picture's
    assert len(sent) == 1
    canvas._on_message(canvas, {"type": "metrics", "seq": 1}, [])
    assert len(sent) == 2
    msg, buffers = sent[0]
    keys = set(msg["state"]) | {p[0] for p in msg["buffer_paths"]}
    assert {"tracks", "valid", "reasons", "gates", "gate_count", "counts", "seq"} <= keys
    # the arrays travel as binary buffers beside the JSON state, not inside it
    assert {"tracks", "valid", "reasons", "gates", "gate_count"} <= {
        p[0] for p in msg["buffer_paths"]
    }
    assert [p[0] for p in sent[1][0]["buffer_paths"]] == ["metrics"]
    assert set(sent[1][0]["state"]) == {"metrics_seq"}  # metrics: a buffer
    np.testing.assert_allclose(
        np.frombuffer(canvas.metrics, "<f4").reshape(5, 3),
        env_metrics(xy.astype(np.float32), 0.1).astype(np.float32),
    )
    assert bytes(buffers[[p[0] for p in msg["buffer_paths"]].index("tracks")]) == (
        xy.astype("<f4").tobytes()
    )
    assert canvas.seq == 1 and canvas.shown == 4 and canvas.envs == 5
    np.testing.assert_array_equal(
        np.frombuffer(canvas.tracks, "<f4").reshape(5, 16, 2), xy.astype(np.float32)
    )
    np.testing.assert_array_equal(np.frombuffer(canvas.reasons, "<i4"), [0, 4, 0, 0, 32])
    np.testing.assert_array_equal(np.frombuffer(canvas.gate_count, "<i4"), [3, 3, 2, 3, 1])
    assert ["valid envs", 3] in canvas.counts
    assert canvas.reason_labels == {"4": "self-intersecting", "32": "clearance"}
    # every synced array is bytes (binary buffers), never a JSON list of numbers
    for name in ("tracks", "valid", "reasons", "metrics", "gates", "gate_count"):
        assert isinstance(getattr(canvas, name), bytes)
    canvas.grey("lobes = 3 did not cook")
    assert canvas.stale and canvas.seq == 1
    canvas.comm = None


def test_a_show_sends_what_changed_and_a_grey_picture_clears():
    rng = np.random.default_rng(1)
    xy = rng.normal(size=(3, 8, 2))
    a, b = frame_from({"xy": xy}), frame_from({"xy": xy * 2.0})  # b: longer
    canvas = TrackCanvas(max_envs=4)
    sent = []

    class Comm:
        kernel = object()
        comm_id = "test"

        def send(self, data=None, buffers=None):
            sent.append(data)

        def close(self, *args, **kwargs):
            pass

        def on_msg(self, callback):
            pass

    def keys(msg):
        return set(msg["state"]) | {p[0] for p in msg["buffer_paths"]}

    canvas.comm = Comm()
    canvas.show(a, width=0.1)
    canvas.show(a, width=0.1)  # the same picture again: its arrays are not sent again
    assert len(sent) == 2 and "tracks" in keys(sent[0])
    assert {"seq", "sent_ms"} <= keys(sent[1]) and not {"tracks", "valid", "envs"} & keys(sent[1])
    canvas.show(b, width=0.2)
    assert {"tracks", "track_width", "counts"} <= keys(sent[2]) and "valid" not in keys(sent[2])
    canvas.grey("did not cook")
    canvas.show(b, width=0.2)
    assert {"stale", "message"} <= keys(sent[-1]) and not canvas.stale and canvas.message == ""
    assert canvas.seq == 4
    canvas.comm = None


def test_a_canvas_shown_twice_is_visible_while_either_view_is():
    canvas = TrackCanvas(max_envs=4)
    told = []
    canvas.on_visibility(told.append)
    assert canvas.visible  # before any front end says otherwise

    def say(view, visible):
        canvas._on_message(canvas, {"type": "visibility", "visible": visible, "view": view}, [])

    say("a", True)
    say("b", True)
    say("b", False)  # the second view scrolled away: the first still shows it
    assert canvas.visible and told == [True, True, True]
    say("a", False)
    assert not canvas.visible and told[-1] is False
    say("b", True)
    assert canvas.visible
    say("b", False)  # its output removed
    say("b", False)  # said twice: nothing else changes
    assert not canvas.visible and told[-2:] == [False, False]
