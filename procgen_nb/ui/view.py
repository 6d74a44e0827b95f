"""``explore(target)``: the controls beside a live view that cooks on change.

The view cooks on a background thread (``CookLoop``): the notebook stays responsive, a
change that arrives during a cook replaces the queued one, and a dragged slider cooks at
most ``1 / min_interval`` times a second and once more at its last value. Each cook
redraws in place: the envs and the counts chart are PNG bytes (matplotlib's Agg canvas,
no pyplot figure) set on ``ipywidgets.Image`` widgets, the counts and the cook report are
HTML tables. A failed cook shows its message and keeps the last drawing.

Tests and notebooks drive it from Python::

    view = explore("polar")
    view.form.widget("lobes").value = 7
    frame = view.wait()          # or view.cook_now()
    frame.counts["valid envs"]
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
import traitlets

from ..errors import ProcgenError
from ..params import Params
from . import _render
from .clipboard import CopyButton
from .form import ParamsForm
from .frame import Frame
from .targets import Target, as_target
from .worker import CookLoop


class ExploreView(widgets.HBox):
    """Controls (a ``ParamsForm``) beside a live view of a target's cook.

    Args:
        target: what ``as_target`` accepts (a generator name, Stage, GeneratorSpec, graph,
            a function with ``params=``, or a ``Target``).
        params: the Params class of a function target.
        min_interval: the least seconds between two cooks' starts (throttle).
        max_envs: draw at most this many envs.
        cook: cook the starting values at once (in the background).
        **options: passed to the target (``num_envs``, ``num_points``, ``seed``,
            ``outputs``).

    Attributes:
        form: the ``ParamsForm`` of the target's parameters.
        frame: the last cooked ``Frame`` (None before the first cook finishes).
        error: the message of the last failed cook ("" after a cook succeeds).
        cooks: how many cooks finished (succeeded or failed).

    Raises:
        ParamsError: when ``target`` is none of the accepted kinds.
    """

    frame = traitlets.Any(None)
    error = traitlets.Unicode("")
    cooks = traitlets.Int(0)

    def __init__(
        self,
        target: Any,
        *,
        params: type[Params] | Params | None = None,
        min_interval: float = 0.25,
        max_envs: int = 36,
        cook: bool = True,
        **options: Any,
    ):
        self.target: Target = as_target(target, params, **options)
        self.max_envs = max_envs
        self.form = ParamsForm(self.target.initial, title=self.target.name, group=self.target.group)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="480px"))
        self.image.add_class("procgen-view")
        self.counts_image = widgets.Image(
            format="png", layout=widgets.Layout(width="480px", height="auto")
        )
        self.counts_image.add_class("procgen-counts-chart")
        self.counts_text = widgets.HTML("")
        self.counts_text.add_class("procgen-counts-text")
        self.report = widgets.HTML("")
        self.report.add_class("procgen-report")
        self.status = widgets.HTML("")
        self.status.add_class("procgen-status")
        self.progress = widgets.FloatProgress(
            value=0.0, min=0.0, max=1.0, description="", layout=widgets.Layout(visibility="hidden")
        )
        self.code_button = CopyButton(
            description="Copy as code",
            tooltip="copy the current parameters as Python code (shown below as well)",
        )
        self.code_button.add_class("procgen-copy")
        self.copy_note = widgets.HTML("")
        self.copy_note.add_class("procgen-copy-note")
        self.code_area = widgets.Textarea(
            "", layout=widgets.Layout(width="100%", height="14em", display="none")
        )
        self.code_button.on_click(self._copy_code)
        self._left = left = widgets.VBox(
            [
                self.form,
                widgets.HBox([self.code_button, self.copy_note]),
                self.code_area,
                self.progress,
                self.status,
                self.counts_text,
            ],
            layout=widgets.Layout(width="460px", min_width="460px"),
        )
        right = widgets.VBox(
            [self.image, self.counts_image, self.report],
            layout=widgets.Layout(width="490px", min_width="490px"),
        )
        super().__init__([left, right])
        self.add_class("procgen-explore")
        self._loop = CookLoop(self._cook, min_interval=min_interval)
        self.form.observe(self._changed, names="value")
        self.code_button.text = self.code()
        if cook:
            self._loop.request(self.form.value)

    def __repr__(self) -> str:
        # stable text (nbval checks it): what is explored and with which controls
        # (its controls can grow after the first cook, which runs on another thread)
        return f"ExploreView({self.target.name!r}, target={type(self.target).__name__})"

    # -- public -------------------------------------------------------------------------
    @property
    def value(self) -> Params:
        """The current parameters (the form's validated value)."""
        return self.form.value

    @property
    def counts(self) -> dict[str, float]:
        """The counts of the last cooked frame ({} before the first)."""
        return dict(self.frame.counts) if self.frame is not None else {}

    def set(self, **values: Any) -> None:
        """Sets fields from Python; the controls show them and a cook is queued.

        Raises:
            ParamsError: for a refused value or an unknown field (nothing changes).
        """
        self.form.value = self.form.value.replace(**values)

    def wait(self, timeout: float = 120.0) -> Frame | None:
        """Waits until no cook is queued or running; returns the last frame.

        Raises:
            TimeoutError: when cooks are still running after ``timeout`` seconds.
        """
        if not self._loop.wait(timeout):
            raise TimeoutError(f"ExploreView.wait: expected the cooks to finish in {timeout}s")
        return self.frame

    def cook_now(self, timeout: float = 120.0) -> Frame | None:
        """Cooks the current parameters and waits for that cook; returns its frame.

        Raises:
            TimeoutError: when the cook is still running after ``timeout`` seconds.
        """
        self._loop.request(self.form.value)
        return self.wait(timeout)

    def code(self) -> str:
        """Returns Python code that re-creates the current parameters and their cook."""
        return self.target.code(self.form.value)

    def close(self) -> None:
        """Stops the cook thread and closes the widgets."""
        loop = self.__dict__.get("_loop")
        if loop is not None:
            loop.close()
        for name in ("form", "image", "counts_image", "counts_text", "report"):
            w = self.__dict__.get(name)
            if w is not None:
                w.close()
        super().close()

    # -- internals ----------------------------------------------------------------------
    def _swap_form(self) -> None:
        """Shows a new form for the target's parameters (a cook found new ones)."""
        old, new = (
            self.form,
            ParamsForm(self.target.initial, title=self.target.name, group=self.target.group),
        )
        old.unobserve(self._changed, names="value")
        new.observe(self._changed, names="value")
        self.form = new
        self._left.children = (new, *self._left.children[1:])
        self.code_button.text = self.code()

    def _changed(self, change: dict[str, Any]) -> None:
        self.code_button.text = self.code()  # what a click in the browser copies
        self._loop.request(change["new"])

    def _copy_code(self, _button: Any = None) -> None:
        self.code_area.value = self.code()
        self.code_area.layout.display = None
        if self.code_button.copies:
            err = self.code_button.error
            # a line of its own: a cook finishing meanwhile writes the status line
            self.copy_note.value = (
                f"<span>the browser did not copy ({html.escape(err)}): select the code below</span>"
                if err
                else "<span>copied the parameters as Python code</span>"
            )

    def _progress(self, fraction: float, text: str) -> None:
        self.progress.value = max(0.0, min(1.0, fraction))
        self.status.value = f"<span>{html.escape(text)}…</span>"

    def _cook(self, params: Params) -> None:
        self.progress.value = 0.0
        self.progress.layout.visibility = "visible"
        self.status.value = "<span>cooking…</span>"
        try:
            frame = self.target.cook(params, self._progress)
            self._progress(0.95, "drawing")
            self.image.value = _render.tracks_png(frame, max_envs=self.max_envs)
            self.counts_image.value = _render.counts_png(frame)
            self.counts_text.value = _render.counts_html(frame)
            self.report.value = _render.report_html(frame)
        except Exception as exc:  # shown in the view, never raised into the notebook
            kind = "" if isinstance(exc, ProcgenError) else f"{type(exc).__name__}: "
            self.error = f"{kind}{exc}"
            self.status.value = (
                f"<span style='color:#b00020'>cook failed: {html.escape(self.error)}</span>"
            )
        else:
            self.error = ""
            self.frame = frame
            if self.target.refresh():
                self._swap_form()
            self.status.value = (
                f"<span>cooked in {frame.elapsed_ms:.0f} ms · {frame.traffic.launches} launches"
                f" · {frame.traffic.readbacks} readbacks · {frame.traffic.builds} builds</span>"
            )
        finally:
            self.progress.value = 1.0
            self.progress.layout.visibility = "hidden"
            self.cooks += 1


def explore(
    target: Any,
    *,
    params: type[Params] | Params | None = None,
    min_interval: float = 0.25,
    max_envs: int = 36,
    **options: Any,
) -> ExploreView:
    """Returns a live view of ``target``: its controls beside what it cooks.

    Args:
        target: a generator name (``"polar"``), a Stage class, a ``GeneratorSpec``, a
            graph (``procgen_nb.Graph``), a function of a Params instance (with
            ``params=``), or a ``procgen_nb.ui.Target``.
        params: the Params class (or starting instance) of a function target.
        min_interval: the least seconds between two cooks' starts.
        max_envs: draw at most this many envs.
        **options: for a generator ``num_envs``, ``num_points``, ``seed`` (starting
            values); for a graph ``outputs`` (the output to draw).

    Returns:
        The ``ExploreView`` widget; it starts cooking the starting values at once.

    Raises:
        ParamsError: when ``target`` is none of the accepted kinds.
        ProcgenError: for a generator when ``procgen_nb.track_gen`` is missing.
    """
    return ExploreView(
        target, params=params, min_interval=min_interval, max_envs=max_envs, **options
    )
