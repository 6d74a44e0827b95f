"""The 0.1 module functions of the built-in ``polar`` generator (deprecated, silent).

- ``polar_alloc_scratch`` / ``generate_polar_warp``: the generator as a ``GeneratorSpec``
  pair; removed in 1.0 (the registered ``polar`` is a Stage that does not call them).
- ``sample_polar_controls``: the control radii and the phase the Stage samples, for
  scalar Params; it still expects a pre-clamped ``radius_jitter`` (it does not clamp);
  removed in 1.0.
- ``sample_polar_controls_per_env``: the same samples for a per-env ``[E]`` jitter array,
  clamped to ``PolarParams``' bounds on the device; it stays after 1.0.

Streams: ``polar.radius`` (radius ``k`` of env ``e`` is
``1 + jitter * (2 * rand01(key_r, k) - 1)``) and ``polar.phase`` (``2 pi * rand01(key_a, 0)``).
Every function takes ``ctx=None`` last (a ``LaunchContext`` on the config's or the seeds'
device when omitted) and syncs after its launches in debug mode (``PROCGEN_NB_DEBUG_SYNC``).
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..exec import salt
from ..generators import Polar, PolarParams
from ..generators import _kernels as _gk
from ..ops.funcs import rand01, stream_key
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


@wp.func
def _polar_control(
    seed: wp.int32,
    salt_r: int,
    salt_a: int,
    e: int,
    k: int,
    jitter: float,
    radii: wp.array(dtype=float),
    phase: wp.array(dtype=float),
    lobes: int,
):
    """Writes control radius ``k`` of env ``e`` (and its phase at ``k == 0``), as the Stage."""
    radii[e * lobes + k] = 1.0 + jitter * (2.0 * rand01(stream_key(seed, salt_r), k) - 1.0)
    if k == 0:
        phase[e] = _TWO_PI * rand01(stream_key(seed, salt_a), 0)


@wp.kernel
def _polar_ctrl_scalar_k(
    seeds: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    lobes: int,
    jitter: float,
    radii: wp.array(dtype=float),
    phase: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // lobes
    _polar_control(seeds[e], salt_r, salt_a, e, tid - e * lobes, jitter, radii, phase, lobes)


@wp.kernel
def _polar_ctrl_per_env_k(
    seeds: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    lobes: int,
    jitter: wp.array(dtype=float),
    lo: float,
    hi: float,
    radii: wp.array(dtype=float),
    phase: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // lobes
    j = _clamp_to(jitter[e], lo, hi)
    _polar_control(seeds[e], salt_r, salt_a, e, tid - e * lobes, j, radii, phase, lobes)


def sample_polar_controls(
    seeds_wp: wp.array,
    lobes: int,
    radius_jitter: float,
    out_radii_wp: wp.array,
    out_phase_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the control radii and the phase ``polar`` samples, for every env.

    A scalar kernel (the jitter is a kernel argument); it shares its body with the
    array-reading kernel of ``sample_polar_controls_per_env`` and gives the ``polar``
    Stage's bytes.

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        lobes: control radii per env (an integer in ``PolarParams``' bounds, [3, 64]).
        radius_jitter: the jitter, pre-clamped by the caller to ``[0, 1]`` (the bounds
            of ``PolarParams.radius_jitter``): it is used as given, not clamped (a jitter
            above 1 gives negative radii). ``sample_polar_controls_per_env`` clamps.
        out_radii_wp: ``[E * lobes]`` float32: radius ``k`` of env ``e`` at ``e * lobes + k``.
        out_phase_wp: ``[E]`` float32 phases in ``[0, 2 pi)``.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: ``lobes`` out of its bounds, a non-finite jitter, or arrays of the
            wrong dtype or size.
    """
    who = "sample_polar_controls"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    lobes = _field_int(who, "lobes", lobes, PolarParams, "lobes")
    jitter = _field_float(who, "radius_jitter", radius_jitter)
    _check_array(who, "out_radii_wp", out_radii_wp, wp.float32, E * lobes)
    _check_array(who, "out_phase_wp", out_phase_wp, wp.float32, E)
    args = [seeds_wp, salt("polar.radius"), salt("polar.phase"), lobes, jitter]
    ctx.launch(_polar_ctrl_scalar_k, E * lobes, [*args, out_radii_wp, out_phase_wp])
    debug_sync(ctx)


def sample_polar_controls_per_env(
    seeds_wp: wp.array,
    lobes: int,
    radius_jitter_wp: wp.array,
    out_radii_wp: wp.array,
    out_phase_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the control radii and the phase ``polar`` samples, with one jitter per env.

    Env ``e`` gets the samples ``sample_polar_controls`` gives for the jitter
    ``radius_jitter_wp[e]`` clamped to ``PolarParams``' bounds ``[0, 1]`` (NaN: 0), on
    the device (an array-reading kernel: a curriculum can vary the jitter per env).

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        lobes: control radii per env (an integer in [3, 64]).
        radius_jitter_wp: ``[E]`` float32 jitters (clamped, not refused).
        out_radii_wp: ``[E * lobes]`` float32. out_phase_wp: ``[E]`` float32.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: ``lobes`` out of its bounds, or arrays of the wrong dtype or size.
    """
    who = "sample_polar_controls_per_env"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    lobes = _field_int(who, "lobes", lobes, PolarParams, "lobes")
    _check_array(who, "radius_jitter_wp", radius_jitter_wp, wp.float32, E)
    _check_array(who, "out_radii_wp", out_radii_wp, wp.float32, E * lobes)
    _check_array(who, "out_phase_wp", out_phase_wp, wp.float32, E)
    lo, hi = _bounds(PolarParams, "radius_jitter")
    args = [seeds_wp, salt("polar.radius"), salt("polar.phase"), lobes, radius_jitter_wp]
    args += [float(lo), float(hi), out_radii_wp, out_phase_wp]
    ctx.launch(_polar_ctrl_per_env_k, E * lobes, args)
    debug_sync(ctx)


def polar_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_polar_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the 0.1 knobs ``lobes``,
            ``radius_jitter``, ``min_radius``); its ``generator_params`` (a ``PolarParams``,
            a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the ``polar`` Stage's buffers ``radii`` and ``phase``, and
        one-word ``radius_jitter`` and ``min_radius`` buffers of the resolved Params; the raw
        loop has ``N = config.num_points`` points, so nothing is resampled).

    Raises:
        GeneratorError: a field out of its bounds, or a config without ``num_envs`` /
            ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        return {
            "radii": wp.zeros(E * p.lobes, dtype=float, device=dev),
            "phase": wp.zeros(E, dtype=float, device=dev),
            # the dynamic fields, in one-word buffers as the Stage's kernels read them
            "radius_jitter": wp.array([p.radius_jitter], dtype=float, device=dev),
            "min_radius": wp.array([p.min_radius], dtype=float, device=dev),
        }

    return _alloc_builtin(Polar, config, make)


def generate_polar_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``polar`` generator as a 0.1 function: ``r(theta)`` by a periodic Catmull-Rom
    spline through jittered radii, star-shaped around the origin (simple, counter-clockwise).

    It launches the ``polar`` Stage's own two kernels with the same salts (``polar.radius``,
    ``polar.phase``), the dynamic fields ``radius_jitter`` and ``min_radius`` in the
    one-word buffers of ``scratch`` as the Stage's ``b.param`` gives them; the helper packs
    the rest (the all-envs mask, the buffers) from ``scratch``. For the same seeds and Params it writes the
    Stage's raw loop, byte for byte.

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``polar_alloc_scratch``; the Params used are the ones it
            resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2, ``N = config.num_points`` (the raw size of
            ``polar`` is ``N``).
        out_valid_wp: ``[E]`` int32, filled with 1 (``polar`` rejects nothing).
        scratch: from ``polar_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, xy, resample = _begin_builtin(
        "polar", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, lobes, jitter = scratch.num_envs, scratch.raw, p.lobes, b["radius_jitter"]
    radii, phase, active = b["radii"], b["phase"], scratch.active
    a1 = [seeds_wp, active, salt("polar.radius"), salt("polar.phase"), lobes, jitter]
    ctx.launch(_gk._polar_ctrl_k, E * lobes, [*a1, radii, phase])
    a2 = [radii, phase, active, lobes, jitter, b["min_radius"], raw, float(config.scale), xy]
    ctx.launch(_gk._polar_k, E * raw, a2)
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ = [
    "generate_polar_warp",
    "polar_alloc_scratch",
    "sample_polar_controls",
    "sample_polar_controls_per_env",
]
