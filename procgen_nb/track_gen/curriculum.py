"""Curriculum bands: keep every env's difficulty (or another metric) inside ``[low, high]``.

``gen.regenerate(band)`` with ``band = MetricBand("difficulty", 0.2, 0.5, racing={...})``
runs ``band.tries`` rounds, each on the device and with nothing read back: the metric of
every env (``racing.racing_line`` for the lap metrics of ``racing.LAP_METRICS``,
``metrics.enqueue`` for the geometric ones of ``metrics.METRICS``), a mask kernel that marks
the envs outside the band, and ``regenerate(mask)`` of the marked envs (each gets a new
seed from its attempt counter; every other env keeps its bytes). An env is outside when its
value is NaN or not in ``low <= value <= high`` (both ends inside), or, with
``invalid=True`` (the default), when the pipeline marked it invalid. A fixed number of
rounds, so a curriculum's call can be recorded; an env still outside after the last round
is the one ``band.outside`` names (``band.regenerated`` counts each env's rounds).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import warp as wp

from ..errors import ParamsError
from . import metrics as _metrics
from . import racing as _racing


@wp.kernel
def _band_k(
    values: wp.array(dtype=wp.float32),
    valid: wp.array(dtype=wp.int32),
    low: wp.float64,
    high: wp.float64,
    invalid: int,
    count: int,
    mask: wp.array(dtype=wp.int32),
    rounds: wp.array(dtype=wp.int32),
):
    """``mask[e] = 1`` for an env outside ``[low, high]`` (NaN too; an invalid one when
    ``invalid``), else 0; ``rounds[e] += mask[e]`` when ``count``."""
    e = wp.tid()
    v = wp.float64(values[e])
    out = int(0)  # noqa: UP018 (a dynamic variable in Warp)
    if not (v >= low and v <= high):
        out = 1
    if invalid != 0 and valid[e] == 0:
        out = 1
    mask[e] = out
    if count != 0:
        rounds[e] = rounds[e] + out


#: the metrics a band can hold: the float ones of ``metrics.METRICS`` and the lap metrics
BAND_METRICS = tuple(
    [k for k, v in _metrics.METRICS.items() if v[0] == "float32"] + list(_racing.LAP_METRICS)
)


def _edge(name: str, value: Any) -> float:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    v = float(value) if ok else math.nan
    if math.isnan(v):
        raise ParamsError(f"MetricBand {name}: expected a number (inf allowed), got {value!r}")
    return v


#: the most Gauss-Newton steps or active-set passes a band's ``racing`` takes (an int32)
_INT_MAX = (1 << 31) - 1


def _racing_value(key: str, value: Any) -> Any:
    """One ``racing`` value checked as ``racing_line`` will take it (the widths' shape
    against ``[E, N]`` waits for the generator; ``device`` is ``racing_line``'s to check)."""
    label = f"MetricBand racing[{key!r}]"
    if value is None and key in ("vehicle", "iterations", "passes", "w_right", "w_left"):
        return value
    if key == "vehicle" and not isinstance(value, _racing.VehicleParams):
        raise ParamsError(f"{label}: expected None or a VehicleParams, got {value!r}")
    if key == "scale":
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
        if not ok or not (math.isfinite(float(value)) and float(value) > 0):
            raise ParamsError(
                f"{label}: expected a finite number > 0 (metres per unit), got {value!r}"
            )
    if key in ("iterations", "passes"):
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
        if not ok or not 1 <= int(value) <= _INT_MAX:
            raise ParamsError(f"{label}: expected None or an int in [1, {_INT_MAX}], got {value!r}")
    if key == "objective" and (not isinstance(value, str) or value not in _racing.OBJECTIVES):
        raise ParamsError(
            f"{label}: expected one of {', '.join(map(repr, _racing.OBJECTIVES))}, got {value!r}"
        )
    if key in ("w_right", "w_left"):
        want = f"{label}: expected None, a finite width >= 0 or an [E, N] array of them"
        if isinstance(value, bool | np.bool_):
            raise ParamsError(f"{want}, got {value!r}")
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParamsError(f"{want}, got {value!r:.80}") from None
        if arr.ndim not in (0, 2):
            raise ParamsError(f"{want}, got shape {list(arr.shape)}")
        if not (np.isfinite(arr) & (arr >= 0)).all():
            bad = arr[~(np.isfinite(arr) & (arr >= 0))].flat[0]
            raise ParamsError(f"{want}, got {float(bad)!r}")
    return value


def _check_racing(racing: Any) -> dict[str, Any]:
    """``racing`` (None or a dict of ``racing_line`` keyword arguments) checked key by key
    and value by value; returns it as a dict."""
    if racing is None:
        return {}
    if not isinstance(racing, dict):
        raise ParamsError(
            "MetricBand racing: expected a dict of racing_line keyword arguments, got "
            f"{type(racing).__name__}"
        )
    racing = _racing.check_options("MetricBand racing", racing)
    if (racing.get("w_right") is None) != (racing.get("w_left") is None):
        raise ParamsError(
            "MetricBand racing w_right/w_left: expected both or neither, got "
            f"w_right={racing.get('w_right')!r:.40}, w_left={racing.get('w_left')!r:.40}"
        )
    return {k: _racing_value(k, v) for k, v in racing.items()}


class MetricBand:
    """A band ``[low, high]`` of one metric that ``TrackGenerator.regenerate`` keeps.

    Args:
        metric: a name of ``BAND_METRICS`` (``"difficulty"`` by default).
        low, high: the band's ends (both inside; ``-inf``/``inf`` for a one-sided band).
        racing: the keyword arguments of ``racing.racing_line`` for a lap metric
            (``vehicle``, ``w_right``, ``w_left``, ``scale``...; ``{}`` for its defaults).
        tries: regeneration rounds per ``regenerate(band)`` (>= 1).
        invalid: count an invalid env as outside the band (a bool).
        straight_ratio: ``metrics``' straight threshold, for ``straight_fraction``.

    Attributes:
        regenerated: ``[E]`` int32 device array after a ``regenerate(band)``: the rounds
            that regenerated each env (0 for an env that was inside from the start).
        outside: ``[E]`` int32 device array: 1 for an env still outside after the last
            round of the last ``regenerate(band)`` (None before the first mask).

    Raises:
        ParamsError: an unknown metric, a NaN or non-number end, ``low > high``, ``tries``
            not an int >= 1, ``invalid`` not a bool, ``racing`` not a dict, with a key that
            is not one of ``racing.OPTIONS`` (``racing_line``'s keyword arguments), or with a
            value ``racing_line`` refuses: ``vehicle`` not a VehicleParams, ``scale`` not a
            finite number > 0, ``iterations``/``passes`` not ints in [1, 2**31 - 1], an
            ``objective`` not in ``racing.OBJECTIVES``, widths not finite numbers >= 0 (a
            number or a 2-D array; its ``[E, N]`` shape is checked at ``regenerate``), or
            one width without the other.

    >>> MetricBand("difficulty", 0.2, 0.5, racing={"scale": 100.0}).tries
    4
    """

    def __init__(
        self,
        metric: str = "difficulty",
        low: float = 0.0,
        high: float = 1.0,
        *,
        racing: dict[str, Any] | None = None,
        tries: int = 4,
        invalid: bool = True,
        straight_ratio: float = 2.0,
    ):
        if metric not in BAND_METRICS:
            raise ParamsError(
                f"MetricBand metric: expected one of {list(BAND_METRICS)}, got {metric!r}"
            )
        lo, hi = _edge("low", low), _edge("high", high)
        if lo > hi:
            raise ParamsError(f"MetricBand low/high: expected low <= high, got {lo!r} > {hi!r}")
        if not isinstance(tries, numbers.Integral) or isinstance(tries, bool) or tries < 1:
            raise ParamsError(f"MetricBand tries: expected an int >= 1, got {tries!r}")
        if not isinstance(invalid, bool | np.bool_):
            raise ParamsError(f"MetricBand invalid: expected True or False, got {invalid!r}")
        self.metric, self.low, self.high, self.tries = metric, lo, hi, int(tries)
        self.racing = _check_racing(racing)
        self.invalid = bool(invalid)
        self.straight_ratio = _metrics._check_ratio(straight_ratio)
        self.regenerated: wp.array | None = None
        self.outside: wp.array | None = None
        self._mask: wp.array | None = None

    def __repr__(self) -> str:
        return f"MetricBand({self.metric!r}, {self.low!r}, {self.high!r}, tries={self.tries})"

    def values(self, source: Any) -> wp.array:
        """Launches the metric for every env of ``source`` (a ``TrackGenerator``: its result,
        and its validity ``track_width`` when ``racing`` gives no widths; or a
        ``TrackResult``) and returns its ``[E]`` float32 device array (nothing read back)."""
        if self.metric in _racing.LAP_METRICS:
            return getattr(_racing.racing_line(source, **self.racing), self.metric).data
        result = getattr(source, "result", source)
        clearance = self.metric == "min_clearance"
        return _metrics.enqueue(result, self.straight_ratio, clearance)[self.metric]

    def mask(self, source: Any, count: bool = False) -> wp.array:
        """Returns the ``[E]`` int32 device mask of the envs of ``source`` (as ``values``)
        outside the band (``count``: add it to ``regenerated``). Nothing is read back.

        Raises:
            ParamsError: see ``racing.racing_line`` (a lap metric) and ``metrics.enqueue``.
        """
        vals = self.values(source)
        result = getattr(source, "result", source)
        ctx, E = result.ctx, result.num_envs
        m = self._mask
        if m is None or m.shape != (E,) or str(m.device) != str(vals.device):
            self._mask = m = wp.zeros(E, dtype=wp.int32, device=vals.device)
            self.regenerated = wp.zeros(E, dtype=wp.int32, device=vals.device)
            self.outside = wp.zeros(E, dtype=wp.int32, device=vals.device)
        args = [vals, result.valid, self.low, self.high, int(self.invalid), int(count)]
        ctx.launch(_band_k, E, args + [m, self.regenerated])
        return m

    def regenerate_with(self, generator: Any) -> Any:
        """Runs ``tries`` rounds of mask and ``generator.regenerate(mask)`` and returns the
        generator's result; ``outside`` is the mask after the last round. What
        ``TrackGenerator.regenerate(band)`` calls.

        Raises:
            ParamsError: see ``mask`` (raised before anything is regenerated).
        """
        ctx = generator.result.ctx
        self.mask(generator)  # allocates, and refuses bad racing arguments before any round
        ctx.fill(self.regenerated, 0)
        for _ in range(self.tries):
            generator.regenerate(self.mask(generator, count=True))
        ctx.copy(self.outside, self.mask(generator))
        return generator.result


def difficulty_band(low: float, high: float, **options: Any) -> MetricBand:
    """``MetricBand("difficulty", low, high, **options)``: a curriculum's band of lap
    difficulty (``racing.LAP_METRICS``: ``1 - (length / v_max) / lap_time``)."""
    return MetricBand("difficulty", low, high, **options)


__all__ = ["BAND_METRICS", "MetricBand", "difficulty_band"]
