"""Parameter sweeps: valid fraction, rejection reasons and metric distributions on a grid.

``sweep(generator, {"radius_jitter": np.linspace(0, 1, 41)}, num_envs=1024)`` generates
``num_envs`` tracks at each grid point (the same env seeds and epoch at every point, so a
curve shows the parameter's effect, not new dice) and keeps, per point, the valid
fraction, the share of envs each reason bit rejects, and quantiles of every metric. Two
keys make a 2-D grid (every pair), and so on.

A key names a field of the generator's Params or of ``ValidityParams``
(``"validity.track_width"`` or ``"generator.lobes"`` when a name is in both). Each point is a
``generator.update(...)``: a dynamic field (the validity thresholds, a generator's dynamic
fields) is written to its device buffer and the recording replays; a static one rebuilds
the pipeline (``SweepResult.rebuilds`` counts them). Grid points are visited in order with
the last key fastest, so a static outer key rebuilds once per value. The generator's
parameters are put back afterwards, but not its tracks: ``generator.result`` holds the last
grid point's (or, when putting a static field back rebuilt the pipeline, the rebuild's);
call ``generator.generate()`` for the tracks of the restored parameters.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ParamsError
from . import metrics as _metrics
from . import racing as _racing
from ._result import REASONS
from .config import ValidityParams

#: the quantile levels kept by default
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
_UNSET = object()


@dataclasses.dataclass
class SweepResult:
    """What ``sweep`` measured; every array has the grid's shape first.

    Attributes:
        keys: the swept fields, in grid order. values: each key's values.
        grid: each key's value at every grid point (arrays of ``shape``).
        valid_fraction: the share of valid envs at each point.
        reasons: ``REASONS`` text -> the share of envs with that bit set, at each point.
        quantiles: metric name -> ``[*shape, len(q)]`` quantiles over the envs (NaN ignored).
        mean: metric name -> the mean over the envs (NaN ignored).
        q: the quantile levels. num_envs: envs per point. rebuilds: pipeline rebuilds.
    """

    keys: list[str]
    values: list[np.ndarray]
    grid: dict[str, np.ndarray]
    valid_fraction: np.ndarray
    reasons: dict[str, np.ndarray]
    quantiles: dict[str, np.ndarray]
    mean: dict[str, np.ndarray]
    q: tuple[float, ...]
    num_envs: int
    rebuilds: int

    @property
    def shape(self) -> tuple[int, ...]:
        return self.valid_fraction.shape

    def columns(self) -> dict[str, np.ndarray]:
        """One row per grid point: the keys, ``valid_fraction``, ``reject:<reason>`` shares,
        ``<metric>_mean`` and ``<metric>_q<level>`` (``pyarrow.table`` takes it as it is)."""
        cols = {k: v.reshape(-1) for k, v in self.grid.items()}
        cols["valid_fraction"] = self.valid_fraction.reshape(-1)
        for text, arr in self.reasons.items():
            cols[f"reject:{text}"] = arr.reshape(-1)
        for name, arr in self.quantiles.items():
            cols[f"{name}_mean"] = self.mean[name].reshape(-1)
            for i, level in enumerate(self.q):
                cols[f"{name}_q{round(level * 100):02d}"] = arr[..., i].reshape(-1)
        return cols

    def table(self) -> Any:
        """The ``columns()`` as a ``pyarrow.Table``."""
        import pyarrow as pa

        return pa.table(self.columns())

    def plot(self, metrics: Sequence[str] | None = None, fig: Any = None) -> Any:
        """Draws a 1-D sweep: valid fraction and reason shares, then each metric's median
        with its quantile bands, against the parameter; a 2-D sweep: the valid fraction as
        an image. Returns the matplotlib Figure."""
        return _plot(self, metrics, fig)


def _plot(res: SweepResult, metrics: Sequence[str] | None, fig: Any) -> Any:
    from matplotlib.figure import Figure

    names = [m for m in (metrics or list(res.quantiles)) if m in res.quantiles]
    if len(res.shape) == 2:
        fig = fig or Figure(figsize=(5, 4), layout="constrained")
        ax = fig.add_subplot()
        (k0, k1), (v0, v1) = res.keys, res.values
        im = ax.pcolormesh(v1, v0, res.valid_fraction, vmin=0, vmax=1, shading="nearest")
        ax.set(xlabel=k1, ylabel=k0, title=f"valid fraction ({res.num_envs} envs per point)")
        fig.colorbar(im, ax=ax)
        return fig
    if len(res.shape) != 1:
        raise ParamsError(f"SweepResult.plot: expected a 1-D or 2-D sweep, got shape {res.shape}")
    x, key = res.values[0], res.keys[0]
    cols = 3
    rows = 1 + math.ceil(len(names) / cols)
    fig = fig or Figure(figsize=(4 * cols, 2.6 * rows), layout="constrained")
    gs = fig.add_gridspec(rows, cols)
    ax = fig.add_subplot(gs[0, :])
    ax.plot(x, res.valid_fraction, "k-", lw=2, label="valid")
    for text, share in res.reasons.items():
        if np.any(share > 0):
            ax.plot(x, share, "--", label=f"rejected: {text}")
    ax.set(xlabel=key, ylabel="share of envs", ylim=(-0.02, 1.02))
    ax.legend(fontsize=7, loc="best")
    mid = res.q.index(0.5) if 0.5 in res.q else len(res.q) // 2
    for i, name in enumerate(names):
        ax = fig.add_subplot(gs[1 + i // cols, i % cols])
        qs = res.quantiles[name]
        n = len(res.q)
        for j in range(n // 2):
            ax.fill_between(x, qs[:, j], qs[:, n - 1 - j], alpha=0.2, color="C0", lw=0)
        ax.plot(x, qs[:, mid], color="C0")
        ax.set(xlabel=key, title=name)
        ax.title.set_fontsize(9)
    return fig


def _split_key(gen: Any, key: Any) -> tuple[str, str]:
    if not isinstance(key, str) or not key:
        raise ParamsError(f"sweep grid key: expected a field name, got {key!r}")
    gfields = set(type(gen.params).fields()) if gen.params is not None else set()
    vfields = set(ValidityParams.fields())
    where, _, name = key.rpartition(".")
    if where:
        owned = {"generator": gfields, "validity": vfields}.get(where)
        if owned is None or name not in owned:
            raise ParamsError(
                f"sweep grid key: expected generator.<field> of {sorted(gfields)} or "
                f"validity.<field> of {sorted(vfields)}, got {key!r}"
            )
        return where, name
    hits = [w for w, fs in (("generator", gfields), ("validity", vfields)) if name in fs]
    if len(hits) != 1:
        what = "in both: prefix it with generator. or validity." if hits else "unknown"
        raise ParamsError(
            f"sweep grid key: expected a field of the generator {sorted(gfields)} or of "
            f"validity {sorted(vfields)}, got {key!r} ({what})"
        )
    return hits[0], name


def _values(key: str, vals: Any) -> np.ndarray:
    arr = np.asarray(vals)
    if arr.ndim != 1 or arr.size == 0:
        raise ParamsError(f"sweep grid {key!r}: expected a 1-D sequence of values, got {vals!r}")
    return arr


def _check_grid(
    gen: Any, where: list[tuple[str, str]], keys: list[str], values: list[list[Any]]
) -> None:
    """Refuses two keys of one field, and the first grid value its Params refuse, before any
    point is cooked."""
    seen: dict[tuple[str, str], str] = {}
    for wn, key in zip(where, keys):
        if wn in seen:
            raise ParamsError(
                f"sweep grid {key!r}: expected each field once, got it as {seen[wn]!r} too"
            )
        seen[wn] = key
    owners = {"generator": gen.params, "validity": gen.config.validity}
    for (w, name), key, vals in zip(where, keys, values):
        for i, v in enumerate(vals):
            try:
                owners[w].replace(**{name: v})
            except ParamsError as exc:
                raise ParamsError(f"sweep grid {key!r} (value {i} of {len(vals)}): {exc}") from exc


def sweep(
    generator: Any,
    grid: Mapping[str, Any],
    num_envs: int | None = None,
    *,
    metrics: bool | Sequence[str] = True,
    q: Sequence[float] = QUANTILES,
    straight_ratio: float = 2.0,
    racing: dict[str, Any] | None = None,
    progress: bool = True,
    **config: Any,
) -> SweepResult:
    """Sweeps ``grid`` and measures each point.

    Args:
        generator: a ``TrackGenerator``, or a generator name (built with
            ``presets.track(generator, num_envs=num_envs, **config)``).
        grid: field name -> 1-D values (see the module docstring for the names).
        num_envs: envs per point (a given generator with another count is rebuilt with it;
            1024 for a name when None).
        metrics: True (all of ``metrics.METRICS``, and with ``racing`` the lap metrics of
            ``racing.LAP_METRICS``), False (none), or the names to keep; ``min_clearance``
            left out skips its kernel (most of the CPU cost).
        q: quantile levels in [0, 1].
        straight_ratio: ``metrics``' straight threshold.
        racing: ``racing.racing_line``'s keyword arguments (``vehicle``, ``scale``...; the
            widths default to the generator's validity ``track_width``, half each side):
            each point then measures ``lap_time``, ``mean_speed``,
            ``full_throttle_fraction`` and ``difficulty`` too.
        progress: show a tqdm progress bar over the grid points.
        **config: ``TrackGenConfig`` fields when ``generator`` is a name.

    Returns:
        The ``SweepResult``. A given generator's ``params`` and validity are put back;
        its ``result`` is not (it holds the last grid point's tracks): call
        ``generator.generate()`` for the restored parameters' tracks.

    Raises:
        ParamsError: an unknown key, a field given twice, empty values, a value its Params
            refuse (every value is checked before the first point is cooked; the message
            names the key, the value and the accepted range), ``metrics`` not True, False
            or names (or unknown names), bad quantiles, a ``racing`` that is not a dict or
            has a key not in ``racing.OPTIONS``.
    """
    from . import presets
    from .pipeline import TrackGenerator

    if isinstance(generator, str):
        gen = presets.track(generator, num_envs=1024 if num_envs is None else num_envs, **config)
    elif isinstance(generator, TrackGenerator):
        if config:
            raise ParamsError(
                f"sweep: expected no config fields with a TrackGenerator, got {sorted(config)}"
            )
        gen = generator
        if num_envs is not None and num_envs != gen.config.num_envs:
            cfg = dataclasses.replace(gen.config, num_envs=num_envs, env_seeds=None)
            gen = gen.with_config(cfg)
    else:
        raise ParamsError(
            f"sweep generator: expected a TrackGenerator or a name, got {generator!r}"
        )
    if not isinstance(grid, Mapping) or not grid:
        raise ParamsError(f"sweep grid: expected a dict of field -> values, got {grid!r}")
    keys = list(grid)
    where = [_split_key(gen, k) for k in keys]
    values = [_values(k, grid[k]) for k in keys]
    py = [[v.item() if isinstance(v, np.generic) else v for v in vals] for vals in values]
    _check_grid(gen, where, keys, py)
    if racing is not None and not isinstance(racing, Mapping):
        raise ParamsError(
            f"sweep racing: expected a dict of racing_line keyword arguments, got {racing!r}"
        )
    if racing is not None:
        racing = _racing.check_options("sweep racing", racing)
    names = _metric_names(metrics, racing is not None)
    laps = [m for m in names if m in _racing.LAP_METRICS]
    if laps:  # refuses bad racing arguments before the first point (and loads the kernels)
        _racing.racing_line(gen, **racing)
    levels = _levels(q)
    shape = tuple(len(v) for v in values)
    E = gen.config.num_envs
    before = {
        "generator": gen.params.to_dict() if gen.params is not None else {},
        "validity": gen.config.validity.to_dict(),
    }
    touched = {(w, n) for w, n in where}
    valid = np.zeros(shape)
    reasons = {text: np.zeros(shape) for text in REASONS.values()}
    quant = {m: np.full((*shape, len(levels)), np.nan) for m in names}
    mean = {m: np.full(shape, np.nan) for m in names}
    rebuilds = 0
    bar = _bar(progress, math.prod(shape), keys)
    try:
        last: dict[tuple[str, str], Any] = {}
        for idx in itertools.product(*(range(n) for n in shape)):
            # only the fields that moved: an outer static key rebuilds once per value
            upd: dict[str, dict[str, Any]] = {"generator": {}, "validity": {}}
            for (w, n), vals, i in zip(where, py, idx):
                v = vals[i]
                if last.get((w, n), _UNSET) != v:
                    upd[w][n] = last[(w, n)] = v
            rebuilt = gen.update(
                generator_params=upd["generator"] or None, validity=upd["validity"] or None
            )
            rebuilds += bool(rebuilt)
            res = gen.result if rebuilt else gen.generate()
            ok = res.ctx.readback(res.valid)
            bits = res.ctx.readback(res.reason)
            valid[idx] = np.count_nonzero(ok) / E
            for bit, text in REASONS.items():
                reasons[text][idx] = np.count_nonzero(bits & bit) / E
            if names:
                got = _metrics.compute(res, straight_ratio, clearance="min_clearance" in names)
                if laps:
                    line = _racing.racing_line(gen, **racing)
                    got.update({m: getattr(line, m).numpy() for m in laps})
                for m in names:
                    x = got[m].astype(np.float64)
                    x = x[np.isfinite(x)]
                    if x.size:
                        quant[m][idx] = np.quantile(x, levels)
                        mean[m][idx] = x.mean()
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
        restore = {w: {n: before[w][n] for ww, n in touched if ww == w} for w in before}
        rebuilds += bool(
            gen.update(
                generator_params=restore["generator"] or None, validity=restore["validity"] or None
            )
        )
    mesh = np.meshgrid(*values, indexing="ij")
    return SweepResult(
        keys=keys,
        values=values,
        grid={k: m for k, m in zip(keys, mesh)},
        valid_fraction=valid,
        reasons=reasons,
        quantiles=quant,
        mean=mean,
        q=levels,
        num_envs=E,
        rebuilds=rebuilds,
    )


def _metric_names(metrics: Any, racing: bool = False) -> list[str]:
    known = list(_metrics.METRICS) + (list(_racing.LAP_METRICS) if racing else [])
    if metrics is True:
        return known
    if metrics is False or metrics is None:
        return []
    if isinstance(metrics, str):
        names = [metrics]
    elif isinstance(metrics, Sequence | set | frozenset | np.ndarray):
        names = list(metrics)
    else:
        raise ParamsError(
            f"sweep metrics: expected True, False, a name or a list of names among {known}, "
            f"got {metrics!r}"
        )
    unknown = [m for m in names if m not in known]
    if unknown:
        why = "" if racing else " (the lap metrics need racing=)"
        raise ParamsError(
            f"sweep metrics: expected True, False or names among {known}{why}, got {unknown}"
        )
    return names


def _levels(q: Any) -> tuple[float, ...]:
    try:
        levels = tuple(float(x) for x in q)
    except (TypeError, ValueError):
        levels = ()
    if not levels or not all(0.0 <= x <= 1.0 for x in levels):
        raise ParamsError(f"sweep q: expected quantile levels in [0, 1], got {q!r}")
    return levels


def _bar(progress: bool, total: int, keys: list[str]) -> Any:
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="point", desc=f"sweep {', '.join(keys)}")


__all__ = ["QUANTILES", "SweepResult", "sweep"]
