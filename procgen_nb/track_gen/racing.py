"""Racing lines and lap times for every env of a batch, on the device.

``racing_line(result)`` finds, per env, the minimum-curvature line within the track less
half the vehicle's width and drives it with a forward-backward speed profile under a
friction circle. Everything runs in three launches (one thread per env each), a fixed
number of iterations, so it can be recorded; nothing is read back until a column is read.

The line: ``r_i = p_i + alpha_i n_i`` with ``p_i`` the centerline, ``n_i`` its left unit
normal (central differences) and ``-(w_right_i - width/2) <= alpha_i <= w_left_i - width/2``.
It minimises ``sum_i h_i kappa_i^2`` (``kappa_i`` the signed curvature of the circle through
``r_{i-1}, r_i, r_{i+1}``, ``h_i`` half the two centerline segments at ``p_i``: a discrete
``integral kappa^2 ds``), by ``iterations`` damped Gauss-Newton steps from the centerline,
each a box-constrained QP on the periodic pentadiagonal normal matrix solved by at most
``passes`` primal-dual active-set passes (a cyclic banded ``L D L^T`` solve each; a pass
whose active set repeats the last one's ends the step, every further pass giving the same
step). A circle's line is the widest circle that fits, an oval's cuts its corners.

``objective="linearised"`` solves TUMFTM's (``trajectory_planning_helpers.opt_min_curv``)
problem instead: ``kappa_i = (x'_i y''_i - y'_i x''_i) / (x'_i^2 + y'_i^2)^1.5`` with the
first derivatives (central differences) and the denominator held at the centerline's and
``p''_i = r_{i+1} - 2 r_i + r_{i-1}`` of the line, so ``kappa = k + J alpha`` is linear in
the offsets. As theirs, it minimises ``sum_i (2 k_i + (J alpha)_i)^2`` (unweighted; their
``quadprog.solve_qp`` minimises ``1/2 a^T H a + f^T a`` and is handed the ``H`` and ``f``
of ``|k + J a|^2``, which halves the quadratic term: reproduced to 1e-9 in the offsets with
their spline matrices), one box QP, never re-linearised, solved
from the centerline by damped proximal steps (the undamped active-set passes can cycle),
each a box QP by the same active-set passes, a step kept when it lowers the quadratic. Linearised about the centerline, it favours
the inside: a circle's line is the inner edge (``kappa_lin = (R - a) / R^2`` for an offset
``a`` inwards), the shortest circle that fits.

The speed: per point the limit ``min(v_max, sqrt(mu g / |kappa_i|))``; on segment ``i``
(``ds_i`` long) the longitudinal acceleration ``a_i = (v_{i+1}^2 - v_i^2) / (2 ds_i)``
satisfies ``|a_i| <= a_max`` and ``a_i^2 + max(v_i^2 |kappa_i|, v_{i+1}^2 |kappa_{i+1}|)^2
<= (mu g)^2``. The lap time is ``sum 2 ds_i / (v_i + v_{i+1})``.

Per lap (``RacingLine.lap_time``, ``mean_speed``, ``full_throttle_fraction``,
``difficulty``): ``mean_speed`` is the line's length over the lap time;
``full_throttle_fraction`` the share of the line's length on segments driven at ``v_max``
(both ends within 0.01% of it) or accelerating at ``0.95 a_max`` or more; ``difficulty`` is
``1 - (length / v_max) / lap_time``: the share of the lap time lost to the friction circle
and ``a_max`` against driving the same line at top speed throughout, in ``[0, 1)`` (0: flat
out all the way; a circle of radius ``r`` below ``v_max^2 / (mu g)``:
``1 - sqrt(mu g r) / v_max``).

An env whose centerline has a non-finite or repeated point, a non-finite width, or a
width less than the vehicle's somewhere gets NaN in every output (checked on the device;
centerlines and widths given as host arrays are checked before anything runs and refused).

Outputs: each call returns new device arrays, so a ``RacingLine`` keeps its values whatever
is called later, except a call made inside a recording (``ctx.record`` or a capture open
where the result's context emits): it writes the result's own output set (one per ``E, N``,
allocated at the first call), which every recorded call over that result shares and every
replay rewrites; ``RacingLine.copy()`` keeps a recorded call's values past the next replay.
A recorded call takes its widths from the result's width attributes, a number (filled on the
device at each replay) or the generator's validity ``track_width``; ``[E, N]`` host arrays
are uploaded, so they are refused inside a recording.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from ..columns import Column
from ..errors import NotCapturableError, ParamsError
from . import _racing_kernels as _rk

#: Gauss-Newton steps and active-set passes per step (the defaults of ``racing_line``)
ITERATIONS, PASSES = 12, 8

#: the objectives ``racing_line`` accepts (the first the default)
OBJECTIVES = ("curvature", "linearised")

#: most proximal steps, and active-set passes per step, of the ``"linearised"`` objective's
#: one quadratic (the defaults of ``racing_line(objective="linearised")``). The steps start
#: undamped and stop at the minimum (an exact step that does not lower the quadratic); a
#: step whose passes cycle is refused and the next damped ten times more. 8 passes reach
#: SciPy's bounded least-squares minimum on 1800 badly spaced random loops (6: 1 miss)
LINEARISED_ITERATIONS, LINEARISED_PASSES = 24, 8


def _positive(name: str, value: Any, zero_ok: bool = False, owner: str = "VehicleParams") -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    v = float(value) if ok else math.nan
    if not (math.isfinite(v) and (v >= 0 if zero_ok else v > 0)):
        what = "a finite number >= 0" if zero_ok else "a finite number > 0"
        raise ParamsError(f"{owner} {name}: expected {what}, got {value!r}")
    return v


@dataclasses.dataclass(frozen=True)
class VehicleParams:
    """The car that drives the line, in SI units.

    Args:
        mu: tyre friction coefficient (> 0): the friction circle's radius is ``mu * g``.
        v_max: top speed, m/s (> 0).
        a_max: largest longitudinal acceleration and deceleration, m/s^2 (> 0).
        width: the car's width, m (>= 0): the line keeps half of it from each edge.
        g: gravity, m/s^2 (> 0).

    Raises:
        ParamsError: a value that is not a finite number in its range.

    >>> VehicleParams(mu=1.2, v_max=60.0).mu
    1.2
    """

    mu: float = 1.0
    v_max: float = 80.0
    a_max: float = 8.0
    width: float = 2.0
    g: float = 9.81

    def __post_init__(self) -> None:
        for name in ("mu", "v_max", "a_max", "g"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        object.__setattr__(self, "width", _positive("width", self.width, zero_ok=True))


@dataclasses.dataclass
class RacingLine:
    """The racing lines of a batch (device Columns; nothing read back until read).

    Attributes:
        xy: ``[E*N]`` Vec2 line points, m. speed: ``[E*N]`` Float, m/s.
        curvature: ``[E*N]`` Float signed curvature, 1/m (+ left).
        offset: ``[E*N]`` Float offset along the centerline's left normal, m.
        lap_time: ``[E]`` Float, s. mean_speed: ``[E]`` Float, m/s.
        full_throttle_fraction: ``[E]`` Float. difficulty: ``[E]`` Float in [0, 1).
        objective: ``[E]`` float64 ``wp.array``: ``sum h_i kappa_i^2`` (world units).
        num_envs, num_points: ``E``, ``N``.

    The arrays are the call's own (see the module docstring, "Outputs"): a later call does
    not change them, except that every replay of a recorded call rewrites the arrays that
    the recorded call returned.
    """

    xy: Column
    speed: Column
    curvature: Column
    offset: Column
    lap_time: Column
    mean_speed: Column
    full_throttle_fraction: Column
    difficulty: Column
    objective: wp.array
    num_envs: int
    num_points: int
    ctx: Any = dataclasses.field(repr=False, default=None)

    def copy(self) -> RacingLine:
        """Returns a RacingLine with its own device copy of every array (one device copy
        each, nothing read back).

        Raises:
            NotCapturableError: inside a recording (it allocates).
        """
        ctx = self.ctx

        def dup(a: wp.array) -> wp.array:
            b = ctx.empty(a.shape, a.dtype)
            ctx.copy(b, a)
            return b

        cols = {k: Column(dup(getattr(self, k).data), getattr(self, k).type) for k in _COLUMNS}
        return dataclasses.replace(self, **cols, objective=dup(self.objective))

    def numpy(self) -> dict[str, np.ndarray]:
        """Reads every output back: ``xy [E, N, 2]``, the per-point ones ``[E, N]``, the
        per-lap ones ``[E]`` (one readback each)."""
        E, N = self.num_envs, self.num_points
        rb = self.ctx.readback
        out = {"xy": rb(self.xy.data).reshape(E, N, 2)}
        for name in ("speed", "curvature", "offset"):
            out[name] = rb(getattr(self, name).data).reshape(E, N)
        for name in LAP_METRICS:
            out[name] = rb(getattr(self, name).data)
        out["objective"] = rb(self.objective)
        return out


#: per-lap outputs -> (NumPy dtype, unit, description), in table order
LAP_METRICS: dict[str, tuple[str, str, str]] = {
    "lap_time": ("float32", "s", "lap time of the racing line"),
    "mean_speed": ("float32", "m/s", "line length / lap time"),
    "full_throttle_fraction": ("float32", "", "share of the line driven flat out"),
    "difficulty": ("float32", "", "1 - (length / v_max) / lap_time"),
}


#: the RacingLine Columns, in output order
_COLUMNS = ("xy", "speed", "curvature", "offset", *LAP_METRICS)


def _outputs(alloc: Any, E: int, N: int) -> dict[str, wp.array]:
    """One output set, by ``RacingLine`` field (``objective`` float64 ``[E]``); every kernel
    writes every element, so ``alloc(shape, dtype)`` may leave them uninitialised."""
    out = {"xy": alloc(E * N, wp.vec2)}
    out.update({k: alloc(E * N, wp.float32) for k in ("speed", "curvature", "offset")})
    out.update({k: alloc(E, wp.float32) for k in LAP_METRICS})
    out["objective"] = alloc(E, wp.float64)
    return out


class _Scratch:
    def __init__(self, device: Any, E: int, N: int):
        f64 = lambda k=1: wp.zeros(E * N * k, dtype=wp.float64, device=device)  # noqa: E731
        names = "nx ny w lo hi al cand res jm j0 jp dd ee ff gg st idd px py ib0 b1 b2"
        names += " kap ds fw bw"
        self.a = {k: f64() for k in names.split()}
        self.a["tail"] = f64(2)
        self.act = wp.zeros(E * N, dtype=wp.int32, device=device)
        self.ok = wp.zeros(E, dtype=wp.int32, device=device)
        # the widths of a call given as numbers (filled on the device: recordable)
        self.wl = wp.zeros(E * N, dtype=wp.float32, device=device)
        self.wr = wp.zeros(E * N, dtype=wp.float32, device=device)
        # the outputs of a recorded call (a call outside a recording gets its own)
        self.out = _outputs(lambda n, dt: wp.zeros(n, dtype=dt, device=device), E, N)
        self.N, self.ctxs = N, []


#: the most iterations or passes (the kernels count them in 32 bits)
_MAX_COUNT = 2**31 - 1


def _check_int(name: str, value: Any, least: int) -> int:
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok or not least <= value <= _MAX_COUNT:
        raise ParamsError(
            f"racing_line {name}: expected an int in [{least}, {_MAX_COUNT}], got {value!r}"
        )
    return int(value)


def _host_widths(name: str, value: Any, E: int, N: int) -> float | np.ndarray:
    """A width: a number (as a float32-rounded float) or an ``[E, N]`` array (as float32
    ``[E*N]``), finite and >= 0."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        arr = np.full(1, float(value), np.float64)
    else:
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParamsError(
                f"racing_line {name}: expected a number or an [E, N] = [{E}, {N}] array, "
                f"got {type(value).__name__}"
            ) from None
        if arr.shape != (E, N):
            raise ParamsError(
                f"racing_line {name}: expected a number or an [E, N] = [{E}, {N}] array, "
                f"got shape {list(arr.shape)}"
            )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = arr[~(np.isfinite(arr) & (arr >= 0))].flat[0]
        raise ParamsError(f"racing_line {name}: expected finite widths >= 0, got {float(bad)!r}")
    if arr.shape == (1,):
        return float(np.float32(arr[0]))
    return arr.astype(np.float32).reshape(-1)


def _widths(ctx: Any, s: _Scratch, wl: Any, wr: Any) -> tuple[wp.array, wp.array]:
    """The device widths: a device array as it is, a number filled into the scratch's, a
    host array uploaded (refused inside a recording)."""
    from .exec import capturing

    out = []
    for name, w, mine in (("w_left", wl, s.wl), ("w_right", wr, s.wr)):
        if isinstance(w, wp.array):
            out.append(w)
        elif isinstance(w, float):
            ctx.fill(mine, w)
            out.append(mine)
        elif capturing(ctx):
            raise NotCapturableError(
                f"racing_line {name}: expected a number or the result's width attributes "
                "inside a recording, got an [E, N] host array (an upload); call outside "
                "the recording, or record with constant widths"
            )
        else:
            out.append(ctx.upload(w, wp.float32))
    return out[0], out[1]


def _inputs(src: Any, w_right: Any, w_left: Any, vehicle: VehicleParams, scale: float, device: Any):
    """Returns (ctx, xy vec2 [E*N] device array, wl, wr, E, N, cache): the widths device
    arrays, floats or float32 host arrays (``_widths`` makes them device arrays)."""
    from ..launch import default_context

    # by their attributes: importing pipeline here would close an import circle
    # (pipeline -> _steps -> _road -> _result -> metrics -> racing)
    gen = src if hasattr(src, "result") and hasattr(src, "config") else None
    res = gen.result if gen is not None else src
    if all(hasattr(res, k) for k in ("xy", "attributes", "num_envs", "num_points", "ctx")):
        ctx, E, N = res.ctx, res.num_envs, res.num_points
        if N < 8:
            raise ParamsError(f"racing_line points: expected N >= 8 per env, got {N}")
        cache = res.metric_scratch
        if w_right is None and w_left is None and "width_left" in res.attributes:
            return ctx, res.xy, res["width_left"], res["width_right"], E, N, cache
        if w_right is None and w_left is None:
            tw = float(gen.config.validity.track_width) if gen is not None else 0.0
            if not tw > 0:
                raise ParamsError(
                    "racing_line w_right/w_left: expected widths (world units) for a "
                    "TrackResult without width_left/width_right attributes (or a "
                    "TrackGenerator with a validity track_width > 0), got none"
                )
            w_right = w_left = tw / 2.0
        if w_right is None or w_left is None:
            raise ParamsError("racing_line w_right/w_left: expected both or neither, got one")
        wr, wl = _host_widths("w_right", w_right, E, N), _host_widths("w_left", w_left, E, N)
        _check_fit(wr, wl, vehicle, scale, E, N)
        return ctx, res.xy, wl, wr, E, N, cache
    try:
        xy = np.asarray(src, dtype=np.float64)
    except (TypeError, ValueError):
        xy = None
    if xy is None or xy.ndim != 3 or xy.shape[2] != 2 or xy.shape[1] < 8 or xy.shape[0] < 1:
        got = f"shape {list(xy.shape)}" if xy is not None else type(src).__name__
        raise ParamsError(
            "racing_line result_or_xy: expected a TrackResult, a TrackGenerator or an "
            f"[E, N, 2] array of closed centerlines with N >= 8, got {got}"
        )
    if not np.all(np.isfinite(xy)):
        raise ParamsError("racing_line result_or_xy: expected finite points, got NaN or inf")
    E, N = xy.shape[:2]
    pts = xy.astype(np.float32)
    _check_distinct(pts.astype(np.float64))
    if w_right is None or w_left is None:
        raise ParamsError(
            f"racing_line w_right/w_left: expected widths for plain centerlines, got "
            f"w_right={w_right!r}, w_left={w_left!r}"
        )
    wr, wl = _host_widths("w_right", w_right, E, N), _host_widths("w_left", w_left, E, N)
    _check_fit(wr, wl, vehicle, scale, E, N)
    ctx = default_context(device)
    return ctx, ctx.upload(pts.reshape(E * N, 2), wp.vec2), wl, wr, E, N, {}


def _check_distinct(xy: np.ndarray) -> None:
    """Refuses a repeated point (a zero-length segment) or a zero central difference (the
    points either side of one coincide), as the kernels see them (float32)."""
    seg = np.linalg.norm(np.roll(xy, -1, 1) - xy, axis=2)
    if np.any(seg == 0):
        e, i = map(int, np.argwhere(seg == 0)[0])
        N = xy.shape[1]
        raise ParamsError(
            "racing_line result_or_xy: expected no repeated points (zero-length segments), "
            f"got env {e}, point {(i + 1) % N} equal to point {i}"
        )
    tan = np.linalg.norm(np.roll(xy, -1, 1) - np.roll(xy, 1, 1), axis=2)
    if np.any(tan == 0):
        e, i = map(int, np.argwhere(tan == 0)[0])
        N = xy.shape[1]
        raise ParamsError(
            "racing_line result_or_xy: expected a tangent at every point, got env "
            f"{e}, point {i} between two equal points ({(i - 1) % N} and {(i + 1) % N})"
        )


def _check_fit(wr: Any, wl: Any, vehicle: VehicleParams, scale: float, E: int, N: int) -> None:
    total = (np.asarray(wr, np.float64) + np.asarray(wl, np.float64)).reshape(-1) * scale
    i = int(np.argmin(total))
    if total[i] < vehicle.width:
        e, j = divmod(i, N) if total.size == E * N else (0, 0)
        where = f"env {e}, point {j}" if total.size == E * N else "every point"
        raise ParamsError(
            f"racing_line widths: expected w_right + w_left >= the vehicle width "
            f"{vehicle.width} m at every point, got {total[i]:.6g} m at {where} (widths in "
            f"world units times scale={scale:g} metres per unit: a larger scale or a "
            "narrower vehicle fits)"
        )


#: devices the kernels have been loaded on (a first call loads them in this thread)
_LOADED: set[str] = set()


def _share(args: list[Any], E: int, lo: int, hi: int) -> list[Any]:
    """The arguments for envs ``[lo, hi)``: every array holds ``k`` values per env."""
    out = []
    for v in args:
        if isinstance(v, wp.array):
            k = v.shape[0] // E
            v = v[lo * k : hi * k]
        out.append(v)
    return out


def _run(ctx: Any, s: _Scratch, E: int, launches: list[tuple[Any, list[Any]]]) -> None:
    """Launches the kernels over every env; on the CPU split over worker threads as the
    pipeline splits a call (``PROCGEN_NB_THREADS``; every kernel works per env, so the values
    are the same), after a first call that loads the kernels here. Recorded: every launch on
    ``ctx`` from this thread."""
    from . import _threads
    from .exec import LaunchContext, capturing

    T = 1
    dev = str(ctx.device)
    if dev in _LOADED and not wp.get_device(dev).is_cuda and not capturing(ctx):
        T = _threads.threads_for(E, s.N)
    if T == 1:
        for kernel, args in launches:
            ctx.launch(kernel, E, args)
        _LOADED.add(dev)
        return
    if len(s.ctxs) != T:
        s.ctxs = [ctx] + [LaunchContext(ctx.device) for _ in range(T - 1)]
    cut = [E * t // T for t in range(T + 1)]

    def part(c: Any, lo: int, hi: int) -> None:
        for kernel, args in launches:
            c.launch(kernel, hi - lo, _share(args, E, lo, hi))

    calls = [lambda c=c, lo=lo, hi=hi: part(c, lo, hi) for c, lo, hi in zip(s.ctxs, cut, cut[1:])]
    errors = _threads.run_side_by_side(calls)
    if errors:
        raise _threads._part_error(*errors[0])


def racing_line(
    result_or_xy: Any,
    w_right: Any = None,
    w_left: Any = None,
    vehicle: VehicleParams | None = None,
    *,
    scale: float = 1.0,
    iterations: int | None = None,
    passes: int | None = None,
    objective: str = "curvature",
    device: str | None = None,
) -> RacingLine:
    """Computes the minimum-curvature racing line and its speed profile for every env.

    Args:
        result_or_xy: a ``TrackResult`` or ``TrackGenerator`` (its centerlines and, when it
            has them, its ``width_left`` / ``width_right`` attributes; else a generator's
            validity ``track_width``, half each side), or an ``[E, N, 2]`` array of closed
            centerlines (the last point joins the first; N >= 8).
        w_right, w_left: track widths right and left of the centerline, world units: a
            number or an ``[E, N]`` array each (both or neither).
        vehicle: the car (``VehicleParams()`` when None).
        scale: metres per world unit (the outputs are in metres).
        iterations: Gauss-Newton steps (``"curvature"``) or damped proximal steps on the
            one quadratic (``"linearised"``), >= 1; passes: most active-set passes per
            step, >= 1 (None: ``ITERATIONS``, ``PASSES``, or ``LINEARISED_ITERATIONS``,
            ``LINEARISED_PASSES``).
        objective: ``"curvature"`` (the true discrete curvature, by Gauss-Newton) or
            ``"linearised"`` (TUMFTM's curvature linearised about the centerline, one QP).
        device: the device for plain arrays (the current one when None; a result runs
            where it lives).

    Returns:
        A ``RacingLine`` (see the module docstring for the definitions) of new device
        arrays that later calls leave alone; inside a recording, the result's recorded
        output set, which every replay rewrites (the module docstring, "Outputs").

    Raises:
        ParamsError: a source that is neither a result nor ``[E, N, 2]`` finite points
            without a repeated point (named by env and point), widths that are not finite numbers >= 0 or not ``[E, N]``, widths narrower than
            the vehicle, a ``scale`` not > 0, ``iterations``/``passes`` not ints >= 1, an
            ``objective`` not in ``OBJECTIVES``, or a ``vehicle`` that is not
            ``VehicleParams``.
        NotCapturableError: ``[E, N]`` host widths or plain centerlines (uploads) inside a
            recording.
    """
    vehicle = VehicleParams() if vehicle is None else vehicle
    if not isinstance(vehicle, VehicleParams):
        raise ParamsError(
            f"racing_line vehicle: expected VehicleParams, got {type(vehicle).__name__}"
        )
    scale = _positive("scale", scale, owner="racing_line")
    if not isinstance(objective, str) or objective not in OBJECTIVES:
        raise ParamsError(
            f"racing_line objective: expected one of {', '.join(map(repr, OBJECTIVES))}, "
            f"got {objective!r}"
        )
    lin = objective == "linearised"
    if iterations is None:
        iterations = LINEARISED_ITERATIONS if lin else ITERATIONS
    if passes is None:
        passes = LINEARISED_PASSES if lin else PASSES
    iterations, passes = _check_int("iterations", iterations, 1), _check_int("passes", passes, 1)
    ctx, xy, wl, wr, E, N, cache = _inputs(result_or_xy, w_right, w_left, vehicle, scale, device)
    key = ("racing", E, N)
    s = cache.get(key)
    if s is None:
        s = _Scratch(ctx.device, E, N)
        cache[key] = s
    wl, wr = _widths(ctx, s, wl, wr)
    from .exec import capturing

    # a recorded call writes the scratch's outputs (its replays rewrite them); any other
    # call gets its own, so a RacingLine it returned keeps its values
    out = s.out if capturing(ctx) else _outputs(ctx.empty, E, N)
    a = s.a
    half = vehicle.width / 2.0 / scale
    mg = vehicle.mu * vehicle.g
    names = "cand res jm j0 jp dd ee ff gg st idd".split()
    launches = [
        (_rk._prep_k, [xy, wl, wr, N, half] + [a[k] for k in "nx ny w lo hi al".split()] + [s.ok]),
        (
            _rk._solve_lin_k if lin else _rk._solve_k,
            [xy, N, iterations, passes, a["nx"], a["ny"], a["w"], a["lo"], a["hi"], s.ok]
            + [a["al"], *(a[k] for k in names), s.act]
            + [a[k] for k in "px py ib0 b1 b2 tail".split()]
            + ([a["kap"], a["ds"]] if lin else [])
            + [out["objective"]],
        ),
        (
            _rk._speed_k,
            [xy, N, a["nx"], a["ny"], a["al"], s.ok, scale, mg, vehicle.v_max, vehicle.a_max]
            + [a["kap"], a["ds"], a["fw"], a["bw"]]
            + [out[k] for k in _COLUMNS],
        ),
    ]
    _run(ctx, s, E, launches)
    return RacingLine(
        xy=Column(out["xy"], "Vec2"),
        **{k: Column(out[k], "Float") for k in _COLUMNS[1:]},
        objective=out["objective"],
        num_envs=E,
        num_points=N,
        ctx=ctx,
    )


#: the keyword arguments of ``racing_line`` that a ``racing={...}`` dict may hold (metrics,
#: sweep, ``MetricBand``)
OPTIONS = tuple(inspect.signature(racing_line).parameters)[1:]


def check_options(label: str, racing: Mapping[str, Any]) -> dict[str, Any]:
    """Returns ``racing`` (a mapping of ``racing_line`` keyword arguments) as a dict.

    Raises:
        ParamsError: a key that is not one of ``OPTIONS``, named with ``label``.
    """
    for k in racing:
        if k not in OPTIONS:
            raise ParamsError(
                f"{label}: expected racing_line keyword arguments ({', '.join(OPTIONS)}), got {k!r}"
            )
    return dict(racing)


__all__ = [
    "ITERATIONS",
    "LAP_METRICS",
    "LINEARISED_ITERATIONS",
    "LINEARISED_PASSES",
    "OBJECTIVES",
    "OPTIONS",
    "PASSES",
    "RacingLine",
    "VehicleParams",
    "check_options",
    "racing_line",
]
