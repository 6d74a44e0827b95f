"""The explore view's sweep mode: one parameter over its range, as curves.

``SweepPanel`` sits under the form of a view whose target can sweep (a track generator):
a field picker (the field last changed, "the parameter under the cursor", unless the
person picks another), how many points and envs per point, and a button. A sweep runs
``procgen_nb.track_gen.sweep`` (its public API only) on a generator of its own, built at the
values in effect, on a background thread, in chunks of grid points so the progress bar
moves; then it draws the valid fraction, the share each reason rejects, and the metric
quantiles against the parameter (``SweepResult.plot``) as a PNG. The view shows either
the live picture or the sweep's curves in its place (``shows``: a sweep started with the
button switches to the curves; a control moved by a person brings the picture back), so
the view keeps its size.
The sweep's values span the field's slider range (its soft bounds), integers once each.

Tests drive it from Python: ``panel.run(field, points=..., num_envs=..., wait=True)``.
"""

from __future__ import annotations

import dataclasses
import html
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
import numpy as np

from ..errors import ParamsError
from ..params import Field, Params
from ._controls import readable

#: the metrics the panel draws (the rest stay in ``panel.result``)
SHOWN_METRICS = ("length", "min_turn_radius", "min_clearance")
#: grid points of a sweep: (default, least, most) (the control's and ``run``'s bounds)
POINTS = (21, 2, 201)
#: envs per grid point: (default, least, most)
ENVS = (256, 1, 65536)


def sweep_values(field: Field, points: int) -> np.ndarray:
    """The values a sweep of ``field`` visits: ``points`` from the low to the high end of
    its slider range (soft bounds, else bounds); an int field's distinct integers in it.

    Raises:
        ParamsError: a field without a finite numeric range, or ``points`` < 2.
    """
    if points < 2:
        raise ParamsError(f"sweep points: expected at least 2, got {points!r}")
    rng = field.soft or field.bounds
    if (
        field.type not in (int, float)
        or rng is None
        or not all(isinstance(v, int | float) and np.isfinite(v) for v in rng)
    ):
        raise ParamsError(
            f"sweep {field.name or 'field'}: expected a number with a finite range, got "
            f"type {getattr(field.type, '__name__', field.type)} and range {rng!r}"
        )
    lo, hi = float(rng[0]), float(rng[1])
    if field.type is int:
        return np.unique(np.round(np.linspace(lo, hi, points)).astype(np.int64))
    return np.linspace(lo, hi, points)


def sweepable(fields: dict[str, Field]) -> dict[str, Field]:
    """The fields a sweep can move: numbers (not bools) with a finite range."""
    out = {}
    for k, f in fields.items():
        try:
            sweep_values(f, 2)
        except ParamsError:
            continue
        out[k] = f
    return out


class SweepPanel(widgets.VBox):
    """Sweeps one field of a target over its range and draws the curves.

    Args:
        target: a target whose ``sweep_fields()`` is not empty (``TrackTarget``).
        current: returns the values in effect (the view's form value).
        lock: held around each chunk of grid points (the view's cooks hold it too).

    Attributes:
        field, points, envs, button, progress, note: its controls.
        image: the PNG of the last sweep (the view shows it in place of the live picture).
        shows: "picture" or "sweep": what the view's picture area shows.
        result: the last ``SweepResult`` (None before the first sweep ends).
        error: the last sweep's error ("" after one succeeds).
    """

    def __init__(
        self,
        target: Any,
        current: Callable[[], Params],
        lock: threading.Lock | threading.RLock | None = None,
    ):
        self.target = target
        self._current = current
        self._lock = lock or threading.RLock()
        fields = target.sweep_fields()
        self.fields = fields
        self.field = widgets.Dropdown(
            options=[(readable(k), k) for k in fields],
            description="sweep",
            tooltip="the field swept over its slider range (the last one you changed)",
            layout=widgets.Layout(width="auto"),
        )
        self.points = _count_box("points", POINTS, "110px")
        self.envs = _count_box("envs", ENVS, "120px")
        self.button = widgets.Button(
            description="Sweep",
            tooltip="run the sweep with the other values in effect",
            layout=widgets.Layout(width="auto"),
        )
        self.button.on_click(lambda _b: self.run(show=True))
        self.shows = widgets.ToggleButtons(
            options=[("live picture", "picture"), ("sweep curves", "sweep")],
            value="picture",
            tooltip="what the view shows: the live picture or the last sweep's curves",
            style={"button_width": "auto"},
        )
        self.progress = widgets.FloatProgress(
            value=0.0, min=0.0, max=1.0, layout=widgets.Layout(visibility="hidden")
        )
        self.note = widgets.HTML("")
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="100%"))
        self.result: Any = None
        self.error = ""
        self.runs = 0
        self._thread: threading.Thread | None = None
        self._run_id = 0
        self._done = threading.Event()
        self._done.set()
        super().__init__(
            [
                self.field,
                widgets.HBox([self.points, self.envs, self.button]),
                self.progress,
                self.note,
                self.shows,
            ]
        )
        self.add_class("procgen-sweep")

    def follow(self, name: str) -> None:
        """Picks ``name`` (the field the person just changed) when it can be swept."""
        if name in self.fields and not self.busy:
            self.field.value = name

    @property
    def busy(self) -> bool:
        """True while a sweep runs."""
        return not self._done.is_set()

    def run(
        self,
        field: str | None = None,
        *,
        points: int | None = None,
        num_envs: int | None = None,
        wait: bool = False,
        show: bool = False,
        timeout: float = 300.0,
    ) -> Any:
        """Starts a sweep (a running one stops after its chunk); returns its result when
        ``wait``. ``show``: the view shows the curves in place of the picture when done.

        Raises:
            ParamsError: an unknown field, or ``points`` / ``num_envs`` other than an
                integer in the control's range (``POINTS``, ``ENVS``), before anything runs.
            TimeoutError: with ``wait``, when the sweep takes longer than ``timeout``.
        """
        from ..track_gen._checks import check_int

        name = field if field is not None else self.field.value
        if name not in self.fields:
            raise ParamsError(f"sweep field: expected one of {sorted(self.fields)}, got {name!r}")
        points = check_int(
            "sweep points", self.points.value if points is None else points, *POINTS[1:]
        )
        envs = check_int("sweep envs", self.envs.value if num_envs is None else num_envs, *ENVS[1:])
        values = sweep_values(self.fields[name], points)
        self._run_id += 1
        run_id = self._run_id
        params = self._current()
        done = self._done = threading.Event()
        self.progress.value = 0.0
        self.progress.layout.visibility = "visible"
        self.note.value = f"<span>sweeping {html.escape(readable(name))}…</span>"
        thread = threading.Thread(
            target=self._work,
            args=(run_id, done, params, name, values, envs, show),
            name="procgen-nb-sweep",
            daemon=True,
        )
        self._thread = thread
        thread.start()
        if wait:
            if not done.wait(timeout):
                raise TimeoutError(f"SweepPanel.run: expected the sweep to end in {timeout}s")
            return self.result
        return None

    def close(self) -> None:
        """Stops a running sweep after its chunk and closes the widgets."""
        self._run_id += 1
        controls = (self.field, self.points, self.envs, self.button, self.progress, self.note)
        for w in (*controls, self.shows, self.image):
            w.close()
        super().close()

    def _work(
        self,
        run_id: int,
        done: threading.Event,
        params: Params,
        name: str,
        values: np.ndarray,
        envs: int,
        show: bool = False,
    ) -> None:
        def cancelled() -> bool:
            return run_id != self._run_id

        def progress(done: int, total: int) -> None:
            if not cancelled():
                self.progress.value = done / total
                self.note.value = (
                    f"<span>sweeping {html.escape(readable(name))}: {done} of {total} points</span>"
                )

        try:
            res = self.target.sweep(
                params, name, values, envs, progress=progress, cancelled=cancelled, lock=self._lock
            )
            if res is None or cancelled():
                return
            png = _plot_png(res)
            self.result, self.error = res, ""
            self.image.value = png
            if show:
                self.shows.value = "sweep"
            unit = self.fields[name].unit
            span = f"{values[0]:g} to {values[-1]:g}{' ' + unit if unit else ''}"
            self.note.value = (
                f"<span>{html.escape(readable(name))} from {html.escape(span)}: "
                f"{len(values)} points of {res.num_envs} envs</span>"
            )
        except Exception as exc:  # shown in the panel, never raised into the notebook
            if not cancelled():
                self.error = f"{type(exc).__name__}: {exc}"
                self.note.value = (
                    f"<span style='color:#b00020'>sweep failed: {html.escape(self.error)}</span>"
                )
        finally:
            if not cancelled():
                self.progress.layout.visibility = "hidden"
                self.runs += 1
            done.set()


def _count_box(label: str, bounds: tuple[int, int, int], width: str) -> widgets.BoundedIntText:
    """A count control: ``bounds`` is (value, least, most)."""
    value, lo, hi = bounds
    return widgets.BoundedIntText(
        value,
        min=lo,
        max=hi,
        description=label,
        style={"description_width": "initial"},
        layout=widgets.Layout(width=width),
    )


def join_sweeps(parts: list[Any]) -> Any:
    """One ``SweepResult`` of 1-D sweeps of the same key over consecutive chunks."""
    first = parts[0]
    if len(parts) == 1:
        return first

    def cat(get: Callable[[Any], np.ndarray]) -> np.ndarray:
        return np.concatenate([get(p) for p in parts], axis=0)

    key = first.keys[0]
    return dataclasses.replace(
        first,
        values=[cat(lambda p: p.values[0])],
        grid={key: cat(lambda p: p.grid[key])},
        valid_fraction=cat(lambda p: p.valid_fraction),
        reasons={k: cat(lambda p, k=k: p.reasons[k]) for k in first.reasons},
        quantiles={k: cat(lambda p, k=k: p.quantiles[k]) for k in first.quantiles},
        mean={k: cat(lambda p, k=k: p.mean[k]) for k in first.mean},
        rebuilds=sum(p.rebuilds for p in parts),
    )


def _plot_png(res: Any) -> bytes:
    from .. import plot

    shown = [m for m in SHOWN_METRICS if m in res.quantiles]
    fig = plot.new_figure(7.5, 2.4 * (1 + (len(shown) + 2) // 3), 72)
    fig.set_layout_engine("constrained")
    res.plot(metrics=shown, fig=fig)
    legible_legends(fig)
    return plot.figure_png(fig)


def legible_legends(fig: Any) -> None:
    """Redraws each axes' legend at its axis labels' size on a nearly opaque background,
    where it hides the fewest points (``loc="best"``)."""
    for ax in fig.axes:
        if ax.get_legend() is None:
            continue
        handles, labels = ax.get_legend_handles_labels()
        size = max(ax.xaxis.label.get_size(), ax.yaxis.label.get_size())
        ax.legend(handles, labels, fontsize=size, loc="best", framealpha=0.92, facecolor="white")
