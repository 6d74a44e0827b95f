"""The 0.1 z profile functions (deprecated, silent; removed in 1.0).

- ``apply_z_profile(seeds_wp, config, out_z_wp)``: the heights the ``z_profile`` stage
  writes for ``config.z_profile``;
- ``apply_z_profile_knots(seeds_wp, knots, amplitude, num_points, out_z_wp)``: the same
  for explicit knots and amplitude.

The height of point ``i`` of env ``e`` (``N`` points) is ``amplitude * v(i * knots / N)``:
``v`` is the periodic uniform Catmull-Rom spline through ``knots`` values
``2 * rand01(key, k) - 1`` of the stream ``z_profile`` of the env's base seed. It depends
only on the seed and the point's index, not on the centerline. The registered stage reads
``amplitude`` from a one-element device buffer (a dynamic field); these functions launch
a scalar kernel (``amplitude`` a kernel argument) that gives the same bytes. Both take
``ctx=None`` last (a ``LaunchContext`` on the config's or the seeds' device when omitted)
and sync after their launch in debug mode (``PROCGEN_NB_DEBUG_SYNC``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import warp as wp

from ...errors import GeneratorError, ParamsError
from ..exec import LaunchContext, salt
from ..generators import ZProfileParams
from ..ops.funcs import catmull_rom_f, rand01, stream_key
from ._legacy import debug_sync
from .warp_generate import _check_array, _field_float, _field_int, _seeds_ctx

# portable bytes: no host-specific ISA flags, no FMA contraction (as the Stages' kernels)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})


@wp.kernel
def _z_profile_scalar_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    knots: int,
    amplitude: float,
    n: int,
    z: wp.array(dtype=float),
):
    tid = wp.tid()
    e = tid // n
    i = tid - e * n
    key = stream_key(seeds[e], salt)
    u = float(i) * float(knots) / float(n)
    k = int(wp.floor(u))
    t = u - float(k)
    v = catmull_rom_f(
        2.0 * rand01(key, (k + knots - 1) % knots) - 1.0,
        2.0 * rand01(key, k % knots) - 1.0,
        2.0 * rand01(key, (k + 1) % knots) - 1.0,
        2.0 * rand01(key, (k + 2) % knots) - 1.0,
        t,
    )
    z[tid] = amplitude * v


def apply_z_profile_knots(
    seeds_wp: wp.array,
    knots: int,
    amplitude: float,
    num_points: int,
    out_z_wp: wp.array,
    ctx: Any = None,
) -> None:
    """Writes each env's heights for ``knots`` and ``amplitude`` (the ``z_profile`` stage's).

    Args:
        seeds_wp: ``[E]`` int32 base seeds (the generator's, as the stage reads them).
        knots: height knots along the track (an integer in ``ZProfileParams``' bounds,
            [2, 64]).
        amplitude: the largest height above or below 0 (a finite number >= 0).
        num_points: N, points per env (an integer >= 1).
        out_z_wp: ``[E * num_points]`` float32 heights.
        ctx: the launch context (a ``LaunchContext`` on the seeds' device when None).

    Raises:
        GeneratorError: ``knots`` out of its bounds, a negative or non-finite amplitude, a
            ``num_points`` below 1, or arrays of the wrong dtype or size.
    """
    who = "apply_z_profile_knots"
    ctx, E = _seeds_ctx(who, seeds_wp, ctx)
    knots = _field_int(who, "knots", knots, ZProfileParams, "knots")
    amp = _field_float(who, "amplitude", amplitude)
    if amp < 0.0:
        raise GeneratorError(f"{who} amplitude: expected a number >= 0, got {amplitude!r}")
    ok = not isinstance(num_points, bool) and isinstance(num_points, int) and num_points >= 1
    if not ok:
        raise GeneratorError(f"{who} num_points: expected an integer >= 1, got {num_points!r}")
    _check_array(who, "out_z_wp", out_z_wp, wp.float32, E * num_points)
    args = [seeds_wp, salt("z_profile"), knots, amp, num_points, out_z_wp]
    ctx.launch(_z_profile_scalar_k, E * num_points, args)
    debug_sync(ctx)


def apply_z_profile(seeds_wp: wp.array, config: Any, out_z_wp: wp.array, ctx: Any = None) -> None:
    """Writes the heights the ``z_profile`` stage writes for ``config.z_profile``.

    Args:
        seeds_wp: ``[config.num_envs]`` int32 base seeds.
        config: a ``TrackGenConfig``: ``num_envs``, ``num_points``, ``device`` and
            ``z_profile`` (True for the defaults, a dict of ``ZProfileParams`` fields or a
            ``ZProfileParams``; None or False, a flat track, fills ``out_z_wp`` with 0).
        out_z_wp: ``[num_envs * num_points]`` float32 heights.
        ctx: the launch context (a ``LaunchContext`` on ``config.device`` when None).

    Raises:
        GeneratorError: a ``z_profile`` ``ZProfileParams`` refuses (the message names the
            field), or arrays of the wrong dtype or size.
    """
    who = "apply_z_profile"
    E, N = int(config.num_envs), int(config.num_points)
    _check_array(who, "seeds_wp", seeds_wp, wp.int32, E)
    _check_array(who, "out_z_wp", out_z_wp, wp.float32, E * N)
    if ctx is None:
        dev = getattr(config, "device", None)
        ctx = LaunchContext(str(dev) if dev is not None else None)
    zp = getattr(config, "z_profile", None)
    if zp is None or zp is False:
        ctx.fill(out_z_wp, 0.0)
        debug_sync(ctx)
        return
    if zp is not True and not isinstance(zp, Mapping | ZProfileParams):
        raise GeneratorError(
            f"{who} config.z_profile: expected None, False, True, a dict of ZProfileParams "
            f"fields or a ZProfileParams, got {zp!r}"
        )
    try:
        p = ZProfileParams.resolve(None if zp is True else zp)
    except ParamsError as exc:
        raise GeneratorError(f"{who} config.z_profile: {exc}") from exc
    apply_z_profile_knots(seeds_wp, p.knots, p.amplitude, N, out_z_wp, ctx=ctx)


__all__ = ["apply_z_profile", "apply_z_profile_knots"]
