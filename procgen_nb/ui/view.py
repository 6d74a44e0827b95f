"""``explore(target)``: the controls beside a live view that cooks on change.

The view cooks on a background thread (``CookLoop``): the notebook stays responsive, and a
change that arrives during a cook replaces the queued one (the newest value wins). Each
cook is drawn in the browser by a ``TrackCanvas`` (the arrays travel as binary buffers in
one message, with the counts); the cook report is an HTML table in a collapsed section.

Controls send only what a person changed (``FieldControl``); nothing cooks after the
first cook unless a control moved. A cook that fails greys the last picture, shows the
error under the control that was changed (its label, the value, what went wrong), and
puts that control back to the value in effect, so the next valid edit cooks again. A
combination the target knows cannot cook (``Target.check``) is explained the same way
without cooking.

Outside a live kernel (nbconvert, nbval, a static HTML export) the view's output also
carries a PNG of the last frame drawn by matplotlib, so a saved notebook shows the picture.

A graph whose cook read state through ``cpu.read`` digests is polled: every
``poll_interval`` seconds (0.5 s by default; 0 turns it off) the view asks
``Graph.moved_digests()`` (nothing cooks) and cooks again when a digest moved. Polling
pauses while the picture cannot be seen (scrolled away, another tab, its output removed:
the canvas says so) and stops with ``close()`` (``DigestPoller``).

A track generator's view has a sweep mode (``SweepPanel``, a collapsed "sweep a parameter"
section): the field last changed, swept over its slider range with
``procgen_nb.track_gen.sweep`` in the background, drawn as the valid fraction and metric
quantiles against the parameter, with a progress bar; the curves show in place of the
live picture until a control moves (or the panel switches back).

Tests and notebooks drive it from Python::

    view = explore("polar")
    view.form.widget("lobes").value = 7
    frame = view.wait()          # or view.cook_now()
    frame.counts["valid envs"]
"""

from __future__ import annotations

import base64
import html
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import traitlets

from ..errors import ProcgenError
from ..params import Params
from . import _render, node_diagram
from ._controls import label_of, readable
from ._view_tools import PRESETS_FOLDER, ViewTools, check_number
from .canvas import TrackCanvas
from .clipboard import CopyButton
from .form import ParamsForm
from .frame import Frame
from .history import keep_options, load_for_target, read_values
from .poll import POLL_INTERVAL, DigestPoller, check_interval
from .sweep_panel import SweepPanel
from .target import FunctionTarget
from .targets import Target, as_target
from .worker import CookLoop


def _no_progress(fraction: float, text: str) -> None:
    """Later cooks are short: no progress messages on the way to the picture."""


#: seconds ``_repr_mimebundle_`` waits for the first cook to draw the static picture (a
#: first cook that builds kernels for longer shows its progress in the live view instead,
#: and the saved output has no picture until the cell runs again)
STATIC_WAIT_S = 20.0


class ExploreView(ViewTools, widgets.Box):
    """Controls (a ``ParamsForm``) beside a live view of a target's cook.

    Args:
        target: what ``as_target`` accepts (a generator name, Stage, GeneratorSpec, graph,
            a function with ``params=``, or a ``Target``).
        params: the Params class of a function target; for any target, a file
            ``view.save`` wrote or a dict of values: the view opens with those, the
            fields they leave out at the target's starting values (an option in
            ``options`` wins over the file's value of its field; a graph that never
            cooked cooks first, to learn its kernel-level names).
        min_interval: the least seconds between two cooks' starts, a finite number >= 0
            (0: none; a change arriving during a cook replaces the queued one anyway).
        max_envs: draw at most this many envs, an integer >= 1 (the view notes when it
            draws fewer).
        cook: cook the starting values at once (in the background).
        poll_interval: seconds between two polls of a graph's ``cpu.read`` digests (a cook
            follows when one moved), a finite number > 0; 0 or None: no polling.
        presets_folder: the folder of the named presets the view's picker lists and saves
            to (``"presets"``, relative to the notebook's folder).
        **options: passed to the target (``num_envs``, ``num_points``, ``seed``,
            ``outputs``).

    Attributes:
        form: the ``ParamsForm`` of the target's parameters.
        canvas: the ``TrackCanvas`` drawing each cook in the browser.
        browser_values: how many control values the browser has sent.
        frame: the last cooked ``Frame`` (None before the first cook finishes).
        error: the message of the last failed cook ("" after a cook succeeds).
        cooks: how many cooks finished (succeeded or failed).
        sweep_panel: the sweep mode (a track generator's view), or None.
        preset_picker: the named presets (``PresetPicker``): choose one, save one.
        poller: the poller of a graph's ``cpu.read`` digests, or None.

    Raises:
        ParamsError: when ``target`` is none of the accepted kinds, ``params`` is none
            of the accepted forms (or a file saved for another target), ``poll_interval``
            is neither a finite number > 0 nor 0 or None, ``min_interval`` or
            ``max_envs`` is refused, or ``presets_folder`` is no path.
    """

    frame = traitlets.Any(None)
    error = traitlets.Unicode("")
    cooks = traitlets.Int(0)

    def __init__(
        self,
        target: Any,
        *,
        params: type[Params] | Params | None = None,
        min_interval: float = 0.0,
        max_envs: int = 64,
        cook: bool = True,
        poll_interval: float | None = POLL_INTERVAL,
        presets_folder: str | os.PathLike = PRESETS_FOLDER,
        **options: Any,
    ):
        self.poll_interval = check_interval("explore poll_interval", poll_interval, off=True)
        min_interval = check_number("explore min_interval", min_interval, 0.0)
        self.max_envs = int(check_number("explore max_envs", max_envs, 1, integer=True))
        start = None
        if isinstance(params, str | os.PathLike | Mapping):  # saved values, or a dict
            start, params = params, None
        self.target: Target = as_target(target, params, **options)
        if params is not None and not isinstance(self.target, FunctionTarget):
            read_values(params)  # none of the forms a view of this target can use: refused
        self.poller: DigestPoller | None = None
        self._result: Any = None
        self.form = self._make_form()
        if start is not None:  # a graph that never cooked cooks first (its kernel names)
            values, remade = load_for_target(self.target, start)
            if remade:  # the class changed: the form is made again with the fields found
                self.form.close()
                self.form = self._make_form()
            self.form.value = keep_options(values, self.target.initial, options)
        self.canvas = TrackCanvas(max_envs=max_envs, layout=widgets.Layout(width="100%"))
        self.report = widgets.HTML("")
        self.report.add_class("procgen-report")
        report_box = widgets.Accordion(children=[self.report], titles=("cook report",))
        report_box.selected_index = None
        self.status = widgets.HTML("")
        self.status.add_class("procgen-status")
        self.progress = widgets.FloatProgress(
            value=0.0, min=0.0, max=1.0, description="", layout=widgets.Layout(visibility="hidden")
        )
        self.code_button = CopyButton(
            description="Copy as code",
            tooltip="copy the parameters in effect as Python code (shown below as well)",
        )
        self.code_button.add_class("procgen-copy")
        self.copy_note = widgets.HTML("")
        self.copy_note.add_class("procgen-copy-note")
        self.code_area = widgets.Textarea(
            "", layout=widgets.Layout(width="100%", height="8em", display="none")
        )
        self.code_button.on_click(self._copy_code)
        # held by a cook and by each chunk of a sweep: one of them uses the device at a time
        self._device_lock = threading.RLock()
        self.sweep_panel: SweepPanel | None = None
        extra: list[widgets.Widget] = []
        if self.target.sweep_fields():
            self.sweep_panel = SweepPanel(self.target, lambda: self.form.value, self._device_lock)
            sweep_box = widgets.Accordion(
                children=[self.sweep_panel], titles=("sweep a parameter",)
            )
            sweep_box.selected_index = None
            sweep_box.add_class("procgen-sweep-section")
            extra.append(sweep_box)
        title = widgets.HTML(f"<b>{html.escape(self.target.name)}</b>")
        # the sweep section scrolls with the form: the view keeps its height
        self._extra = extra
        # the form scrolls with the page; the picture beside it (or above it, in a narrow
        # view) stays in view while the controls change (sticky: the view's CSS)
        self._form_box = widgets.VBox([self.form, *extra], layout=widgets.Layout(flex="0 1 auto"))
        self._form_box.add_class("procgen-form-box")
        toolbar = self._init_tools(presets_folder)
        self._left = left = widgets.VBox(
            [
                title,
                toolbar,
                self._form_box,
                widgets.HBox([self.code_button, self.copy_note]),
                self.code_area,
                self.progress,
                self.status,
            ],
            layout=widgets.Layout(flex="0 1 360px", min_width="280px"),
        )
        left.add_class("procgen-controls")
        if self.sweep_panel is not None:
            self.sweep_panel.shows.observe(self._show_sweep, names="value")
        # the picture area: the canvas, or the last sweep's curves in its place
        #: a graph's node diagram (each node's state and time in the last cook)
        self.nodes = widgets.HTML("")
        self.nodes.add_class("procgen-nodes-box")
        self._picture = right = widgets.VBox(
            [self.canvas, self.nodes, report_box],
            layout=widgets.Layout(flex="1 1 420px", min_width="300px"),
        )
        right.add_class("procgen-picture")
        super().__init__(
            [left, right],
            layout=widgets.Layout(display="flex", flex_flow="row wrap", width="100%"),
        )
        self.add_class("procgen-explore")
        self._good: Params | None = None  # the values of the last cook that succeeded
        self._loop = CookLoop(self._cook, min_interval=min_interval)
        self.form.observe(self._changed, names="value")
        self.form.observe(self._refused, names="error")
        self.canvas.on_visibility(self._shown)
        self.canvas.on_select(self._clicked)
        self._show_code()
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
    def result(self) -> Any:
        """What the last good cook returned (a ``TrackResult``, a ``Course``, a graph's
        outputs), live: the generator reuses it, so the next cook rewrites it in place.
        Keep a copy (``result.numpy()``) to compare cooks. None before the first cook
        and after a failed one (a failure may have rewritten it half-way)."""
        return self._result

    @property
    def counts(self) -> dict[str, float]:
        """The counts of the last cooked frame ({} before the first)."""
        return dict(self.frame.counts) if self.frame is not None else {}

    def wait(self, timeout: float = 120.0) -> Frame | None:
        """Waits until no cook is queued or running; returns the last frame.

        Raises:
            ParamsError: when ``timeout`` is no finite number >= 0.
            TimeoutError: when cooks are still running after ``timeout`` seconds.
        """
        timeout = check_number("wait(timeout)", timeout, 0.0)
        if not self._loop.wait(timeout):
            raise TimeoutError(f"ExploreView.wait: expected the cooks to finish in {timeout}s")
        return self.frame

    def cook_now(self, timeout: float = 120.0) -> Frame | None:
        """Cooks the current parameters and waits for that cook; returns its frame.

        Raises:
            ParamsError: when ``timeout`` is no finite number >= 0 (nothing cooks).
            TimeoutError: when the cook is still running after ``timeout`` seconds.
        """
        check_number("cook_now(timeout)", timeout, 0.0)
        self._loop.request(self.form.value)
        return self.wait(timeout)

    @property
    def browser_values(self) -> int:
        """How many control values the browser has sent (0 until a person moves one)."""
        return self.__dict__.get("_browser_values_before", 0) + self.form.browser_values

    def code(self) -> str:
        """Returns Python code that re-creates the current parameters and their cook."""
        return self.target.code(self.form.value)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # the live widget, and a PNG of the first frame for where no kernel runs (a saved
        # notebook, nbconvert, a static HTML export)
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return bundle
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        loop = self.__dict__.get("_loop")
        if self.frame is None and loop is not None and not loop.idle:
            loop.wait(STATIC_WAIT_S)
        if self.frame is not None:
            png = _render.tracks_png(self.frame, max_envs=self.max_envs)
            data["image/png"] = base64.b64encode(png).decode("ascii")
        return bundle

    def close(self) -> None:
        """Stops the cook thread and closes the widgets."""
        self.__dict__["_closing"] = True  # a cook finishing now starts no poller
        loop = self.__dict__.get("_loop")
        if loop is not None:
            loop.close()
        # after the cook thread ended: a poller its last cook started is stopped too
        poller = self.__dict__.get("poller")
        if poller is not None:
            poller.stop()
        for name in ("form", "canvas", "report", "sweep_panel", "play_control", "preset_picker"):
            w = self.__dict__.get(name)
            if w is not None:
                w.close()
        super().close()

    # -- internals ----------------------------------------------------------------------
    def _follow(self) -> None:
        """After a cook: polls the target's live state while it has some (a graph's
        ``cpu.read`` digests), stops polling when it has none."""
        live = self.poll_interval > 0 and self.target.live()
        if live and self.poller is None and not self.__dict__.get("_closing"):
            self.poller = DigestPoller(self.target.moved, self._moved, self.poll_interval)
            self.poller.show(self.canvas.visible)
            self.poller.start()
        elif not live and self.poller is not None:
            self.poller.stop()
            self.poller = None

    def _moved(self, nodes: list[str]) -> None:
        """A polled digest moved: cook again (unless a cook is queued or running)."""
        if self._loop.idle:
            self.status.value = (
                f"<span>state read by {html.escape(', '.join(nodes))} moved: cooking…</span>"
            )
            self._loop.request(self.form.value)

    def _show_sweep(self, change: dict[str, Any]) -> None:
        """The picture area shows the live picture or the last sweep's curves."""
        panel = self.sweep_panel
        sweep = change["new"] == "sweep" and panel is not None
        rest = self._picture.children[1:]
        self._picture.children = ((panel.image,) if sweep else (self.canvas,)) + rest

    def _shown(self, visible: bool) -> None:
        if self.poller is not None:
            self.poller.show(visible)

    def _make_form(self) -> ParamsForm:
        t = self.target
        return ParamsForm(t.initial, group=t.group, sections=t.sections(), kernel=t.kernel_keys())

    def _changed(self, change: dict[str, Any]) -> None:
        if change["new"] == change["old"] or getattr(self, "_reverting", False):
            return
        problem = self.target.check(change["new"])
        if problem is not None:  # as a failed cook: the values in effect stay, it is said
            name, text = problem
            changed = _changed_fields(change["old"], change["new"])
            where = next((n for n in changed if n == name), changed[0] if changed else name)
            self._reverting = True
            try:
                self.form.value = change["old"]
            finally:
                self._reverting = False
            self.form.show_message(where, f"{text}; back to the value in effect")
            self.canvas.grey(f"not cooked: {text}")
            self.status.value = (
                f"<span style='color:#b00020'>not cooked: {html.escape(text)}</span>"
            )
            return
        self._record(change["new"])
        self._show_code()
        self._edited_at = time.time() * 1e3
        self._loop.request(change["new"])
        if self.sweep_panel is not None:  # the sweep follows the parameter just moved
            moved = _changed_fields(change["old"], change["new"])
            if moved:
                self.sweep_panel.follow(moved[0])
            self.sweep_panel.shows.value = "picture"  # the edit's picture

    def _show_code(self) -> None:
        """The code of the values in effect: what a click copies, the code box, and no
        "copied" note (it spoke of earlier values)."""
        code = self.code()
        self.code_button.text = code
        if self.code_area.value != code:
            self.code_area.value = code
        if self.copy_note.value:
            self.copy_note.value = ""

    def _refused(self, change: dict[str, Any]) -> None:
        """A control holds a refused value: the picture and its counts grey (they show
        the values in effect, not what the controls show); ungreyed once it is cleared."""
        if change["new"] and self.form.refused:
            self.canvas.grey(f"not cooked: {self.form.message_text()}")
        elif not change["new"] and self.canvas.stale and not self.error:
            self.canvas.ungrey()

    def _clicked(self, env: int) -> None:
        """A click on env ``env`` in the browser: selects it. A click on an env the frame
        in effect does not have (the browser still drew an older, larger picture) selects
        nothing; any other failure is shown in the view's status line, never raised."""
        if not 0 <= env < self._envs_drawn():
            return
        try:
            self.select(env)
        except Exception as exc:  # shown in the view, never raised into the notebook
            kind = "" if isinstance(exc, ProcgenError) else f"{type(exc).__name__}: "
            self.status.value = (
                f"<span style='color:#b00020'>select env {env}: {html.escape(kind + str(exc))}"
                "</span>"
            )

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

    def _failed(self, params: Params, exc: BaseException) -> None:
        kind = "" if isinstance(exc, ProcgenError) else f"{type(exc).__name__}: "
        self.error = f"{kind}{exc}"
        base = self._good if self._good is not None else self.target.initial
        changed = _changed_fields(base, params)
        values = params.to_dict()
        if changed:
            name = changed[0]
            ctl = self.form.controls.get(name)
            label = label_of(ctl.field, readable(name)) if ctl is not None else name
            said = ", ".join(
                f"{label_of(self.form.controls[n].field, readable(n))} = {values[n]!r}"
                for n in changed
                if n in self.form.controls
            )
            why = _reason_in_words(str(exc))
            text = f"{said} did not cook: {why}; back to the value in effect"
            self.form.show_message(name, text)
            overlay = f"{label} = {values[name]!r} did not cook: {why}"
        else:
            text = overlay = f"did not cook: {self.error}"
            self.form.error = text
        self.canvas.grey(overlay)
        self.status.value = (
            f"<span style='color:#b00020'>cook failed: {html.escape(self.error)}</span>"
        )
        # the controls go back to the values in effect (those the picture shows), unless
        # the person moved them again meanwhile: the next valid edit cooks from there
        if self._good is not None and changed:
            now = self.form.value.to_dict()
            good = self._good.to_dict()
            back = {n: good[n] for n in changed if n in now and n in good and now[n] == values[n]}
            if back:
                self._retract(params)
                self._reverting = True
                try:
                    self.form.value = self.form.value.replace(**back)
                finally:
                    self._reverting = False
                self._show_code()

    def _cook(self, params: Params) -> None:
        started = time.time() * 1e3
        edited = self.__dict__.pop("_edited_at", started)
        first = self.frame is None
        if first:  # the first cook builds (seconds): show progress; later cooks are short
            self.progress.value = 0.0
            self.progress.layout.visibility = "visible"
            self.status.value = "<span>cooking…</span>"
        try:
            with self._device_lock:
                frame = self.target.cook(params, self._progress if first else _no_progress)
                racing = self._racing_line(params)  # None unless "racing line" is ticked
            cooked = time.time() * 1e3
            self.canvas.show(
                frame,
                reason_labels=self.target.reason_labels(),
                width=self.target.width(params),
                timing={"edited": edited, "started": started, "cooked": cooked},
                racing=racing,
            )
            self.report.value = _render.report_html(frame)
        except Exception as exc:  # shown in the view, never raised into the notebook
            self._result = None  # a generate that ran rewrote it: no longer the frame's
            self._failed(params, exc)
            self._show_nodes(None, str(exc))
        else:
            self.error = ""
            self.form.clear_messages()
            self._good = params
            self._result = self.target.result
            self.frame = frame
            self._show_nodes(frame)
            if self.target.refresh():
                self._swap_form()
                self._good = self.form.value
            self._follow()
            self.status.value = (
                f"<span>cooked in {frame.elapsed_ms:.0f} ms · {frame.traffic.launches} launches"
                f" · {frame.traffic.readbacks} readbacks · {frame.traffic.builds} builds</span>"
            ) + (f"<br><span>{html.escape(self.racing_error)}</span>" if self.racing_error else "")
        finally:
            if first:
                self.progress.value = 1.0
                self.progress.layout.visibility = "hidden"
            self.cooks += 1

    def _show_nodes(self, frame: Frame | None, failure: str = "") -> None:
        """A graph's node diagram: each node's state and time in the last cook (after a
        failure, the last good cook's for the nodes it did not reach)."""
        graph = getattr(self.target, "graph", None)
        if frame is not None:
            self._good_rows = frame.report
        rows = frame.report if frame is not None else self.__dict__.get("_good_rows", ())
        diagram = node_diagram.graph_html(graph, rows, failure)
        if diagram:
            self.nodes.value = diagram


def _reason_in_words(message: str) -> str:
    """The "expected ..., got ..." part of a refusal (what is accepted, what was given),
    without the graph, node and op that raised it; the whole message otherwise."""
    i = message.rfind(": expected ")
    return message[i + 2 :] if i >= 0 else message


def _changed_fields(old: Params, new: Params) -> list[str]:
    a, b = old.to_dict(), new.to_dict()
    return [k for k in b if a.get(k) != b[k]]


def explore(
    target: Any,
    *,
    params: type[Params] | Params | None = None,
    min_interval: float = 0.0,
    max_envs: int = 64,
    poll_interval: float | None = POLL_INTERVAL,
    presets_folder: str | os.PathLike = PRESETS_FOLDER,
    **options: Any,
) -> ExploreView:
    """Returns a live view of ``target``: its controls beside what it cooks.

    Args:
        target: a generator name (``"polar"``), a Stage class, a ``GeneratorSpec``, a
            graph (``procgen_nb.Graph``), a function of a Params instance (with
            ``params=``), or a ``procgen_nb.ui.Target``.
        params: the Params class (or starting instance) of a function target; for any
            target a file ``view.save`` wrote, or a dict of values, to open with (the
            fields they leave out at the target's starting values; an option in
            ``options`` wins over the file's value of its field).
        min_interval: the least seconds between two cooks' starts (a finite number >= 0).
        max_envs: draw at most this many envs (an integer >= 1).
        poll_interval: for a graph whose cook reads ``cpu.read`` digests, the seconds
            between two polls of them (0.5 s; 0 or None: none); a digest that moved
            cooks the graph again. Polling pauses while the view is hidden and stops with
            ``close()``.
        presets_folder: the folder of named presets the view's picker lists (a dropdown
            that restores every value of one) and saves to.
        **options: for a generator ``num_envs``, ``num_points``, ``seed`` (starting
            values); for a graph ``outputs`` (the output to draw).

    Returns:
        The ``ExploreView`` widget; it starts cooking the starting values at once.

    Raises:
        ParamsError: when ``target`` is none of the accepted kinds, ``poll_interval``
            is neither a finite number > 0 nor 0 or None, ``min_interval`` or
            ``max_envs`` is refused, or ``params`` is none of the accepted forms, a file
            saved for another target, names a field the target has not (after a graph's
            first cook) or a refused value.
        ProcgenError: for a generator when ``procgen_nb.track_gen`` is missing.
    """
    return ExploreView(
        target,
        params=params,
        min_interval=min_interval,
        max_envs=max_envs,
        poll_interval=poll_interval,
        presets_folder=presets_folder,
        **options,
    )
