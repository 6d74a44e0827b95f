"""What one cook produced, read to the CPU and ready to draw: tracks, gates, counts, report.

``frame_from(result)`` reads the fields a result states by name (``xy`` or ``centerline``,
``valid``, ``gates``, ``counts``, ``report``) from an object or a mapping, so a track
generator's result, a graph's outputs and a plain dict all draw the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from .._traffic import Traffic
from ..columns import Column, LiveCount
from ..errors import ParamsError
from ..launch import default_context
from ..plot import as_points

_XY_NAMES = ("xy", "centerline", "tracks")
_GATE_POS_NAMES = ("positions", "position", "xy")
_GATE_COUNT_NAMES = ("count", "counts", "num_gates")


@dataclasses.dataclass(frozen=True, eq=False)
class Gates:
    """Gates read to the CPU.

    Attributes:
        positions: ``[E, G, 2|3]`` gate positions (slots past ``count`` may hold NaN).
        count: ``[E]`` the real gate count of each env.
        heading: ``[E, G]`` headings in radians, or None.
        order: ``[E, G]`` visiting order, or None (slot order).
    """

    positions: np.ndarray
    count: np.ndarray
    heading: np.ndarray | None = None
    order: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class ReportRow:
    """One line of a cook report: a node or stage and what its cook cost."""

    name: str
    time_ms: float = 0.0
    launches: int = 0
    readbacks: int = 0
    builds: int = 0
    uploads: int = 0
    waits: int = 0
    reused: bool | None = None
    mode: str = ""


@dataclasses.dataclass(frozen=True, eq=False)
class Frame:
    """One cook, on the CPU.

    Attributes:
        tracks: ``[E, N, 2]`` centerlines, or None when the cook made none.
        valid: ``[E]`` int flags, or None.
        gates: the gates, or None.
        points: label -> ``[M, 2]`` point clouds (a graph's vector columns).
        counts: label -> number (valid envs, gates per env, points kept by a stage, ...).
        fingerprint: 12 hex digits of a hash of the tracks and gates ("" when none),
            computed when first read (a cook never waits for it).
        hashed: the arrays the fingerprint hashes (tracks, valid, gates, point clouds).
        report: one row per node or stage.
        report_text: the cook report as text, when the target gives one.
        elapsed_ms: wall time of the cook.
        traffic: device traffic of the cook.
        reasons: ``[E]`` int bits saying why each env is invalid (0: valid), or None.
    """

    tracks: np.ndarray | None
    valid: np.ndarray | None
    gates: Gates | None
    counts: dict[str, float]
    hashed: tuple[np.ndarray, ...] = ()
    points: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    report: tuple[ReportRow, ...] = ()
    report_text: str = ""
    elapsed_ms: float = 0.0
    traffic: Traffic = dataclasses.field(default_factory=Traffic)
    reasons: np.ndarray | None = None

    @functools.cached_property
    def fingerprint(self) -> str:
        """12 hex digits of a sha1 of the tracks, validity, gates and point clouds (the
        arrays in ``hashed``, floats as float32 bytes, integers as int32 bytes); "" when
        the frame has none."""
        if not self.hashed:
            return ""
        digest = hashlib.sha1()
        for a in self.hashed:
            kind = np.float32 if a.dtype.kind == "f" else np.int32
            digest.update(np.ascontiguousarray(a, dtype=kind).tobytes())
        return digest.hexdigest()[:12]


def _get(obj: Any, names: tuple[str, ...]) -> Any:
    for n in names:
        if isinstance(obj, Mapping):
            if n in obj:
                return obj[n]
        elif getattr(obj, n, None) is not None:
            return getattr(obj, n)
    return None


def _numpy(value: Any) -> np.ndarray:
    """Returns a wp.array, a Column (its live elements), a LiveCount or a list as NumPy."""
    if isinstance(value, LiveCount):
        return np.asarray(int(default_context(value.device).readback(value.words)[0]))
    if isinstance(value, Column):
        ctx = default_context(value.device)
        n = len(value)
        if value.live is not None:
            n = min(int(ctx.readback(value.live.words)[0]), n)
        if n == 0:
            return np.zeros((0, value.lanes) if value.lanes > 1 else (0,))
        return ctx.readback(value.data[:n])
    if isinstance(value, wp.array):
        return default_context(str(value.device)).readback(value)
    if hasattr(value, "numpy"):
        value = value.numpy()
    return np.asarray(value)


def _read_gates(raw: Any) -> Gates:
    pos = _get(raw, _GATE_POS_NAMES)
    cnt = _get(raw, _GATE_COUNT_NAMES)
    if pos is None or cnt is None:
        raise ParamsError(f"gates: expected positions and count, got {raw!r}")
    count = _numpy(cnt).reshape(-1).astype(np.int64)
    pts = as_points(_numpy(pos))
    if pts.ndim == 2:
        pts = pts.reshape(len(count), -1, pts.shape[-1])
    slots = pts.shape[1]
    heading = _get(raw, ("heading", "headings"))
    order = _get(raw, ("order",))
    return Gates(
        positions=pts,
        count=count,
        heading=None if heading is None else _numpy(heading).astype(np.float64).reshape(-1, slots),
        order=None if order is None else _numpy(order).astype(np.int64).reshape(-1, slots),
    )


def _length_sum(tracks: np.ndarray) -> float:
    """The sum over the envs of the lengths of closed ``[E, N, 2]`` tracks (NaN segments
    skipped), each env's summed in float64: the points as complex numbers, so a segment's
    length is one ``abs``. The segments in one subtraction over the batch as one flat
    array (the differences across envs are overwritten by the closing segments)."""
    e, n = tracks.shape[:2]
    if n == 0 or e == 0:
        return 0.0
    z = np.ascontiguousarray(tracks[..., :2])
    z = z.view(np.complex64 if z.dtype == np.float32 else np.complex128).reshape(e, n)
    d = np.empty_like(z)
    flat = z.reshape(-1)
    np.subtract(flat[1:], flat[:-1], out=d.reshape(-1)[:-1])
    np.subtract(z[:, 0], z[:, -1], out=d[:, -1])
    seg = np.abs(d)
    total = float(seg.sum(axis=1, dtype=np.float64).sum())
    if not math.isfinite(total):  # a NaN or inf somewhere: the envs' sums without NaNs
        total = float(np.nansum(seg, axis=1, dtype=np.float64).sum())
    return total


def _mean_length(tracks: np.ndarray) -> float:
    """The ``mean length`` count: the mean length of the envs, to 4 digits."""
    return round(_length_sum(tracks) / len(tracks), 4) if len(tracks) else 0.0


def _track_counts(tracks: np.ndarray, valid: np.ndarray) -> dict[str, float]:
    """The counts of ``[E, N, 2]`` tracks and their ``[E]`` flags (``frame_from`` and
    ``track_frame``): envs, valid envs, points per env, mean length."""
    return {
        "envs": tracks.shape[0],
        "valid envs": int(np.count_nonzero(valid)),
        "points per env": tracks.shape[1],
        "mean length": _mean_length(tracks),
    }


def _points(value: Any) -> np.ndarray:
    """``value`` as points (``as_points``), keeping a float32 array's dtype (no copy)."""
    arr = _numpy(value)
    if arr.dtype in (np.float32, np.float64) and arr.ndim >= 2 and arr.shape[-1] >= 2:
        return arr
    return as_points(arr)


def frame_from(
    result: Any,
    *,
    num_envs: int | None = None,
    points: Mapping[str, Any] | None = None,
    report: tuple[ReportRow, ...] = (),
    report_text: str = "",
    elapsed_ms: float = 0.0,
    traffic: Traffic | None = None,
) -> Frame:
    """Reads a result (an object or a mapping) into a ``Frame``.

    Args:
        result: holds some of ``xy``/``centerline`` (``[E*N]`` vec2 or ``[E, N, 2]``),
            ``valid`` (``[E]``), ``gates`` (with ``positions``, ``count``, optional
            ``heading`` and ``order``) and ``counts`` (label -> number).
        num_envs: E when ``xy`` is flat and there is no ``valid``.
        points: label -> point clouds (``[M, 2|3]``, a vector Column or ``wp.array``).
        report, report_text, elapsed_ms, traffic: carried into the frame.

    Returns:
        The frame, with counts: envs, valid envs, points per env, mean length, gates per
        env (mean, min, max) when there are gates, then the result's own counts.

    Raises:
        ParamsError: when the shapes disagree.
    """
    counts: dict[str, float] = {}
    hashed: list[np.ndarray] = []
    tracks = valid = None
    xy = _get(result, _XY_NAMES)
    raw_valid = _get(result, ("valid",))
    if raw_valid is not None:
        valid = _numpy(raw_valid).reshape(-1).astype(np.int64)
    if xy is not None:
        pts = _points(xy)
        if pts.ndim == 2:
            envs = num_envs or (len(valid) if valid is not None else 1)
            if pts.shape[0] % envs:
                raise ParamsError(f"xy: expected a multiple of {envs} points, got {pts.shape[0]}")
            pts = pts.reshape(envs, -1, pts.shape[-1])
        tracks = np.ascontiguousarray(pts[..., :2])
        if valid is None:
            valid = np.ones(tracks.shape[0], dtype=np.int64)
        if len(valid) != tracks.shape[0]:
            raise ParamsError(f"valid: expected {tracks.shape[0]} flags, got {len(valid)}")
        counts.update(_track_counts(tracks, valid))
        hashed += [tracks, valid]
    elif valid is not None:
        counts["envs"] = len(valid)
        counts["valid envs"] = int(np.count_nonzero(valid))
    gates = None
    raw_gates = _get(result, ("gates",))
    if raw_gates is not None:
        gates = _read_gates(raw_gates)
        if len(gates.count):
            counts["gates per env (mean)"] = round(float(gates.count.mean()), 4)
            counts["gates per env (min)"] = int(gates.count.min())
            counts["gates per env (max)"] = int(gates.count.max())
        hashed += [gates.positions, gates.count]
    own = _get(result, ("counts",))
    if own is not None:
        for k, v in dict(own).items():
            counts[str(k)] = _number(v, k)
    clouds = {}
    for k, v in (points or {}).items():
        pts = as_points(_numpy(v))
        clouds[str(k)] = np.ascontiguousarray(pts[..., :2].reshape(-1, 2))
        hashed.append(clouds[str(k)])
    raw_reason = _get(result, ("reason", "reasons"))
    reasons = None
    if raw_reason is not None and valid is not None:
        reasons = _numpy(raw_reason).reshape(-1).astype(np.int64)
        if len(reasons) != len(valid):
            reasons = None
    return Frame(
        tracks=tracks,
        valid=valid,
        gates=gates,
        counts=counts,
        hashed=tuple(hashed),
        points=clouds,
        report=tuple(report),
        report_text=report_text,
        elapsed_ms=elapsed_ms,
        traffic=traffic if traffic is not None else Traffic(),
        reasons=reasons,
    )


def track_frame(
    xy: np.ndarray,
    valid: np.ndarray,
    reasons: np.ndarray,
    *,
    report: tuple[ReportRow, ...] = (),
    elapsed_ms: float = 0.0,
    traffic: Traffic | None = None,
) -> Frame:
    """``frame_from({"xy": xy, "valid": valid, "reason": reasons}, ...)`` for tracks already
    read back as NumPy arrays, without the lookups by name (a track view's cook).

    Args:
        xy: ``[E, N, 2]`` C-contiguous float32 or float64 centerlines.
        valid, reasons: ``[E]`` integer flags and reason bits.
        report, elapsed_ms, traffic: carried into the frame.

    Returns:
        The same frame as ``frame_from`` (counts envs, valid envs, points per env, mean
        length; tracks, valid and reasons; tracks and valid hashed).

    Raises:
        ParamsError: arrays that are not of that form (``frame_from`` reads any other).
    """
    e = len(xy)
    if (
        xy.ndim != 3
        or xy.shape[2] != 2
        or xy.dtype not in (np.float32, np.float64)
        or not xy.flags.c_contiguous
        or valid.shape != (e,)
        or reasons.shape != (e,)
    ):
        raise ParamsError(
            f"track_frame: expected [E, N, 2] float xy and [E] valid and reasons, got "
            f"{xy.shape} {xy.dtype}, {valid.shape}, {reasons.shape}"
        )
    valid = valid.astype(np.int64)
    return Frame(
        tracks=xy,
        valid=valid,
        gates=None,
        counts=_track_counts(xy, valid),
        hashed=(xy, valid),
        report=tuple(report),
        elapsed_ms=elapsed_ms,
        traffic=traffic if traffic is not None else Traffic(),
        reasons=reasons.astype(np.int64),
    )


def _number(value: Any, key: Any) -> float:
    arr = _numpy(value)
    if arr.size != 1 or not np.issubdtype(arr.dtype, np.number):
        raise ParamsError(f"counts[{key!r}]: expected a number, got {value!r}")
    return arr.reshape(-1)[0].item()


def report_rows(report: Any) -> tuple[ReportRow, ...]:
    """Returns the rows of a cook report (an object with ``.nodes``, or a list of entries).

    Each entry states ``name`` and some of ``time_ms``, ``launches``, ``readbacks``,
    ``builds``, ``uploads``, ``waits`` and ``reused``, as attributes or keys.
    """
    if report is None:
        return ()
    nodes = report if isinstance(report, list | tuple) else _get(report, ("nodes", "stages"))
    if nodes is None:
        return ()
    rows = []
    for entry in nodes:

        def field(name: str, default: Any = 0, entry: Any = entry) -> Any:
            v = _get(entry, (name,))
            return default if v is None else v

        rows.append(
            ReportRow(
                name=str(field("name", "?")),
                time_ms=float(field("time_ms", 0.0)),
                launches=int(field("launches")),
                readbacks=int(field("readbacks")),
                builds=int(field("builds")),
                uploads=int(field("uploads")),
                waits=int(field("waits")),
                reused=None if _get(entry, ("reused",)) is None else bool(field("reused")),
                mode=str(field("mode", "")),
            )
        )
    return tuple(rows)


def read_outputs(outputs: Mapping[str, Any]) -> tuple[Any, dict[str, Any], dict[str, float]]:
    """Sorts a graph's outputs into what a frame draws.

    Args:
        outputs: node name -> what the node returned (Columns, live counts, Records,
            Geometries, numbers, or a result holding ``xy``/``centerline``/``gates``).

    Returns:
        (tracks, points, counts): the output holding tracks (``xy``/``centerline``) or
        gates, the last in cook order, one with ``valid`` first (None when none does); ``"node.key"`` -> every vector Column (a point cloud); ``"node.key"``
        -> a number, a live count's value, a one-word column's value, or a column's
        element count (its live count when it has one).
    """
    holders = [
        v
        for v in outputs.values()
        if not isinstance(v, Column) and any(_get(v, (n,)) is not None for n in _XY_NAMES)
    ] or [v for v in outputs.values() if not isinstance(v, Column) and _get(v, ("gates",))]
    with_valid = [v for v in holders if _get(v, ("valid",)) is not None]
    tracks: Any = (with_valid or holders or [None])[-1]
    points: dict[str, Any] = {}
    counts: dict[str, float] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, bool) or value is None or value is tracks:
            return
        if isinstance(value, int | float):
            counts[key] = value
        elif isinstance(value, LiveCount):
            counts[key] = int(_numpy(value))
        elif isinstance(value, Column):
            if value.lanes >= 2 and value.type != "Color":
                points[key] = value
            if len(value) == 1 and value.live is None and value.lanes == 1:
                counts[key] = _numpy(value).reshape(-1)[0].item()
            else:
                counts[key] = int(_numpy(value.live)) if value.live is not None else len(value)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, f"{key}.{k}")
        elif hasattr(value, "classes") and isinstance(value.classes, Mapping):
            for k, v in value.classes.items():
                walk(v, f"{key}.{k}")

    for name, value in outputs.items():
        walk(value, str(name))
    return tracks, points, counts
