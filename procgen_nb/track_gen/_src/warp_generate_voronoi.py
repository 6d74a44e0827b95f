"""The 0.1 module functions of the built-in ``voronoi`` generator (deprecated, silent).

- ``voronoi_alloc_scratch`` / ``generate_voronoi_warp``: the generator as a
  ``GeneratorSpec`` pair; removed in 1.0 (the registered ``voronoi`` is a Stage that does
  not call them).
- ``select_voronoi_anchors``: the anchors the Stage selects (the sites of the cells a
  wobbly ring crosses, in order), for scalar Params clamped on the host to
  ``VoronoiParams``' bounds; removed in 1.0.
- ``select_voronoi_anchors_per_env``: the same anchors for per-env ``[E]`` arrays of
  ``jitter``, ``ring`` and ``wobble``, clamped on the device; it stays after 1.0.

Streams: ``voronoi.sites`` (site of cell ``c``: indices ``2c``, ``2c + 1``) and
``voronoi.ring`` (the ring's two phases and its radius: indices 0, 1, 2). Every function
takes ``ctx=None`` last (a ``LaunchContext`` on the config's or the seeds' device when
omitted) and syncs after its launches in debug mode (``PROCGEN_NB_DEBUG_SYNC``).
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..exec import salt
from ..generators import Voronoi, VoronoiParams
from ..generators import _kernels as _gk
from ._legacy import debug_sync
from .warp_generate import (
    BuiltinScratch,
    _alloc_builtin,
    _begin_builtin,
    _bounds,
    _check_array,
    _field_float,
    _field_int,
    _finish_builtin,
    _seeds_ctx,
)

# portable bytes: no host-specific ISA flags, no FMA contraction (as the Stages' kernels)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

_TWO_PI = wp.constant(6.283185307179586)


@wp.func
def _clamp_to(v: float, lo: float, hi: float) -> float:
    """``v`` clamped to ``[lo, hi]``; NaN gives ``lo``."""
    if v >= lo:
        return wp.min(v, hi)
    return lo


@wp.kernel
def _voronoi_anchors_scalar_k(
    seeds: wp.array(dtype=wp.int32),
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    b = e * ring_samples
    ctrl_count[e] = _gk.voronoi_walk_ring(
        seeds[e], salt_sites, salt_ring, grid, jitter, ring, wobble, ring_samples, scale, ctrl, b
    )


@wp.kernel
def _voronoi_anchors_per_env_k(
    seeds: wp.array(dtype=wp.int32),
    salt_sites: int,
    salt_ring: int,
    grid: int,
    jitter: wp.array(dtype=float),
    ring: wp.array(dtype=float),
    wobble: wp.array(dtype=float),
    bounds: wp.vec4,
    ring_samples: int,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    j = _clamp_to(jitter[e], 0.0, bounds[0])
    r = _clamp_to(ring[e], bounds[1], bounds[2])
    w = _clamp_to(wobble[e], 0.0, bounds[3])
    b = e * ring_samples
    ctrl_count[e] = _gk.voronoi_walk_ring(
        seeds[e], salt_sites, salt_ring, grid, j, r, w, ring_samples, scale, ctrl, b
    )


def _static(who: str, grid: Any, ring_samples: Any, scale: Any) -> tuple[int, int, float]:
    g = _field_int(who, "grid", grid, VoronoiParams, "grid")
    m = _field_int(who, "ring_samples", ring_samples, VoronoiParams, "ring_samples")
    return g, m, _field_float(who, "scale", scale)


def select_voronoi_anchors(
    seeds_wp: wp.array,
    grid: int,
    jitter: float,
    ring: float,
    wobble: float,
    ring_samples: int,
    scale: float,
    out_anchors_wp: wp.array,
    out_count_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the anchors ``voronoi`` selects, for every env.

    The sites are one per cell of a ``grid`` x ``grid`` lattice over ``[-1, 1]^2``, jittered
    inside it; a ring of radius about ``ring`` (wobbling by ``wobble``) is walked at
    ``ring_samples`` points, and each time the nearest site changes, that site (times
    ``scale``) is appended. A last anchor equal to the first is dropped. A scalar kernel
    (the Params are kernel arguments); it shares its body with the array-reading kernel of
    ``select_voronoi_anchors_per_env`` and gives the ``voronoi`` Stage's anchors before its
    corner repair (``repair=False``: they are then the Stage's bytes).

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        grid: sites per side (an integer in [3, 12]).
        jitter: clamped to ``[0, 1]``. ring: clamped to ``[0.2, 0.9]``. wobble: clamped to
            ``[0, 0.6]`` (``VoronoiParams``' bounds).
        ring_samples: points of the ring tested (an integer in [12, 256]).
        scale: the factor applied to the sites (a finite number).
        out_anchors_wp: ``[E * ring_samples]`` vec2: env ``e``'s anchors from
            ``e * ring_samples``; the slots past its count hold no anchor (unspecified).
        out_count_wp: ``[E]`` int32 anchors per env (under 3: the Stage rejects the env).
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: an integer out of its bounds, a non-finite number, or arrays of the
            wrong dtype or size.
    """
    who = "select_voronoi_anchors"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    g, m, scale = _static(who, grid, ring_samples, scale)
    j = _field_float(who, "jitter", jitter, _bounds(VoronoiParams, "jitter"))
    r = _field_float(who, "ring", ring, _bounds(VoronoiParams, "ring"))
    w = _field_float(who, "wobble", wobble, _bounds(VoronoiParams, "wobble"))
    _check_array(who, "out_anchors_wp", out_anchors_wp, wp.vec2, E * m)
    _check_array(who, "out_count_wp", out_count_wp, wp.int32, E)
    args = [seeds_wp, salt("voronoi.sites"), salt("voronoi.ring"), g, j, r, w, m, scale]
    ctx.launch(_voronoi_anchors_scalar_k, E, [*args, out_anchors_wp, out_count_wp])
    debug_sync(ctx)


def select_voronoi_anchors_per_env(
    seeds_wp: wp.array,
    grid: int,
    jitter_wp: wp.array,
    ring_wp: wp.array,
    wobble_wp: wp.array,
    ring_samples: int,
    scale: float,
    out_anchors_wp: wp.array,
    out_count_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the anchors ``voronoi`` selects, with ``jitter``, ``ring`` and ``wobble`` per env.

    Env ``e`` gets the anchors ``select_voronoi_anchors`` gives for ``jitter_wp[e]``,
    ``ring_wp[e]`` and ``wobble_wp[e]``, each clamped to its ``VoronoiParams`` bounds on the
    device (NaN: the lower bound): an array-reading kernel, so a curriculum can vary them
    per env. ``grid`` and ``ring_samples`` size the buffers and stay scalars.

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        grid: sites per side (an integer in [3, 12]).
        jitter_wp, ring_wp, wobble_wp: ``[E]`` float32 (clamped, not refused).
        ring_samples: points of the ring tested (an integer in [12, 256]).
        scale: the factor applied to the sites (a finite number).
        out_anchors_wp: ``[E * ring_samples]`` vec2. out_count_wp: ``[E]`` int32.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: an integer out of its bounds, a non-finite scale, or arrays of the
            wrong dtype or size.
    """
    who = "select_voronoi_anchors_per_env"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    g, m, scale = _static(who, grid, ring_samples, scale)
    for name, arr in (("jitter_wp", jitter_wp), ("ring_wp", ring_wp), ("wobble_wp", wobble_wp)):
        _check_array(who, name, arr, wp.float32, E)
    _check_array(who, "out_anchors_wp", out_anchors_wp, wp.vec2, E * m)
    _check_array(who, "out_count_wp", out_count_wp, wp.int32, E)
    ring_lo, ring_hi = _bounds(VoronoiParams, "ring")
    hi = wp.vec4(
        _bounds(VoronoiParams, "jitter")[1], ring_lo, ring_hi, _bounds(VoronoiParams, "wobble")[1]
    )
    args = [seeds_wp, salt("voronoi.sites"), salt("voronoi.ring"), g, jitter_wp, ring_wp]
    args += [wobble_wp, hi, m, scale, out_anchors_wp, out_count_wp]
    ctx.launch(_voronoi_anchors_per_env_k, E, args)
    debug_sync(ctx)


def voronoi_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_voronoi_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the 0.1 knobs ``grid``,
            ``jitter``, ``ring``, ``wobble``, ``ring_samples``); its ``generator_params`` (a
            ``VoronoiParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the Stage's buffers ``anchors`` and ``anchor_count``; the raw
        loop, ``raw = ring_samples * max(4, ceil(2 N / ring_samples))``).

    Raises:
        GeneratorError: a field out of its bounds, or a config without ``num_envs`` /
            ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        return {
            "anchors": wp.zeros(E * p.ring_samples, dtype=wp.vec2, device=dev),
            "anchor_count": wp.zeros(E, dtype=wp.int32, device=dev),
        }

    return _alloc_builtin(Voronoi, config, make)


def generate_voronoi_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``voronoi`` generator as a 0.1 function: walks a wobbly ring through a
    jittered-grid Voronoi diagram and joins the sites of the cells it crosses, in order, by
    a closed Catmull-Rom spline.

    It launches the ``voronoi`` Stage's own two kernels with the same salts
    (``voronoi.sites``, ``voronoi.ring``): they already take every Params field as a scalar
    argument, so separate scalar kernels would duplicate them wholesale; the helper packs
    the rest (the all-envs mask, the buffers) from ``scratch``. For the same seeds and
    Params it writes the Stage's bytes with ``repair=False`` (the 0.1 tracks: the field and
    its ``spacing`` and ``corner_radius`` are not read).

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``voronoi_alloc_scratch``; the Params used are the ones
            it resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2 (the ``GeneratorSpec`` contract): the raw loop
            resampled by arc length to ``N = config.num_points`` points, as the pipeline
            resamples the Stage's; or ``[E * scratch.raw]`` vec2: the Stage's raw loop itself
            (``scratch.count[e]`` points, NaN after them).
        out_valid_wp: ``[E]`` int32, filled with 1, and 0 for an env with under 3 anchors.
        scratch: from ``voronoi_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, xy, resample = _begin_builtin(
        "voronoi", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, m, active = scratch.num_envs, scratch.raw, p.ring_samples, scratch.active
    ctrl, ctrl_count = b["anchors"], b["anchor_count"]
    a1 = [seeds_wp, active, salt("voronoi.sites"), salt("voronoi.ring"), p.grid, p.jitter]
    a1 += [p.ring, p.wobble, m, float(config.scale), ctrl, ctrl_count, out_valid_wp]
    ctx.launch(_gk._voronoi_anchors_k, E, a1)
    a2 = [ctrl, ctrl_count, m, raw // m, active, raw, xy, scratch.count]
    ctx.launch(_gk._closed_cr_k, E * raw, a2)
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ = [
    "generate_voronoi_warp",
    "select_voronoi_anchors",
    "select_voronoi_anchors_per_env",
    "voronoi_alloc_scratch",
]
