"""The 0.1 module functions of the built-in ``checkpoint`` generator (deprecated, silent).

- ``checkpoint_alloc_scratch`` / ``generate_checkpoint_warp``: the generator as a
  ``GeneratorSpec`` pair; removed in 1.0 (the registered ``checkpoint`` is a Stage that does
  not call them).
- ``sample_checkpoint_rings``: the ring of checkpoints the Stage samples (jittered angle and
  radius around a circle), for scalar Params clamped on the host to ``CheckpointParams``'
  bounds; removed in 1.0.
- ``sample_checkpoint_rings_per_env``: the same samples for per-env ``[E]`` jitter arrays,
  clamped on the device; it stays after 1.0.

Streams: ``checkpoint.angle`` (index ``k`` jitters angle ``k``, index ``n`` is the phase)
and ``checkpoint.radius``. Every function takes ``ctx=None`` last (a ``LaunchContext`` on
the config's or the seeds' device when omitted) and syncs after its launches in debug mode.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..exec import salt
from ..generators import Checkpoint, CheckpointParams
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
def _checkpoint_point(
    seed: wp.int32, salt_r: int, salt_a: int, n: int, k: int, rj: float, aj: float, scale: float
) -> wp.vec2:
    """Returns checkpoint ``k`` of ``n`` of an env, as the Stage samples it."""
    ka = stream_key(seed, salt_a)
    kr = stream_key(seed, salt_r)
    phase = _TWO_PI * rand01(ka, n)
    ang = _TWO_PI * (float(k) + aj * (rand01(ka, k) - 0.5)) / float(n) + phase
    rad = (1.0 + rj * (2.0 * rand01(kr, k) - 1.0)) / (1.0 + rj)
    return wp.vec2(wp.cos(ang), wp.sin(ang)) * (rad * scale)


@wp.kernel
def _checkpoint_ctrl_scalar_k(
    seeds: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    n: int,
    radius_jitter: float,
    angle_jitter: float,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    e = tid // n
    k = tid - e * n
    ctrl[tid] = _checkpoint_point(
        seeds[e], salt_r, salt_a, n, k, radius_jitter, angle_jitter, scale
    )


@wp.kernel
def _checkpoint_ctrl_per_env_k(
    seeds: wp.array(dtype=wp.int32),
    salt_r: int,
    salt_a: int,
    n: int,
    radius_jitter: wp.array(dtype=float),
    r_hi: float,
    angle_jitter: wp.array(dtype=float),
    a_hi: float,
    scale: float,
    ctrl: wp.array(dtype=wp.vec2),
):
    tid = wp.tid()
    e = tid // n
    k = tid - e * n
    rj = _clamp_to(radius_jitter[e], 0.0, r_hi)
    aj = _clamp_to(angle_jitter[e], 0.0, a_hi)
    ctrl[tid] = _checkpoint_point(seeds[e], salt_r, salt_a, n, k, rj, aj, scale)


def sample_checkpoint_rings(
    seeds_wp: wp.array,
    checkpoints: int,
    radius_jitter: float,
    angle_jitter: float,
    scale: float,
    out_ctrl_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the checkpoints ``checkpoint`` samples around its circle, for every env.

    Checkpoint ``k`` of env ``e`` sits at angle ``2 pi (k + angle_jitter (u - 1/2)) / n +
    phase`` and radius ``scale (1 + radius_jitter (2 v - 1)) / (1 + radius_jitter)``. A
    scalar kernel (the Params are kernel arguments); it shares its body with the
    array-reading kernel of ``sample_checkpoint_rings_per_env`` and gives the ``checkpoint``
    Stage's bytes.

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        checkpoints: checkpoints per env (an integer in [4, 64]).
        radius_jitter: clamped to ``[0, 0.9]`` here. angle_jitter: clamped to ``[0, 0.95]``.
        scale: the radius of the circle (a finite number).
        out_ctrl_wp: ``[E * checkpoints]`` vec2.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: ``checkpoints`` out of its bounds, a non-finite number, or arrays of
            the wrong dtype or size.
    """
    who = "sample_checkpoint_rings"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    n = _field_int(who, "checkpoints", checkpoints, CheckpointParams, "checkpoints")
    rj = _field_float(
        who, "radius_jitter", radius_jitter, _bounds(CheckpointParams, "radius_jitter")
    )
    aj = _field_float(who, "angle_jitter", angle_jitter, _bounds(CheckpointParams, "angle_jitter"))
    scale = _field_float(who, "scale", scale)
    _check_array(who, "out_ctrl_wp", out_ctrl_wp, wp.vec2, E * n)
    args = [seeds_wp, salt("checkpoint.radius"), salt("checkpoint.angle"), n, rj, aj, scale]
    ctx.launch(_checkpoint_ctrl_scalar_k, E * n, [*args, out_ctrl_wp])
    debug_sync(ctx)


def sample_checkpoint_rings_per_env(
    seeds_wp: wp.array,
    checkpoints: int,
    radius_jitter_wp: wp.array,
    angle_jitter_wp: wp.array,
    scale: float,
    out_ctrl_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes the checkpoints ``checkpoint`` samples, with jitters per env.

    Env ``e`` gets the samples ``sample_checkpoint_rings`` gives for ``radius_jitter_wp[e]``
    and ``angle_jitter_wp[e]``, each clamped to its ``CheckpointParams`` bounds on the
    device (NaN: 0): an array-reading kernel, so a curriculum can vary them per env.

    Args:
        seeds_wp: ``[E]`` int32 base seeds.
        checkpoints: checkpoints per env (an integer in [4, 64]).
        radius_jitter_wp, angle_jitter_wp: ``[E]`` float32 (clamped, not refused).
        scale: the radius of the circle (a finite number).
        out_ctrl_wp: ``[E * checkpoints]`` vec2.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: ``checkpoints`` out of its bounds, a non-finite scale, or arrays of
            the wrong dtype or size.
    """
    who = "sample_checkpoint_rings_per_env"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    n = _field_int(who, "checkpoints", checkpoints, CheckpointParams, "checkpoints")
    scale = _field_float(who, "scale", scale)
    _check_array(who, "radius_jitter_wp", radius_jitter_wp, wp.float32, E)
    _check_array(who, "angle_jitter_wp", angle_jitter_wp, wp.float32, E)
    _check_array(who, "out_ctrl_wp", out_ctrl_wp, wp.vec2, E * n)
    r_hi = float(_bounds(CheckpointParams, "radius_jitter")[1])
    a_hi = float(_bounds(CheckpointParams, "angle_jitter")[1])
    args = [seeds_wp, salt("checkpoint.radius"), salt("checkpoint.angle"), n]
    args += [radius_jitter_wp, r_hi, angle_jitter_wp, a_hi, scale, out_ctrl_wp]
    ctx.launch(_checkpoint_ctrl_per_env_k, E * n, args)
    debug_sync(ctx)


def checkpoint_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_checkpoint_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the 0.1 knobs ``checkpoints``,
            ``radius_jitter``, ``angle_jitter``); its ``generator_params`` (a
            ``CheckpointParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the Stage's buffers ``ctrl`` and ``ctrl_count``; the raw loop,
        ``raw = checkpoints * max(2, ceil(N / checkpoints))``).

    Raises:
        GeneratorError: a field out of its bounds, or a config without ``num_envs`` /
            ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        return {
            "ctrl": wp.zeros(E * p.checkpoints, dtype=wp.vec2, device=dev),
            "ctrl_count": wp.zeros(E, dtype=wp.int32, device=dev),
        }

    return _alloc_builtin(Checkpoint, config, make)


def generate_checkpoint_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``checkpoint`` generator as a 0.1 function: checkpoints around a circle with
    jittered angle and radius, joined by a closed Catmull-Rom spline.

    It launches the ``checkpoint`` Stage's own two kernels with the same salts
    (``checkpoint.radius``, ``checkpoint.angle``): they already take every Params field as a
    scalar argument, so separate scalar kernels would duplicate them wholesale; the helper
    packs the rest (the all-envs mask, the buffers) from ``scratch``. For the same seeds and
    Params it writes the Stage's bytes.

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``checkpoint_alloc_scratch``; the Params used are the
            ones it resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2 (the ``GeneratorSpec`` contract): the raw loop
            resampled by arc length to ``N = config.num_points`` points, as the pipeline
            resamples the Stage's (when the raw size is ``N``, the raw loop itself); or
            ``[E * scratch.raw]`` vec2: the Stage's raw loop itself.
        out_valid_wp: ``[E]`` int32, filled with 1 (``checkpoint`` rejects nothing).
        scratch: from ``checkpoint_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, xy, resample = _begin_builtin(
        "checkpoint", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, n, active = scratch.num_envs, scratch.raw, p.checkpoints, scratch.active
    ctrl, ctrl_count = b["ctrl"], b["ctrl_count"]
    a1 = [seeds_wp, active, salt("checkpoint.radius"), salt("checkpoint.angle"), n]
    a1 += [p.radius_jitter, p.angle_jitter, float(config.scale), ctrl, ctrl_count]
    ctx.launch(_gk._checkpoint_ctrl_k, E * n, a1)
    a2 = [ctrl, ctrl_count, n, raw // n, active, raw, xy, scratch.count]
    ctx.launch(_gk._closed_cr_k, E * raw, a2)
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ = [
    "checkpoint_alloc_scratch",
    "generate_checkpoint_warp",
    "sample_checkpoint_rings",
    "sample_checkpoint_rings_per_env",
]
