"""``TrackCanvas``: envs, gates and counts drawn in the browser (an anywidget, Canvas 2D).

Its front end is ``widgets/track_canvas/track_canvas.js``. One cook is one message: the
centerlines, validity, per-env reasons, gates and point clouds travel as binary buffers
(float32 / int32 bytes, no PNG, no JSON lists), the counts beside them in the same state
update (``hold_sync``). The per-env metrics the hover shows are measured when the browser
first asks for a picture's (the first hover after it arrives): the picture never waits for
them. The front end sends that request, the env a person clicks (``on_select``) and whether
the picture can be seen; it sends no control value. The front end draws a grid of small multiples at the device
pixel ratio (env index, valid/invalid colour, start and direction, numbered gates), shows
an env's metrics on hover, draws one env large on click (drag pans, the wheel zooms,
Escape goes back), and sizes itself to its container. It sends no value back to the kernel.

``env_metrics`` computes what the hover shows with NumPy: length, smallest turn radius
(circumradius of three consecutive points) and clearance (smallest distance between two
points more than ``pi * width / 2`` apart along the track, the validity stage's rule).
"""

from __future__ import annotations

import base64
import math
import time
from typing import Any

import anywidget
import numpy as np
import traitlets

from .clipboard import _asset
from .frame import Frame, frame_from

#: used for the clearance when the target has no track width.
DEFAULT_WIDTH = 0.1
#: the most points per env the clearance is measured on (every k-th point past that).
_CLEARANCE_POINTS = 128


def _f32(a: Any) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32)).tobytes()


def _i32(a: Any) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.int32)).tobytes()


def env_metrics(tracks: np.ndarray, width: float = DEFAULT_WIDTH) -> np.ndarray:
    """Returns ``[E, 3]``: length, smallest turn radius and clearance of closed tracks.

    Args:
        tracks: ``[E, N, 2]`` closed centerlines (the last point joins the first).
        width: the track width of the clearance rule (pairs more than ``pi * width / 2``
            apart along the track count).

    NaN stands for a metric an env does not have (fewer than 3 finite points, no pair far
    enough apart along the track).
    """
    t = np.asarray(tracks, dtype=np.float64)
    if t.ndim != 3 or t.shape[1] == 0:
        return np.zeros((0 if t.ndim != 3 else t.shape[0], 3))
    e, n = t.shape[:2]
    x, y = t[..., 0], t[..., 1]
    nx, ny = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    seg = np.sqrt((nx - x) ** 2 + (ny - y) ** 2)
    length = np.nansum(seg, axis=1)
    out = np.full((e, 3), np.nan)
    out[:, 0] = length
    if n >= 3:
        px, py = np.roll(x, 1, axis=1), np.roll(y, 1, axis=1)
        a = np.sqrt((x - px) ** 2 + (y - py) ** 2)
        c = np.sqrt((nx - px) ** 2 + (ny - py) ** 2)
        cross = np.abs((x - px) * (ny - y) - (y - py) * (nx - x))
        with np.errstate(divide="ignore", invalid="ignore"):
            radius = np.where(cross > 0, a * seg * c / (2.0 * cross), np.inf)
        radius = np.where(np.isfinite(x) & np.isfinite(y), radius, np.inf)
        out[:, 1] = radius.min(axis=1)
        out[~np.isfinite(out[:, 1]), 1] = np.nan
    stride = max(1, math.ceil(n / _CLEARANCE_POINTS))
    idx = np.arange(0, n, stride)
    arc = np.concatenate([np.zeros((e, 1)), np.cumsum(seg, axis=1)[:, :-1]], axis=1)[:, idx]
    along = np.abs(arc[:, :, None] - arc[:, None, :])
    along = np.minimum(along, length[:, None, None] - along)
    sx, sy = x[:, idx], y[:, idx]
    dx = sx[:, :, None] - sx[:, None, :]
    dy = sy[:, :, None] - sy[:, None, :]
    d2 = dx * dx + dy * dy
    d2[~(along > math.pi * width / 2) | ~np.isfinite(d2)] = np.inf
    clear = np.sqrt(d2.reshape(e, -1).min(axis=1)) if d2.size else np.full(e, np.inf)
    out[:, 2] = np.where(np.isfinite(clear), clear, np.nan)
    return out


class TrackCanvas(anywidget.AnyWidget):
    """The browser-side picture of one cook: a grid of envs, gates, hover metrics, counts.

    Attributes (synced; the arrays are little-endian float32/int32 bytes):
        envs, points, slots: E, N and gate slots per env of the arrays below.
        shown: how many envs the grid draws (the first ``shown``; a note says when fewer
            than ``envs``).
        tracks: ``[E, N, 2]`` float32. valid: ``[E]`` int32. reasons: ``[E]`` int32 bits.
        metrics: ``[E, 3]`` float32 (length, smallest turn radius, clearance), sent when
            the browser asks (``send_metrics``); metrics_seq: the ``seq`` they belong to.
        gates: ``[E, G, 2]`` float32. gate_count: ``[E]`` int32. gate_heading: ``[E, G]``
            float32 or empty.
        cloud: ``[M, 2]`` float32 point clouds one after the other; cloud_sizes ``[K]`` int32;
            cloud_labels their names.
        counts: ``[[label, value], ...]`` in order (the table beside the grid).
        reason_labels: bit -> text of the reasons.
        seq: the number of the cook drawn (the front end writes it to ``data-seq`` once
            drawn). stale: True after a failed cook (the picture greys). message: what the
            overlay says while stale. cook_ms, sent_ms: the cook's time and when it was
            sent (ms since the epoch); timing: when the kernel got the edit and started
            and ended the cook; for the latency split.
        racing_on: whether the racing line is drawn (the view's "racing line" toggle).
        racing_envs, racing_points: E and N of the racing line below (0: none).
        racing_xy: ``[E, N, 2]`` float32 line points (world units), racing_speed ``[E, N]``
            float32 m/s (the line's colour), lap_time ``[E]`` float32 s (the hover).
    """

    _esm = _asset("track_canvas/track_canvas.js")
    _css = _asset("track_canvas/track_canvas.css")
    envs = traitlets.Int(0).tag(sync=True)
    points = traitlets.Int(0).tag(sync=True)
    slots = traitlets.Int(0).tag(sync=True)
    shown = traitlets.Int(0).tag(sync=True)
    tracks = traitlets.Bytes(b"").tag(sync=True)
    valid = traitlets.Bytes(b"").tag(sync=True)
    reasons = traitlets.Bytes(b"").tag(sync=True)
    metrics = traitlets.Bytes(b"").tag(sync=True)
    gates = traitlets.Bytes(b"").tag(sync=True)
    gate_count = traitlets.Bytes(b"").tag(sync=True)
    gate_heading = traitlets.Bytes(b"").tag(sync=True)
    cloud = traitlets.Bytes(b"").tag(sync=True)
    cloud_sizes = traitlets.Bytes(b"").tag(sync=True)
    cloud_labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    counts = traitlets.List().tag(sync=True)
    reason_labels = traitlets.Dict().tag(sync=True)
    seq = traitlets.Int(0).tag(sync=True)
    stale = traitlets.Bool(False).tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    cook_ms = traitlets.Float(0.0).tag(sync=True)
    sent_ms = traitlets.Float(0.0).tag(sync=True)
    track_width = traitlets.Float(0.0).tag(sync=True)
    timing = traitlets.Dict().tag(sync=True)
    metrics_seq = traitlets.Int(0).tag(sync=True)
    pin_envs = traitlets.Int(0).tag(sync=True)
    pin_points = traitlets.Int(0).tag(sync=True)
    pin_tracks = traitlets.Bytes(b"").tag(sync=True)
    pin_counts = traitlets.List().tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    racing_on = traitlets.Bool(False).tag(sync=True)
    racing_envs = traitlets.Int(0).tag(sync=True)
    racing_points = traitlets.Int(0).tag(sync=True)
    racing_xy = traitlets.Bytes(b"").tag(sync=True)
    racing_speed = traitlets.Bytes(b"").tag(sync=True)
    lap_time = traitlets.Bytes(b"").tag(sync=True)

    def __init__(self, *, max_envs: int = 64, **kwargs: Any):
        super().__init__(**kwargs)
        self.max_envs = max_envs
        self.visible = True  # until the front end says the picture cannot be seen
        self._visibility: list[Any] = []
        self._select: list[Any] = []
        self._seen_by: set[Any] = set()  # the front-end views that report it can be seen
        self.on_msg(self._on_message)

    def on_visibility(self, callback: Any) -> None:
        """Calls ``callback(visible)`` when the front end reports the picture shown or
        hidden (scrolled out of view, another tab, its output removed); displayed more
        than once, the picture is visible while any of its views is."""
        self._visibility.append(callback)

    def on_select(self, callback: Any) -> None:
        """Calls ``callback(env)`` when a person clicks env ``env`` in the browser."""
        self._select.append(callback)

    def pin(self, frame: Frame | None) -> None:
        """Draws ``frame``'s tracks faintly behind the next pictures, its counts beside
        theirs (None: none)."""
        with self.hold_sync():
            if frame is None or frame.tracks is None:
                self.pin_envs, self.pin_points, self.pin_tracks = 0, 0, b""
            else:
                t = np.asarray(frame.tracks[..., :2], dtype=np.float32)
                self.pin_envs, self.pin_points, self.pin_tracks = t.shape[0], t.shape[1], _f32(t)
            self.pin_counts = (
                [] if frame is None else [[k, _plain(v)] for k, v in frame.counts.items()]
            )

    def race(self, racing: dict[str, Any] | None) -> None:
        """Draws ``racing`` (as ``show`` takes it) over the picture shown, or no racing line
        (None), without a new picture."""
        with self.hold_sync():
            for k, v in _racing_state(racing).items():
                if not _same(getattr(self, k), v):
                    setattr(self, k, v)
            self.racing_on = racing is not None

    def ungrey(self) -> None:
        """Shows the picture as current again (what greyed it is cleared)."""
        with self.hold_sync():
            self.stale = False
            self.message = ""

    def __repr__(self) -> str:
        return f"TrackCanvas(envs={self.envs}, shown={self.shown})"

    def show(
        self,
        frame: Frame,
        *,
        reason_labels: dict[int, str] | None = None,
        width: float | None = None,
        timing: dict[str, float] | None = None,
        racing: dict[str, Any] | None = None,
    ) -> None:
        """Sends ``frame`` to the browser in one message (and clears ``stale``).

        ``timing``: when the kernel got the edit and started and ended the cook (ms since
        the epoch), carried to the browser for the latency split. ``racing``: the racing
        line drawn over the tracks (``xy [E, N, 2]``, ``speed [E, N]``, ``lap_time [E]``,
        what ``TrackTarget.racing`` returns), None: none (the same message).
        """
        self._frame = frame
        state: dict[str, Any] = {}
        metrics = None
        if frame.tracks is not None:
            t = np.asarray(frame.tracks[..., :2], dtype=np.float32)
            e, n = t.shape[:2]
            valid = frame.valid if frame.valid is not None else np.ones(e)
            reasons = frame.reasons if frame.reasons is not None else np.zeros(e)
            w = width if width and width > 0 else DEFAULT_WIDTH
            state.update(envs=e, points=n, tracks=_f32(t), valid=_i32(valid), reasons=_i32(reasons))
            metrics = lambda: env_metrics(t, w)  # noqa: E731
        else:
            e = len(frame.gates.count) if frame.gates is not None else 0
            state.update(
                envs=e, points=0, tracks=b"", valid=_i32(np.ones(e)), reasons=_i32(np.zeros(e))
            )
        if frame.gates is not None:
            g = frame.gates
            pos = np.asarray(g.positions[..., :2], dtype=np.float32)
            state.update(
                slots=pos.shape[1],
                gates=_f32(pos),
                gate_count=_i32(np.minimum(g.count, pos.shape[1])),
                gate_heading=b"" if g.heading is None else _f32(g.heading),
            )
        else:
            state.update(slots=0, gates=b"", gate_count=b"", gate_heading=b"")
        labels, sizes, chunks = [], [], []
        for k, v in frame.points.items():
            labels.append(k)
            sizes.append(len(v))
            chunks.append(np.asarray(v, dtype=np.float32).reshape(-1, 2))
        state.update(
            cloud=_f32(np.concatenate(chunks)) if chunks else b"",
            cloud_sizes=_i32(sizes),
            cloud_labels=labels,
        )
        state.update(_racing_state(racing))
        state["shown"] = min(state["envs"], self.max_envs)
        state["counts"] = [[k, _plain(v)] for k, v in frame.counts.items()]
        state["reason_labels"] = {str(b): t for b, t in (reason_labels or {}).items()}
        state["track_width"] = float(width or 0.0)
        state.update(
            stale=False,
            message="",
            cook_ms=float(frame.elapsed_ms),
            timing=dict(timing or {}),
            sent_ms=time.time() * 1e3,
            seq=self.seq + 1,
        )
        with self.hold_sync():
            for k, v in state.items():
                # a value equal to the one held sends nothing: skip its validation
                if not _same(getattr(self, k), v):
                    setattr(self, k, v)
        # the hover's metrics are measured when the browser first asks for this picture's
        # (a hover): the picture and its counts never wait for them
        self._pending_metrics = (state["seq"], metrics, state["envs"])

    def send_metrics(self, seq: int | None = None) -> None:
        """Measures the metrics of the picture ``seq`` (the last one when None) and sends
        them (what a hover in the browser asks for); nothing when a newer picture came."""
        pending = self.__dict__.get("_pending_metrics")
        if pending is None or (seq is not None and seq != pending[0]):
            return
        seq, measure, envs = pending
        m = measure() if measure is not None else np.full((envs, 3), np.nan)
        with self.hold_sync():
            self.metrics = _f32(m)
            self.metrics_seq = seq

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "metrics":
            seq = content.get("seq")
            self.send_metrics(seq if isinstance(seq, int) else None)
        elif isinstance(content, dict) and content.get("type") == "select":
            env = content.get("env")
            if isinstance(env, int) and not isinstance(env, bool):
                for callback in list(self._select):
                    callback(env)
        elif isinstance(content, dict) and content.get("type") == "visibility":
            # one widget can be displayed several times: seen while any of its views is
            view = content.get("view")
            if content.get("visible"):
                self._seen_by.add(view if isinstance(view, str) else None)
            else:
                self._seen_by.discard(view if isinstance(view, str) else None)
            self.visible = bool(self._seen_by)
            for callback in list(self._visibility):
                callback(self.visible)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # the live canvas, and a PNG of what it shows for where no kernel runs
        bundle = super()._repr_mimebundle_(**kwargs)
        frame = self.__dict__.get("_frame")
        if bundle is not None and frame is not None:
            from . import _render

            data = bundle[0] if isinstance(bundle, tuple) else bundle
            png = _render.tracks_png(frame, max_envs=self.max_envs)
            data["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle

    def grey(self, message: str) -> None:
        """Greys the picture shown and overlays ``message`` (a failed cook)."""
        with self.hold_sync():
            self.stale = True
            self.message = message


def show(result: Any = None, *, max_envs: int = 64, **arrays: Any) -> Any:
    """Returns the tracks (and gates) drawn in the browser: a ``TrackCanvas`` (hover an env
    for its metrics, click to enlarge), carrying a PNG drawn with ``procgen_nb.plot`` for where no
    kernel runs (a saved notebook, nbconvert, a static HTML export).

    Args:
        result: a track result, a course's ``numpy()`` or a mapping with ``xy`` (and
            ``valid``, ``reason``, ``gates``, ``counts``); or give them as keywords.
        max_envs: draw at most this many envs (the view says when fewer than given).

    Raises:
        ParamsError: when the shapes disagree.
    """
    frame = frame_from(result if result is not None else arrays)
    canvas = TrackCanvas(max_envs=max_envs)
    canvas.show(frame)
    return canvas


def _racing_state(racing: dict[str, Any] | None) -> dict[str, Any]:
    """The canvas state of a racing line (empty buffers for None)."""
    if racing is None:
        return dict(racing_envs=0, racing_points=0, racing_xy=b"", racing_speed=b"", lap_time=b"")
    xy = np.asarray(racing["xy"], dtype=np.float32)
    e, n = xy.shape[:2]
    return dict(
        racing_envs=e,
        racing_points=n,
        racing_xy=_f32(xy),
        racing_speed=_f32(np.asarray(racing["speed"]).reshape(e, n)),
        lap_time=_f32(np.asarray(racing["lap_time"]).reshape(e)),
    )


def _same(old: Any, new: Any) -> bool:
    """Whether setting trait value ``new`` over ``old`` would notify nothing: equal plain
    values of one type (bytes, str, int, float, bool; a float NaN never is)."""
    return type(old) is type(new) and isinstance(new, bytes | str | int | float) and old == new


def _plain(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v
