"""Per-track metrics, computed on the device for every env at once.

``metrics.compute(result)`` (or ``result.metrics()``) returns one NumPy array per metric,
one value per env; ``metrics.table(result)`` the same as a ``pyarrow.Table`` (a dict of
arrays is all pyarrow needs: no pandas). Four launches per call, each one thread per env
(on the CPU, per worker thread over its share of the envs), and one readback per metric;
no Python loop over envs.

Definitions (``p_i`` the ``N`` points of a closed loop, ``L`` its length, ``h = L/N``):

- ``length``: ``L``, the sum of the ``N`` segment lengths (the closing one too).
- ``min_turn_radius``: the smallest circumradius of three consecutive points (``inf``
  when every triple is collinear): the quantity ``ValidityParams.min_turn_radius`` checks.
- ``max_curvature``: the largest ``|turning angle| / mean of the two segment lengths`` at
  a point (radians per world unit).
- ``min_clearance``: the smallest ``|p_i - p_j|`` over pairs whose distance along the
  loop (index distance times ``h``) exceeds ``pi/2`` times it (so the two points are not
  neighbours on a bend: a pinch or two stretches side by side); ``L/pi``, the diameter
  of the circle of the same length, when no pair qualifies. It is the largest
  ``track_width`` the clearance check passes (every smaller width passes too).
- ``turning_number``: the summed turning angles over ``2 pi``, rounded (+1 counter-clockwise).
- ``crossings``: crossing segment pairs, as the validity stage counted them
  (``TrackResult.crossings``; 0 for a loop that is not closed).
- ``straight_fraction``: the share of points whose curvature is below
  ``2 pi / (straight_ratio * L)``: they bend less than a circle ``straight_ratio`` times the
  size of the circle of the same length.
- ``extent_x``, ``extent_y``: the size of the axis-aligned bounding box.

A loop with a non-finite point gets NaN (``turning_number`` 0).

Opt-in racing metrics (``compute(result, racing={...})``, the keyword arguments of
``racing.racing_line``: ``vehicle``, ``w_right``, ``w_left``, ``scale``): ``lap_time``,
``mean_speed``, ``full_throttle_fraction`` and ``difficulty`` in ``[0, 1)``, as defined in
``procgen_nb.track_gen.racing`` (``racing.LAP_METRICS``). Without ``racing`` the metrics
are the ones above, byte for byte.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import warp as wp

from .._handout import keep_held
from ..errors import ParamsError
from . import _metrics_kernels as _mk

#: metric name -> (NumPy dtype, unit, one-line description), in table order
METRICS: dict[str, tuple[str, str, str]] = {
    "length": ("float32", "world", "length of the closed loop"),
    "min_turn_radius": ("float32", "world", "smallest circumradius of consecutive points"),
    "max_curvature": ("float32", "1/world", "largest turning angle per unit length"),
    "min_clearance": ("float32", "world", "smallest distance between non-adjacent points"),
    "turning_number": ("int32", "", "summed turning angles / 2 pi"),
    "crossings": ("int32", "", "crossing segment pairs"),
    "straight_fraction": ("float32", "", "share of points that are nearly straight"),
    "extent_x": ("float32", "world", "bounding box width"),
    "extent_y": ("float32", "world", "bounding box height"),
}


class _Scratch:
    """The device arrays of one result's metrics (allocated once, reused call after call),
    and the shares of the envs the CPU threads split (``_shares``)."""

    def __init__(self, device: Any, E: int, N: int):
        f32 = lambda: wp.zeros(E, dtype=wp.float32, device=device)  # noqa: E731
        f64 = lambda: wp.zeros(E, dtype=wp.float64, device=device)  # noqa: E731
        self.length64, self.hmax, self.hmin, self.clear64 = f64(), f64(), f64(), f64()
        self.cum = wp.zeros(E * (N + 1), dtype=wp.float64, device=device)
        self.start = wp.zeros(E * N, dtype=wp.int32, device=device)
        self.out = {
            "length": f32(),
            "min_turn_radius": f32(),
            "max_curvature": f32(),
            "min_clearance": f32(),
            "turning_number": wp.zeros(E, dtype=wp.int32, device=device),
            "straight_fraction": f32(),
            "extent_x": f32(),
            "extent_y": f32(),
        }
        self.shares: list[_Share] | None = None
        self.whole: _Share | None = None  # every env, on the result's context (captures)


class _Share:
    """Envs ``[a, b)``: views of the result's points and of the scratch arrays, and the
    launch context of the thread that runs them."""

    def __init__(self, ctx: Any, xy: wp.array, s: _Scratch, N: int, a: int, b: int):
        self.ctx, self.E, self.N = ctx, b - a, N
        self.xy = xy[a * N : b * N]
        self.cum, self.start = s.cum[a * (N + 1) : b * (N + 1)], s.start[a * N : b * N]
        env = lambda arr: arr[a:b]  # noqa: E731
        self.length64, self.hmax, self.hmin, self.clear64 = map(
            env, (s.length64, s.hmax, s.hmin, s.clear64)
        )
        self.out = {k: env(v) for k, v in s.out.items()}

    def run(self, ratio: float, clearance: bool) -> None:
        ctx, E, N, o = self.ctx, self.E, self.N, self.out
        ctx.launch(
            _mk._env_metrics_k,
            E,
            [self.xy, N, ratio, self.length64, self.hmax, o["min_turn_radius"]]
            + [o["max_curvature"], o["turning_number"], o["straight_fraction"], o["extent_x"]]
            + [o["extent_y"], self.clear64, self.hmin, self.cum],
        )
        if clearance:
            ctx.launch(_mk._start_k, E, [N, self.length64, self.hmin, self.cum, self.start])
            args = [self.xy, N, self.length64, self.hmax, self.start, self.clear64]
            ctx.launch(_mk._clearance_k, E, args)
        else:
            ctx.fill(self.clear64, math.nan)
        args = [self.clear64, self.length64, o["min_clearance"], o["length"]]
        ctx.launch(_mk._finish_k, E, args)


def _shares(result: Any, s: _Scratch) -> list[_Share]:
    """On the CPU, one share per worker thread as the pipeline splits a call
    (``_threads.threads_for``: ``PROCGEN_NB_THREADS``, enough work each); one elsewhere."""
    if s.shares is None:
        from . import _threads
        from .exec import LaunchContext

        ctx, E, N = result.ctx, result.num_envs, result.num_points
        T = 1
        if not wp.get_device(ctx.device).is_cuda:
            T = _threads.threads_for(E, N)
        cut = [E * t // T for t in range(T + 1)]
        ctxs = [ctx] + [LaunchContext(ctx.device) for _ in range(T - 1)]
        s.shares = [_Share(c, result.xy, s, N, a, b) for c, a, b in zip(ctxs, cut, cut[1:])]
    return s.shares


def _run_side_by_side(shares: list[_Share], ratio: float, clearance: bool) -> None:
    """Runs the shares as ``_threads._ThreadSplit.run`` runs a split call's parts (the first here,
    the others in its pool; a share the pool refuses runs here) and raises the first failed
    share's error after every share has finished."""
    from ._threads import _part_error, run_side_by_side

    errors = run_side_by_side([lambda sh=sh: sh.run(ratio, clearance) for sh in shares])
    if errors:
        raise _part_error(*errors[0])


def _check_ratio(straight_ratio: Any) -> float:
    ok = isinstance(straight_ratio, numbers.Real) and not isinstance(straight_ratio, bool)
    v = float(straight_ratio) if ok else math.nan
    if not (math.isfinite(v) and v > 0):
        raise ParamsError(f"metrics straight_ratio: expected a number > 0, got {straight_ratio!r}")
    return v


def enqueue(
    result: Any, straight_ratio: float = 2.0, clearance: bool = True
) -> dict[str, wp.array]:
    """Launches the metric kernels for ``result`` and returns the device arrays (``[E]``
    each, by name; ``crossings`` is the result's own array). Nothing is read back. The
    next call on the same result writes the same arrays (a graph's result handed out over
    them is moved to a copy first).

    ``clearance=False`` skips ``min_clearance`` (the one metric that looks at pairs of
    points: most of the cost on the CPU) and leaves it NaN. On the CPU the envs are split
    across worker threads as the pipeline splits a call (``PROCGEN_NB_THREADS``); every
    kernel works per env, so the values are the same. Inside a recording (``ctx.record``)
    every launch goes to the result's context from this thread.

    Raises:
        ParamsError: a ``straight_ratio`` that is not a number > 0, or a result without
            its launch context.
    """
    ratio = _check_ratio(straight_ratio)
    ctx = getattr(result, "ctx", None)
    if ctx is None:
        raise ParamsError(
            f"metrics result: expected a TrackResult from a generator, got {result!r}"
        )
    E, N = result.num_envs, result.num_points
    cache = result.metric_scratch
    s = cache.get("scratch")
    if s is None:
        s = cache["scratch"] = _Scratch(ctx.device, E, N)
    from .exec import capturing

    keep_held(list(s.out.values()))  # a graph's kept result over them keeps its values
    first = s.shares is None
    shares = _shares(result, s)
    if capturing(ctx):  # recorded: every launch on the result's context, in this thread
        if s.whole is None:
            s.whole = _Share(ctx, result.xy, s, N, 0, E)
        s.whole.run(ratio, clearance)
    elif first or len(shares) == 1:  # a first call loads the kernels: one after the other
        for sh in shares:
            sh.run(ratio, clearance)
    else:
        _run_side_by_side(shares, ratio, clearance)
    arrays = dict(s.out)
    arrays["crossings"] = result.crossings
    return {name: arrays[name] for name in METRICS}


def compute(
    result: Any,
    straight_ratio: float = 2.0,
    clearance: bool = True,
    racing: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """Returns every metric of ``result`` as ``{name: [E] NumPy array}`` (see ``METRICS``;
    ``clearance=False``: ``min_clearance`` NaN, as ``enqueue``). ``racing``: the keyword
    arguments of ``racing.racing_line`` (``{}`` for its defaults); given, the names of
    ``racing.LAP_METRICS`` follow.

    Raises:
        ParamsError: see ``enqueue`` and ``racing.racing_line``; a ``racing`` that is not
            a dict, or a key of it not in ``racing.OPTIONS`` (named with the accepted ones).
    """
    arrays = enqueue(result, straight_ratio, clearance)
    if racing is not None:
        arrays.update(_racing_arrays(result, racing))
    ctx = result.ctx
    return {name: np.asarray(ctx.readback(arr)) for name, arr in arrays.items()}


def _racing_arrays(result: Any, racing: Any) -> dict[str, wp.array]:
    from . import racing as _racing

    if not isinstance(racing, dict):
        raise ParamsError(
            "metrics racing: expected a dict of racing_line keyword arguments, got "
            f"{type(racing).__name__}"
        )
    line = _racing.racing_line(result, **_racing.check_options("metrics racing", racing))
    return {name: getattr(line, name).data for name in _racing.LAP_METRICS}


def table(result: Any, straight_ratio: float = 2.0, racing: dict[str, Any] | None = None) -> Any:
    """Returns the metrics with ``env``, ``valid`` and ``reason`` as a ``pyarrow.Table``
    (``racing``: as ``compute``).

    Raises:
        ParamsError: see ``compute``.
    """
    import pyarrow as pa

    cols = compute(result, straight_ratio, racing=racing)
    ctx = result.ctx
    head = {
        "env": np.arange(result.num_envs, dtype=np.int32),
        "valid": np.asarray(ctx.readback(result.valid)),
        "reason": np.asarray(ctx.readback(result.reason)),
    }
    return pa.table({**head, **cols})


__all__ = ["METRICS", "compute", "enqueue", "table"]
