"""The 0.1 ``warp_generate`` helpers, ``GenScratch`` and the bezier generator (deprecated).

``generate_centerline_warp`` / ``bezier_alloc_scratch`` are the bezier generator's 0.1
module functions (silent), writing the bytes of the registered ``bezier`` Stage. The
sampling helpers:

- ``corner_count_sample_inplace``: ``ops.sample_counts`` (stream ``bezier.count``);
- ``corner_sample_inplace``: ``ops.grid_cells`` and ``ops.sample_grid_points`` (streams
  ``bezier.cells``, ``bezier.points``);
- ``ccw_sort_inplace``: ``ops.angle_sort`` (a count below 1 sorts nothing either way).

They read ``min_corners``, ``max_corners``, ``grid`` and ``jitter`` from the config (its
``generator_params``, else a legacy attribute, else ``BezierParams``' default), take
``ctx=None`` last (the ambient context) and sync after their launches in debug mode.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import warp as wp

from .. import ops
from ..exec import salt
from ..generators import BezierParams
from ._knobs import knob
from ._legacy import ambient, debug_sync


@dataclasses.dataclass
class GenScratch:
    """The sampling buffers of a corner generator.

    Attributes:
        counts: ``[E]`` int32. perm: ``[E*grid*grid]`` int32. cells: ``[E*max_count]``
            int32. points: ``[E*max_count]`` vec2.
    """

    counts: wp.array
    perm: wp.array
    cells: wp.array
    points: wp.array

    @classmethod
    def alloc(cls, config: Any, max_count: int, grid: int) -> GenScratch:
        """Allocates the buffers for ``config.num_envs`` envs on ``config.device``."""
        E, dev = int(config.num_envs), str(config.device) if config.device else None
        return cls(
            counts=wp.zeros(E, dtype=wp.int32, device=dev),
            perm=wp.zeros(E * grid * grid, dtype=wp.int32, device=dev),
            cells=wp.zeros(E * max_count, dtype=wp.int32, device=dev),
            points=wp.zeros(E * max_count, dtype=wp.vec2, device=dev),
        )


def corner_count_sample_inplace(
    seeds_wp: wp.array, config: Any, out_counts_wp: wp.array, ctx: Any = None
) -> None:
    """Writes each env's corner count, uniform in ``[min_corners, max_corners]``."""
    ctx = ambient(ctx)
    lo, hi = knob(config, "min_corners", BezierParams), knob(config, "max_corners", BezierParams)
    ops.sample_counts(ctx, seeds_wp, salt("bezier.count"), lo, hi, out_counts_wp)
    debug_sync(ctx)


def corner_sample_inplace(
    seeds_wp: wp.array,
    config: Any,
    counts_wp: wp.array,
    scratch: GenScratch,
    out_xy_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes ``counts[e]`` jittered corners in distinct cells of a ``grid`` lattice over
    ``[-scale, scale]^2`` (``[E*max_corners]`` vec2, NaN past the count)."""
    ctx = ambient(ctx)
    g, mx = knob(config, "grid", BezierParams), knob(config, "max_corners", BezierParams)
    jitter, scale = knob(config, "jitter", BezierParams), float(config.scale)
    ops.grid_cells(
        ctx, seeds_wp, salt("bezier.cells"), counts_wp, g, scratch.perm, scratch.cells, mx
    )
    ops.sample_grid_points(
        ctx,
        seeds_wp,
        salt("bezier.points"),
        scratch.cells,
        counts_wp,
        g,
        jitter,
        scale,
        out_xy_wp,
        mx,
    )
    debug_sync(ctx)


def ccw_sort_inplace(xy_wp: wp.array, counts_wp: wp.array, max_count: int, ctx: Any = None) -> None:
    """Sorts each env's points counter-clockwise around their centroid, in place."""
    ctx = ambient(ctx)
    ops.angle_sort(ctx, xy_wp, counts_wp, max_count)
    debug_sync(ctx)


__all__ = [
    "GenScratch",
    "ccw_sort_inplace",
    "corner_count_sample_inplace",
    "corner_sample_inplace",
]


# -- the built-in generators' 0.1 module functions (deprecated, silent; removed in 1.0) ---------
#
# ``bezier_alloc_scratch`` / ``generate_centerline_warp`` below, and the other built-ins' pairs
# in ``warp_generate_hull``, ``warp_generate_polar``, ``warp_generate_voronoi``,
# ``warp_generate_checkpoint`` and ``warp_generate_repulsive``, share what follows: one scratch
# class, the resolution of the Params, the checks of the arguments and the choice of output.

import math  # noqa: E402
from collections.abc import Callable  # noqa: E402

from ...errors import GeneratorError, ParamsError  # noqa: E402
from ...params import Params  # noqa: E402
from .._spec_stage import resolve_params  # noqa: E402
from ..exec import LaunchContext  # noqa: E402
from ..generators import Bezier  # noqa: E402
from ..generators import _kernels as _gk  # noqa: E402
from ..generators.sampled import _need  # noqa: E402


@dataclasses.dataclass
class BuiltinScratch:
    """The buffers of a built-in generator's 0.1 module function (its ``*_alloc_scratch``).

    Attributes:
        name: the generator's name (``"polar"``...).
        params: the resolved Params instance the function uses (from ``alloc_scratch``'s
            config: ``config.generator_params``, else ``from_legacy`` for a config subclass,
            else the defaults).
        num_envs: E. num_points: N, the size ``generate`` writes per env by default.
        raw: the registered Stage's raw loop size per env (``Stage.raw_points``).
        active: ``[E]`` int32 ones: the env mask the Stage's kernels read (every env).
        count: ``[E]`` int32 points of each env's raw loop (``raw`` until the generator
            writes it; the rest of the raw loop is NaN).
        raw_xy: ``[E*raw]`` vec2 raw loop before resampling (None when ``raw == N``).
        arc: the ``ops.ArcScratch`` of that resampling (None when ``raw == N``).
        buffers: the Stage's own scratch buffers, by the names its ``build`` gives them.
    """

    name: str
    params: Params
    num_envs: int
    num_points: int
    raw: int
    active: wp.array
    count: wp.array
    raw_xy: wp.array | None
    arc: ops.ArcScratch | None
    buffers: dict[str, wp.array]


def _legacy_ctx(config: Any, ctx: Any) -> Any:
    """Returns ``ctx``, or a ``LaunchContext`` on ``config.device`` (its current stream)."""
    if ctx is not None:
        return ctx
    dev = getattr(config, "device", None)
    return LaunchContext(str(dev) if dev is not None else None)


def _builtin_params(stage_cls: type, config: Any) -> Params:
    """Returns the Stage's Params resolved from ``config`` the way the pipeline resolves them
    (a config object without ``generator_params`` is read with ``from_legacy``)."""
    for attr in ("num_envs", "num_points", "scale"):
        if not hasattr(config, attr):
            raise GeneratorError(
                f"{stage_cls.name} config: expected a TrackGenConfig (num_envs, num_points, "
                f"scale, device), got {type(config).__name__} without {attr!r}"
            )
    gp = getattr(config, "generator_params", None)
    if isinstance(gp, stage_cls.Params):
        return gp
    if not hasattr(config, "generator_params"):
        try:
            return stage_cls.Params.from_legacy(config)
        except ParamsError as exc:
            raise GeneratorError(f"generator_params of {stage_cls.name!r}: {exc}") from exc
    return resolve_params(stage_cls(), config)


def _alloc_builtin(
    stage_cls: type,
    config: Any,
    make: Callable[[int, int, Any, str | None], dict[str, wp.array]],
) -> BuiltinScratch:
    """Resolves the Params, sizes the raw loop like the Stage and allocates the buffers."""
    params = _builtin_params(stage_cls, config)
    E, N = int(config.num_envs), int(config.num_points)
    raw = int(stage_cls().raw_points(config, params))
    dev = str(config.device) if getattr(config, "device", None) is not None else None
    buffers = make(E, raw, params, dev)
    resample = raw != N
    return BuiltinScratch(
        name=stage_cls.name,
        params=params,
        num_envs=E,
        num_points=N,
        raw=raw,
        active=wp.full(E, 1, dtype=wp.int32, device=dev),
        count=wp.full(E, raw, dtype=wp.int32, device=dev),
        raw_xy=wp.zeros(E * raw, dtype=wp.vec2, device=dev) if resample else None,
        arc=ops.ArcScratch.alloc(dev, E, raw, N) if resample else None,
        buffers=buffers,
    )


def _check_array(who: str, name: str, arr: Any, dtype: Any, size: int) -> None:
    if not isinstance(arr, wp.array) or arr.dtype != dtype or arr.ndim != 1:
        got = f"{type(arr).__name__} {getattr(arr, 'dtype', '')}".strip()
        raise GeneratorError(
            f"{who} {name}: expected a 1-d {wp.types.type_repr(dtype)} wp.array, got {got}"
        )
    if arr.shape[0] != size:
        raise GeneratorError(f"{who} {name}: expected {size} elements, got {arr.shape[0]}")


def _begin_builtin(
    who: str,
    seeds_wp: Any,
    config: Any,
    out_centerline: Any,
    out_valid_wp: Any,
    scratch: Any,
    ctx: Any,
) -> tuple[Any, wp.array, bool]:
    """Checks a ``generate_*_warp`` call, fills ``out_valid_wp`` with 1 and returns
    ``(ctx, xy, resample)``: where the raw loop goes, and whether it is then resampled into
    ``out_centerline``."""
    if not isinstance(scratch, BuiltinScratch) or scratch.name != who:
        raise GeneratorError(
            f"generate {who} scratch: expected what {who}'s alloc_scratch returned, got "
            f"{type(scratch).__name__}"
            + (f" of {scratch.name!r}" if isinstance(scratch, BuiltinScratch) else "")
        )
    E, N, raw = scratch.num_envs, scratch.num_points, scratch.raw
    got = (getattr(config, "num_envs", None), getattr(config, "num_points", None))
    if got != (E, N):
        raise GeneratorError(
            f"generate {who} config: expected num_envs={E}, num_points={N} (the config given "
            f"to alloc_scratch), got num_envs={got[0]}, num_points={got[1]}"
        )
    _check_array(f"generate {who}", "seeds_wp", seeds_wp, wp.int32, E)
    _check_array(f"generate {who}", "out_valid_wp", out_valid_wp, wp.int32, E)
    if not isinstance(out_centerline, wp.array) or out_centerline.dtype != wp.vec2:
        raise GeneratorError(
            f"generate {who} out_centerline: expected a vec2 wp.array, got "
            f"{type(out_centerline).__name__} {getattr(out_centerline, 'dtype', '')}".rstrip()
        )
    n = out_centerline.shape[0]
    if n == E * raw:
        resample, xy = False, out_centerline
    elif n == E * N:
        resample, xy = True, scratch.raw_xy
    else:
        raise GeneratorError(
            f"generate {who} out_centerline: expected {E * N} points (num_envs * num_points) "
            f"or {E * raw} (num_envs * the raw size {raw}), got {n}"
        )
    ctx = _legacy_ctx(config, ctx)
    ctx.fill(out_valid_wp, 1)
    return ctx, xy, resample


def _finish_builtin(ctx: Any, scratch: BuiltinScratch, out_centerline: wp.array, resample: bool):
    """Resamples the raw loop into ``out_centerline`` (when asked) the way the pipeline does."""
    if resample:
        E, N, raw = scratch.num_envs, scratch.num_points, scratch.raw
        ops.arc_resample(
            ctx, scratch.raw_xy, out_centerline, scratch.arc, E, raw, N, scratch.count, None
        )
    debug_sync(ctx)


def _seeds_ctx(who: str, seeds_wp: Any, ctx: Any) -> tuple[Any, int]:
    """Checks ``seeds_wp`` and returns ``(ctx or a LaunchContext on its device, E)``."""
    if not isinstance(seeds_wp, wp.array) or seeds_wp.dtype != wp.int32 or seeds_wp.ndim != 1:
        raise GeneratorError(
            f"{who} seeds_wp: expected a 1-d int32 wp.array, got {type(seeds_wp).__name__} "
            f"{getattr(seeds_wp, 'dtype', '')}".rstrip()
        )
    return (ctx if ctx is not None else LaunchContext(str(seeds_wp.device))), seeds_wp.shape[0]


def _field_int(who: str, name: str, value: Any, pcls: type[Params], field: str) -> int:
    """Returns ``value`` as an int inside the bounds of ``pcls``'s ``field``."""
    lo, hi = pcls.fields()[field].bounds
    ok = not isinstance(value, bool) and isinstance(value, int | float) and int(value) == value
    if not ok or (lo is not None and value < lo) or (hi is not None and value > hi):
        raise GeneratorError(f"{who} {name}: expected an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def _field_float(who: str, name: str, value: Any, clamp: tuple | None = None) -> float:
    """Returns ``value`` as a finite float, clamped to ``clamp`` (lo, hi) when given."""
    ok = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not ok:
        raise GeneratorError(f"{who} {name}: expected a finite number, got {value!r}")
    v = float(value)
    if clamp is not None:
        lo, hi = clamp
        v = max(lo, v) if hi is None else min(max(lo, v), hi)
    return v


def _bounds(pcls: type[Params], field: str) -> tuple:
    """Returns ``(lo, hi)`` of a Params field."""
    return tuple(pcls.fields()[field].bounds)


def bezier_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_centerline_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the 0.1 knobs ``min_corners``,
            ``max_corners``, ``grid``, ``jitter``, ``tension``); its ``generator_params``
            (a ``BezierParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the ``bezier`` Stage's buffers ``counts``, ``perm``, ``cells``,
        ``corners``; the raw loop, ``raw = max_corners * max(4, ceil(N / min_corners))``).

    Raises:
        GeneratorError: Params the ``bezier`` Stage refuses (``min_corners > max_corners``,
            ``grid * grid < max_corners``, a field out of its bounds) or a config without
            ``num_envs`` / ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        mn, mx, g = p.min_corners, p.max_corners, p.grid
        _need(mn <= mx, "bezier", "min_corners <= max_corners", (mn, mx))
        _need(g * g >= mx, "bezier", "grid*grid >= max_corners", (g, mx))
        return {
            "counts": wp.zeros(E, dtype=wp.int32, device=dev),
            "perm": wp.zeros(E * g * g, dtype=wp.int32, device=dev),
            "cells": wp.zeros(E * mx, dtype=wp.int32, device=dev),
            "corners": wp.zeros(E * mx, dtype=wp.vec2, device=dev),
        }

    return _alloc_builtin(Bezier, config, make)


def generate_centerline_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``bezier`` generator as a 0.1 function: a closed chain of cubic Beziers through
    2D corners in distinct cells of a jittered grid, sorted counter-clockwise.

    It launches the ``bezier`` Stage's own kernels and ops, with the same salts
    (``bezier.count``, ``bezier.cells``, ``bezier.points``): those kernels already take every
    Params field as a scalar argument, so separate scalar kernels would duplicate them
    wholesale; the helper packs the rest (the all-envs mask, the buffers) from ``scratch``.
    For the same seeds and Params it writes the Stage's bytes with ``repair=False`` (the
    0.1 tracks: the field and its ``spacing`` and ``corner_radius`` are not read).

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``bezier_alloc_scratch``; the Params used are the ones
            it resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2 (the ``GeneratorSpec`` contract): the raw loop
            resampled by arc length to ``N = config.num_points`` points, as the pipeline
            resamples the Stage's; or ``[E * scratch.raw]`` vec2: the Stage's raw loop itself
            (``scratch.count[e]`` points, NaN after them).
        out_valid_wp: ``[E]`` int32, filled with 1, and 0 for an env with under 3 corners.
        scratch: from ``bezier_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, xy, resample = _begin_builtin(
        "bezier", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, mx, g = scratch.num_envs, scratch.raw, p.max_corners, p.grid
    scale = float(config.scale)
    counts, corners = b["counts"], b["corners"]
    ops.sample_counts(ctx, seeds_wp, salt("bezier.count"), p.min_corners, mx, counts)
    ops.grid_cells(ctx, seeds_wp, salt("bezier.cells"), counts, g, b["perm"], b["cells"], mx)
    ops.sample_grid_points(
        ctx, seeds_wp, salt("bezier.points"), b["cells"], counts, g, p.jitter, scale, corners, mx
    )
    ops.angle_sort(ctx, corners, counts, mx)
    ctx.launch(
        _gk._bezier_chain_k,
        E * raw,
        [corners, counts, mx, raw // mx, p.tension, scratch.active, raw, xy, scratch.count]
        + [out_valid_wp],
    )
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ += ["BuiltinScratch", "bezier_alloc_scratch", "generate_centerline_warp"]
