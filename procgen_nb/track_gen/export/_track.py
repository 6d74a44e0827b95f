"""``Track``: one env read back for export (metres, float64), and ``tracks()`` that reads
them from a ``TrackGenerator``, a ``TrackResult`` or a ``Course``.

Frame: x east, y north, z up, in metres (world units times ``scale``); travel runs along
increasing point index; the left normal is the central tangent turned +90 degrees (the
normal ``track_gen.widths`` and ``mesh.road_mesh`` use), the right normal its opposite.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import warp as wp

from ...device import HOST
from ...errors import ExportError
from .. import widths as _widths
from .._result import REASONS, TrackResult
from ..exec import LaunchContext
from ..gates.course import Course
from ..pipeline import TrackGenerator


@dataclasses.dataclass
class Track:
    """One closed track, in metres.

    Attributes:
        xy: ``(N, 2)`` centerline (the first point not repeated).
        left, right: ``(N,)`` widths left and right of travel.
        z: ``(N,)`` heights, or None for a flat track.
        env: its env index. seed, epoch: its env seed and epoch (None from a bare result).
        generator: the generator's name (None from a bare result).
        valid: the pipeline's verdict. reason: its reason bits (``REASONS``).
        crossing: boundary segment pairs that meet (``widths.boundary_crossings``; 0 is a
            clean band).
        gates: ``(G, 3)`` gate positions or None; gate_heading ``(G,)`` radians (travel
            direction through each gate); gate_size ``(G,)`` metres.

    Example:
        >>> import numpy as np
        >>> from procgen_nb.track_gen.export import Track
        >>> a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        >>> xy = np.stack([20 * np.cos(a), 10 * np.sin(a)], 1)  # a 40 m x 20 m ellipse
        >>> oval = Track(xy, left=np.full(16, 2.0), right=np.full(16, 2.0))
        >>> oval.stem, Track(xy, oval.left, oval.right, seed=3, epoch=1, generator="polar").stem
        ('track_env0', 'polar_s3_e1')
        >>> oval.boundaries()[0][0].round(9).tolist()  # counter-clockwise: left is inward
        [18.0, 0.0]
        >>> round(float(oval.arc_length()[-1]), 2)  # the 16-gon inside the ellipse's 96.88 m
        96.26
        >>> oval.start_poses(2).shape  # x, y, yaw of two cars
        (2, 3)
    """

    xy: np.ndarray
    left: np.ndarray
    right: np.ndarray
    z: np.ndarray | None = None
    env: int = 0
    seed: int | None = None
    epoch: int | None = None
    generator: str | None = None
    valid: bool = True
    reason: int = 0
    crossing: int = 0
    gates: np.ndarray | None = None
    gate_heading: np.ndarray | None = None
    gate_size: np.ndarray | None = None

    # -- geometry --------------------------------------------------------------------------
    @property
    def stem(self) -> str:
        """The file name stem: ``<generator>_s<seed>_e<epoch>`` (``env<e>`` parts when the
        seed or epoch is unknown)."""
        gen = (self.generator or "track").replace(".", "-")
        seed = f"s{self.seed}" if self.seed is not None else f"env{self.env}"
        epoch = f"_e{self.epoch}" if self.epoch is not None else ""
        return f"{gen}_{seed}{epoch}"

    def tangents(self) -> np.ndarray:
        """``(N, 2)`` unit central tangents (``p[i+1] - p[i-1]``)."""
        t = np.roll(self.xy, -1, 0) - np.roll(self.xy, 1, 0)
        return t / np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-300)

    def normals(self) -> np.ndarray:
        """``(N, 2)`` unit left normals (the right normal is the opposite)."""
        t = self.tangents()
        return np.stack([-t[:, 1], t[:, 0]], 1)

    def boundaries(self) -> tuple[np.ndarray, np.ndarray]:
        """The left and right boundaries, ``(N, 2)`` each."""
        n = self.normals()
        return self.xy + n * self.left[:, None], self.xy - n * self.right[:, None]

    def arc_length(self) -> np.ndarray:
        """``(N + 1,)`` cumulative length from point 0 around to point 0 again."""
        d = np.linalg.norm(np.roll(self.xy, -1, 0) - self.xy, axis=1)
        return np.concatenate([[0.0], np.cumsum(d)])

    def curvature(self) -> np.ndarray:
        """``(N,)`` signed curvature (1 / circumradius of each point and its neighbours;
        > 0 turning left)."""
        a, b, c = np.roll(self.xy, 1, 0), self.xy, np.roll(self.xy, -1, 0)
        cross = (b - a)[:, 0] * (c - b)[:, 1] - (b - a)[:, 1] * (c - b)[:, 0]
        la = np.linalg.norm(b - a, axis=1)
        lb = np.linalg.norm(c - b, axis=1)
        lc = np.linalg.norm(c - a, axis=1)
        return 2.0 * cross / np.maximum(la * lb * lc, 1e-300)

    def start_index(self) -> int:
        """The point of the start/finish line: on the main straight (the longest run of
        points whose absolute curvature is at most the lower quartile's, or 1/(lap/4) when
        that is larger), as far along it as the default grid of 4 cars needs, at most to its
        end."""
        N = len(self.xy)
        k = np.abs(self.curvature())
        lap = self.arc_length()[-1]
        straight = k <= max(np.quantile(k, 0.25), 4.0 / max(lap, 1e-300))
        if straight.all():
            return 0
        best, best_len = 0, 0
        i0 = int(np.argmin(straight))  # a curved point: runs do not wrap past it
        run = 0
        for step in range(1, N + 1):
            i = (i0 + step) % N
            run = run + 1 if straight[i] else 0
            if run > best_len:
                best, best_len = (i - run + 1) % N, run
        ds = lap / N
        want = int(math.ceil(self.grid_spacing() * 4 / max(ds, 1e-300)))
        return (best + min(want, best_len - 1)) % N

    def grid_spacing(self) -> float:
        """The default spacing of the start grid: twice the mean full width (metres)."""
        return float(2.0 * np.mean(self.left + self.right))

    def start_line(self) -> tuple[np.ndarray, np.ndarray]:
        """The start/finish line: its left and right end points, ``(2,)`` each."""
        i = self.start_index()
        lb, rb = self.boundaries()
        return lb[i], rb[i]

    def start_poses(self, count: int = 4, spacing: float | None = None) -> np.ndarray:
        """The grid behind the start line: ``(count, 3)`` poses ``x, y, yaw`` (yaw the
        direction of travel, radians from +x), two abreast (left, right of the centerline,
        half that side's width out) and ``spacing`` metres apart along the track.

        Raises:
            ExportError: a count below 1 or a spacing not > 0.
        """
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ExportError(f"start_poses count: expected an integer >= 1, got {count!r}")
        spacing = self.grid_spacing() if spacing is None else spacing
        if not isinstance(spacing, int | float) or not spacing > 0 or not math.isfinite(spacing):
            raise ExportError(f"start_poses spacing: expected metres > 0, got {spacing!r}")
        s = self.arc_length()
        lap, N = s[-1], len(self.xy)
        i0 = self.start_index()
        t, n = self.tangents(), self.normals()
        out = np.zeros((count, 3))
        for k in range(count):
            back = (k + 1) * spacing / 2.0 if count > 1 else spacing / 2.0
            target = (s[i0] - back) % lap
            i = int(np.searchsorted(s, target, side="right") - 1) % N
            f = (target - s[i]) / max(s[i + 1] - s[i], 1e-300)
            j = (i + 1) % N
            p = self.xy[i] * (1 - f) + self.xy[j] * f
            side = 1.0 if k % 2 == 0 else -1.0
            w = self.left[i] if side > 0 else self.right[i]
            p = p + side * n[i] * w / 2.0
            out[k] = [p[0], p[1], math.atan2(t[i, 1], t[i, 0])]
        return out


def _env_list(envs: Any, E: int) -> list[int]:
    if envs is None:
        return list(range(E))
    items = [envs] if isinstance(envs, int | np.integer) else envs
    try:
        items = list(items)
    except TypeError:
        raise ExportError(
            f"env: expected an integer or integers in [0, {E}), got {envs!r}"
        ) from None
    out = []
    for e in items:
        if isinstance(e, bool) or not isinstance(e, int | np.integer) or not 0 <= e < E:
            raise ExportError(f"env: expected an integer in [0, {E}) (num_envs={E}), got {e!r}")
        out.append(int(e))
    seen: set[int] = set()
    twice = sorted({e for e in out if e in seen or seen.add(e)})
    if twice:
        raise ExportError(f"env: expected each env index once, got {twice} more than once")
    return out


def _width_value(width: Any) -> tuple[float, float] | None:
    if width is None:
        return None
    pair = (width, width) if isinstance(width, int | float) else width
    try:
        left, right = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise ExportError(
            f"width: expected metres > 0 or a (left, right) pair, got {width!r}"
        ) from None
    if not (left > 0 and right > 0 and math.isfinite(left + right)):
        raise ExportError(f"width: expected metres > 0 or a (left, right) pair, got {width!r}")
    return left, right


def _check_scale(scale: Any) -> float:
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
        raise ExportError(f"scale: expected metres per world unit > 0, got {scale!r}")
    if not math.isfinite(scale):
        raise ExportError(f"scale: expected metres per world unit > 0, got {scale!r}")
    return float(scale)


def tracks(source: Any, env: Any = None, *, scale: float = 1.0, width: Any = None) -> list[Track]:
    """Reads envs back as ``Track`` objects, in metres.

    Args:
        source: a ``TrackGenerator`` (seeds, epoch and generator known), its
            ``TrackResult``, a ``Course`` (with its gates), a ``Track`` or a list of them.
        env: an env index, a list of them (each once), or None for every env.
        scale: metres per world unit.
        width: metres each side (or a ``(left, right)`` pair) in place of the track's own
            ``width_left`` / ``width_right``; needed when it has none and no validity
            ``track_width`` (the default is half of it each side).

    Returns:
        One ``Track`` per env asked for, with ``crossing`` counted on the device for its
        widths.

    Raises:
        ExportError: an unknown source, an env out of range or asked for twice, a scale
            or width not > 0, or no width to use.

    Example:
        >>> import procgen_nb as pg
        >>> from procgen_nb.track_gen import export
        >>> gen = pg.track_gen.presets.track("polar", num_envs=2, num_points=64, seed=1)
        >>> _ = gen.generate()
        >>> [(t.stem, len(t.xy)) for t in export.tracks(gen)]
        [('polar_s1_e0', 64), ('polar_s2_e0', 64)]
        >>> (t,) = export.tracks(gen, 1, scale=2.0, width=3.0)  # env 1, 3 m each side
        >>> t.stem, t.left[:2].tolist()
        ('polar_s2_e0', [3.0, 3.0])
    """
    scale = _check_scale(scale)
    if isinstance(source, Track):
        _env_list(env, 1)
        return [source]
    if isinstance(source, list | tuple) and all(isinstance(t, Track) for t in source):
        return [source[e] for e in _env_list(env, len(source))]
    gen = None
    gates = None
    if isinstance(source, Course):
        gen, res = source.track, source.track.result
        g = source.gates.result.numpy()
        gates = (g["position"], g["heading"], g["size"], g["count"])
    elif isinstance(source, TrackGenerator):
        gen, res = source, source.result
    elif isinstance(source, TrackResult):
        res = source
    else:
        raise ExportError(
            "source: expected a TrackGenerator, TrackResult, Course or Track, got "
            f"{type(source).__name__}"
        )
    E, N = res.num_envs, res.num_points
    picked = _env_list(env, E)
    data = res.numpy()
    override = _width_value(width)
    if override is None and "width_left" not in res.attributes:
        tw = float(gen.config.validity.track_width) if gen is not None else 0.0
        if not tw > 0:
            raise ExportError(
                "width: expected width= (metres) for a track without width attributes "
                "(TrackGenConfig.width) or a validity track_width > 0, got none"
            )
        override = (tw * scale / 2.0, tw * scale / 2.0)
    if override is not None:
        wl = np.full((E, N), override[0] / scale, np.float32)
        wr = np.full((E, N), override[1] / scale, np.float32)
    else:
        wl, wr = data["width_left"], data["width_right"]
    crossing = _crossings(data["xy"], wl, wr, data["reason"])
    seeds = gen.config.env_seed_values() if gen is not None else None
    out = []
    for e in picked:
        t = Track(
            xy=data["xy"][e].astype(np.float64) * scale,
            left=wl[e].astype(np.float64) * scale,
            right=wr[e].astype(np.float64) * scale,
            z=data["z"][e].astype(np.float64) * scale if "z" in data else None,
            env=e,
            seed=seeds[e] if seeds is not None else None,
            epoch=gen.config.epoch if gen is not None else None,
            generator=gen.stage.name if gen is not None else None,
            valid=bool(data["valid"][e]),
            reason=int(data["reason"][e]),
            crossing=int(crossing[e]),
        )
        if gates is not None:
            pos, head, size, count = gates
            c = int(count[e])
            t.gates, t.gate_heading, t.gate_size = (
                pos[e, :c] * scale,
                head[e, :c],
                size[e, :c] * scale,
            )
        out.append(t)
    return out


def _crossings(xy: np.ndarray, wl: np.ndarray, wr: np.ndarray, reason: np.ndarray) -> np.ndarray:
    """``widths.boundary_crossings`` of every env, on the CPU (one launch)."""
    E, N = xy.shape[:2]
    ctx = LaunchContext(HOST)
    out = wp.zeros(E, dtype=wp.int32, device=HOST)
    _widths.boundary_crossings(
        ctx,
        wp.array(np.ascontiguousarray(xy.reshape(-1, 2), np.float32), dtype=wp.vec2, device=HOST),
        wp.array(np.ascontiguousarray(wl.reshape(-1), np.float32), dtype=float, device=HOST),
        wp.array(np.ascontiguousarray(wr.reshape(-1), np.float32), dtype=float, device=HOST),
        E,
        N,
        out,
        _widths.BoundaryScratch(HOST, E, N),
        wp.full(E, 1, dtype=wp.int32, device=HOST),
        wp.array(np.ascontiguousarray(reason, np.int32), dtype=wp.int32, device=HOST),
    )
    return out.numpy()


def check_exportable(track: Track) -> None:
    """Refuses a track that no format can hold.

    Raises:
        ExportError: a track the pipeline found invalid (its reasons named), or whose
            boundaries cross at the widths asked for.
    """
    if track.crossing != 0:
        raise ExportError(
            f"width: expected widths the track allows (boundaries that do not cross), got "
            f"env {track.env} ({track.stem}) whose boundaries cross or fold "
            f"({track.crossing} places) at left {track.left.max():.4g} m, right "
            f"{track.right.max():.4g} m"
        )
    if not track.valid:
        why = [REASONS[b] for b in sorted(REASONS) if track.reason & b] or ["invalid"]
        raise ExportError(
            f"env: expected a valid track, got env {track.env} ({track.stem}): {'; '.join(why)}"
        )


__all__ = ["Track", "check_exportable", "tracks"]
