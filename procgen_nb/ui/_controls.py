"""One control per declared field: the widget its type, bounds and choices call for.

=====================================  ============================================
Field                                  Control (one per lane of a tuple field)
=====================================  ============================================
named ``seed`` or ``epoch``            ``IntBox`` (text the kernel reads as an integer)
``choices`` with at most 3 values      ``ToggleButtons``
``choices`` with more                  ``Dropdown``
``bool``                               ``Checkbox``
``int`` with a slider range            ``IntSlider`` (soft bounds, widens to bounds)
``float`` with a slider range          ``FloatSlider`` (soft bounds, widens to bounds)
``int`` / ``float`` otherwise          ``IntBox`` / ``FloatText``
``str``                                ``Text``
=====================================  ============================================

A slider starts on the field's soft bounds (as HoloViz param uses softbounds: the range
where the values of interest lie) and widens to its bounds when a value past a soft end
is set from Python, or when the browser sends a soft end (a handle dragged to it, a value
typed past it in the readout, which the browser clamps to it): every value the Params
accept can be set from the control and from Python. An end the bounds leave open widens
to the value. The step is chosen from the soft range (about 200 steps over it).

No lost input: the kernel never writes a value back to the widget the browser is editing
unless it refuses it. An edit the browser sends is rounded to the slider's decimals in the
kernel only (the widget keeps what the browser sent: writing the rounded value back would
overwrite the next key press, which the browser has already applied); ipywidgets' own echo
protocol drops echoes of older values in the browser. A refused text stays as typed, with
the message under it, until the next edit.
"""

from __future__ import annotations

import contextlib
import html
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as widgets
import traitlets

from ..elements import XYZW
from ..params import Field

_INT_BOX_NAMES = ("seed", "epoch")
_LANES = "".join(XYZW)
_DESCRIPTION_WIDTH = "140px"
#: seconds during which the browser sending back a value the kernel showed earlier is taken
#: for a late echo, not an edit
_ECHO_S = 3.0


class _TextOrInt(traitlets.Unicode):
    """A text trait that takes an integer from Python as its decimal text."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        return super().validate(obj, value)


class IntBox(widgets.Text):
    """A text box for an integer: the browser sends what was typed, the kernel reads it
    (``ipywidgets.IntText`` drops ``.`` and ``e`` as they are typed, so ``3.7`` became
    ``37``). Python may assign an int (shown as its text)."""

    value = _TextOrInt("", help="the text shown (an int assigned becomes its text)").tag(sync=True)


def parse_int(text: Any) -> int | None:
    """Returns the integer ``text`` writes (``" 12 "``, ``"-3"``, ``"+4"``), None for
    anything else (``"3.7"``, ``"1e3"``, ``""``)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return int(text)
    t = str(text).strip()
    body = t[1:] if t[:1] in "+-" else t
    return int(t) if body.isascii() and body.isdigit() else None


def slider_span(field: Field) -> tuple[Any, Any] | None:
    """Returns the (min, max) a field's slider starts on: its soft bounds (its bounds
    when it has none); None when the field has no slider range."""
    return field.slider_range


def wide_span(field: Field, *values: Any) -> tuple[Any, Any]:
    """Returns the (min, max) of a slider widened to show ``values``: the field's bounds,
    an end they leave open the farthest of the soft end and ``values``."""
    soft = field.slider_range
    b = field.bounds or (None, None)
    lo = min([soft[0], *values]) if b[0] is None else b[0]
    hi = max([soft[1], *values]) if b[1] is None else b[1]
    return lo, hi


def control_class(field: Field) -> type[widgets.Widget]:
    """Returns the ipywidgets class one lane of ``field`` is edited with."""
    typ = field.scalar_type
    short = field.name.rsplit(".", 1)[-1]
    if short in _INT_BOX_NAMES and typ is int:
        return IntBox
    if field.choices is not None:
        return widgets.ToggleButtons if len(field.choices) <= 3 else widgets.Dropdown
    if typ is bool:
        return widgets.Checkbox
    if typ in (int, float) and field.slider_range is not None:
        return widgets.IntSlider if typ is int else widgets.FloatSlider
    if typ is int:
        return IntBox
    if typ is float:
        return widgets.FloatText
    return widgets.Text


def readable(name: str) -> str:
    """Returns a field name as words: ``min_radius`` -> ``min radius``, ``inside.SHAPE`` ->
    ``inside · SHAPE`` (an upper-case option name stays as the kernel spells it)."""
    parts = [p if p.isupper() else p.replace("_", " ") for p in name.split(".")]
    return " · ".join(parts)


def label_of(field: Field, name: str | None = None) -> str:
    """Returns the label of a field's control: its words, with its unit in brackets."""
    text = readable(name if name is not None else field.name)
    return f"{text} [{field.unit}]" if field.unit else text


def tooltip_of(field: Field, name: str | None = None) -> str:
    """Returns the tooltip of a field's control: its full label (a long one is cut where
    it is shown), its name when the label spells it otherwise, its doc, its accepted range."""
    key = name if name is not None else field.name
    head = label_of(field, key)
    if readable(key) != key:
        head += f" ({key})"
    parts = [head]
    if field.doc:
        parts.append(field.doc)
    if field.bounds is not None:
        lo, hi = field.bounds
        parts.append(f"accepted: [{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]")
    return " — ".join(p for p in parts if p)


def decimals_of(x: float, cap: int = 8) -> int:
    """Returns the fewest decimals that write ``x`` exactly (at most ``cap``)."""
    x = float(x)
    if not math.isfinite(x):
        return 0
    for d in range(cap + 1):
        if round(x, d) == x:
            return d
    return cap


def float_grid(field: Field, *values: float) -> tuple[float, int]:
    """Returns (step, decimals) of a float slider on which the field's soft ends, its
    default and ``values`` all lie exactly: the Field's ``step`` when they do, else
    ``10**-d`` with ``d`` the decimals they need (and at least about 200 steps)."""
    lo, hi = field.slider_range
    known = [lo, hi, *values]
    if isinstance(field.default, int | float) and not isinstance(field.default, bool):
        known.append(field.default)
    need = max(decimals_of(v) for v in known)
    span = float(hi) - float(lo)
    fine = max(0, math.ceil(-math.log10(span / 200))) if span > 0 else 2
    if field.step:
        d = max(need, decimals_of(field.step))
        on_grid = all(
            abs(round((float(v) - float(lo)) / field.step) * field.step - (float(v) - float(lo)))
            <= 1e-9 * max(1.0, abs(float(v)))
            for v in known
        )
        if on_grid and d <= 8:
            return float(field.step), d
    d = min(8, max(need, fine))
    return 10.0**-d, d


class FieldControl:
    """The widgets editing one field: one per lane, in ``box`` with the field's label.

    A control is exact: it holds the value in effect (``get()``), shows it without
    changing it (a float slider's step and readout are chosen so that its ends, the soft
    ends, the default and the value lie on the grid), and reports only what a person
    changed: a value coming back from the browser within half a step of the one in effect
    (a slider snapping it) is not an edit; an edit is rounded to the slider's decimals in
    the kernel and never written back (the browser may already show a newer one). A
    slider that reports while dragged (``continuous_update``) also sends back values it
    is shown: for it, a value the kernel showed and replaced within the last few seconds
    is taken for a late echo, not an edit.

    Args:
        field: the declaration.
        value: the initial (valid) value.
        label: the text shown before the control (the field's name when None).
        continuous_update: whether sliders report values while dragged (False: on release;
            ipywidgets sliders that report while dragged also send back what they are shown).
        on_change: called with this control when the user edits a lane.
    """

    def __init__(
        self,
        field: Field,
        value: Any,
        *,
        label: str | None = None,
        continuous_update: bool = False,
        on_change: Callable[[FieldControl], None] | None = None,
    ):
        self.field = field
        self._quiet = False
        self._on_change = on_change
        self._continuous = continuous_update
        #: values the browser sent for this control (an edit, or a slider showing a value)
        self.browser_values = 0
        self._kernel_set: list[list[tuple[Any, float]]] = [[] for _ in range(field.lanes)]
        cls = control_class(field)
        lanes = field.lanes
        values = tuple(value) if lanes > 1 else (value,)
        self._values = list(values)
        #: per lane, the text a person typed that was refused (shown as typed), or None
        self.refused: list[str | None] = [None] * lanes
        text = label_of(field, label)
        self.tooltip = tooltip_of(field)
        self.widgets: tuple[widgets.Widget, ...] = tuple(
            self._make(cls, values[k], text if lanes == 1 else _LANES[k % 4], continuous_update)
            for k in range(lanes)
        )
        for k, w in enumerate(self.widgets):
            w.observe(lambda change, k=k: self._changed(k, change), names="value")
        #: the message under the control, as text ("" when none)
        self.text = ""
        self.message = widgets.HTML("", layout=widgets.Layout(margin="0 0 0 8px"))
        self.message.add_class("procgen-control-error")
        if lanes == 1:
            row: widgets.Widget = self.widgets[0]
        else:
            head = widgets.Label(text, layout=widgets.Layout(width=_DESCRIPTION_WIDTH))
            head.tooltip = self.tooltip
            row = widgets.HBox([head, *self.widgets])
        self.box = widgets.VBox([row, self.message], layout=widgets.Layout(width="100%"))
        self.box.add_class("procgen-control")
        self.box.add_class("procgen-control-" + readable(field.name).replace(" ", "-"))

    def _make(self, cls: type, value: Any, text: str, continuous: bool) -> widgets.Widget:
        f = self.field
        kw: dict[str, Any] = {"description": text, "tooltip": self.tooltip}
        kw["style"] = {"description_width": _DESCRIPTION_WIDTH if f.lanes == 1 else "initial"}
        kw["layout"] = (
            widgets.Layout(width="98%")
            if f.lanes == 1
            else widgets.Layout(flex="1 1 0%", width="auto")
        )
        if cls in (widgets.ToggleButtons, widgets.Dropdown):
            kw["options"] = [(str(c), c) for c in f.choices]
            if cls is widgets.ToggleButtons:
                kw["style"]["button_width"] = "auto"
        elif cls in (widgets.IntSlider, widgets.FloatSlider):
            lo, hi = slider_span(f)
            if not lo <= value <= hi:  # past a soft end: the slider spans the bounds
                lo, hi = wide_span(f, value)
            kw.update(min=lo, max=hi, continuous_update=continuous)
            if cls is widgets.FloatSlider:
                step, d = float_grid(f, value, lo, hi)
                kw.update(step=step, readout_format=f".{d}f")
            else:
                kw.update(step=max(1, int(f.step or 1)))
        elif cls is widgets.FloatText:
            kw["step"] = None
        elif cls is widgets.Checkbox:
            kw["indent"] = False
        elif cls is IntBox:
            kw["continuous_update"] = False  # sent on Enter or when it loses focus
            value = str(value)
        return cls(value=value, **kw)

    def get(self) -> Any:
        """Returns the value in effect (a tuple for a vector field)."""
        vals = tuple(self._values)
        return vals if self.field.lanes > 1 else vals[0]

    def shown(self) -> Any:
        """Returns what the widgets show (a slider may show a value rounded to its step;
        an integer box its text)."""
        vals = tuple(w.value for w in self.widgets)
        return vals if self.field.lanes > 1 else vals[0]

    def shows(self, value: Any) -> bool:
        """Whether the control holds ``value`` and shows it: a slider within half a step
        (what the browser sent), an integer box its text, or a refused text as typed."""
        values = tuple(value) if self.field.lanes > 1 else (value,)
        if list(values) != self._values:
            return False
        for lane, (w, v) in enumerate(zip(self.widgets, values, strict=True)):
            if self.refused[lane] is not None:
                continue  # the refused text stays as typed until the next edit
            if isinstance(w, IntBox):
                if parse_int(w.value) != v:
                    return False
            elif isinstance(w, widgets.FloatSlider) and isinstance(v, int | float):
                if not abs(float(w.value) - float(v)) < w.step / 2:
                    return False
            elif w.value != v:
                return False
        return True

    def set(self, value: Any) -> None:
        """Shows ``value`` without reporting it as an edit (a slider widens, and its step
        gets finer, to show it exactly); a refused text is cleared."""
        values = tuple(value) if self.field.lanes > 1 else (value,)
        for lane, v in enumerate(values):
            if v != self._values[lane]:  # a new value from Python, not a re-show
                self._remember(lane, v)
        self._values = list(values)
        self.refused = [None] * self.field.lanes
        with self.quiet():
            for w, v in zip(self.widgets, values, strict=True):
                # one message: min, max, step and value together (a browser seeing a new
                # range before its value would clamp the value it shows)
                with w.hold_sync():
                    if isinstance(w, widgets.IntSlider | widgets.FloatSlider):
                        if not w.min <= v <= w.max:  # past the range: to the bounds
                            self._widen(w, v)
                    w.value = str(v) if isinstance(w, IntBox) else v

    def _widen(self, w: widgets.Widget, value: Any) -> None:
        """Widens slider ``w`` to the field's bounds (and ``value``), its step finer when
        the float grid needs it (inside ``hold_sync``: one message with the value)."""
        lo, hi = wide_span(self.field, value, w.min, w.max)
        if lo < w.min:
            w.min = lo
        if hi > w.max:
            w.max = hi
        if isinstance(w, widgets.FloatSlider):
            step, d = float_grid(self.field, value, w.min, w.max)
            if step < w.step:
                w.step, w.readout_format = step, f".{d}f"

    def _at_end(self, w: widgets.Widget, value: Any) -> None:
        """The browser sent an end of slider ``w`` short of the field's bounds (a handle
        dragged there, or a value typed past it, which the browser clamps): the slider
        widens to the bounds, so the next drag or typed value can go past it."""
        lo, hi = wide_span(self.field, w.min, w.max)
        if (value >= w.max and hi > w.max) or (value <= w.min and lo < w.min):
            with self.quiet(), w.hold_sync():
                self._widen(w, value)

    def _remember(self, lane: int, value: Any) -> None:
        self._kernel_set[lane].append((value, time.monotonic()))
        del self._kernel_set[lane][:-8]

    def _stale_echo(self, lane: int, value: Any) -> bool:
        w = self.widgets[lane]
        if not getattr(w, "continuous_update", False):
            return False  # it sends only what a person did: never an echo
        tol = w.step / 2 if isinstance(w, widgets.FloatSlider) else 0
        now = time.monotonic()
        for v, t in self._kernel_set[lane][:-1]:
            if now - t > _ECHO_S:
                continue
            if v == value or (tol and isinstance(v, int | float) and abs(v - value) < tol):
                return True
        return False

    def show_message(self, text: str) -> None:
        """Shows ``text`` (an error in the person's words) under the control ("" clears)."""
        self.text = text
        self.message.value = (
            f'<span style="color:#b00020">{html.escape(text)}</span>' if text else ""
        )

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Changes made inside the block are not reported as edits."""
        old, self._quiet = self._quiet, True
        try:
            yield
        finally:
            self._quiet = old

    def refuse(self, lane: int, text: str) -> None:
        """Keeps a refused text as typed in lane ``lane`` (the value in effect stays)."""
        self.refused[lane] = text

    def keep(self, value: Any) -> None:
        """Holds ``value`` as the value in effect without writing to the widgets (a
        refused text stays as typed)."""
        self._values = list(value) if self.field.lanes > 1 else [value]

    def _changed(self, lane: int, change: dict[str, Any]) -> None:
        w, new = self.widgets[lane], change["new"]
        from_browser = not self._quiet and "value" in getattr(w, "_property_lock", {})
        if from_browser:
            self.browser_values += 1
        elif not self._quiet:  # Python set it: remember it, to tell a late echo from an edit
            self._remember(lane, new)
        if self._quiet:
            return
        cur = self._values[lane]
        if isinstance(w, IntBox):
            value = parse_int(new)
            if value is None:  # refused as typed: the message says why, the text stays
                self.refused[lane] = str(new)
                if self._on_change is not None:
                    self._on_change(self, lane=lane, text=str(new))
                return
            was_refused, self.refused[lane] = self.refused[lane] is not None, None
            if value == cur and not was_refused:
                return
            self._values[lane] = value
            if self._on_change is not None:
                self._on_change(self, lane=lane)
            return
        self.refused[lane] = None
        if from_browser and new != cur and self._stale_echo(lane, new):
            # a continuous slider sent back a value the kernel showed before the one in
            # effect (it had not seen the newer one yet): not an edit; show the value in
            # effect again
            with self.quiet():
                w.value = cur
            return
        if isinstance(w, widgets.FloatSlider) and isinstance(new, int | float):
            if isinstance(cur, int | float) and abs(float(new) - float(cur)) < w.step / 2:
                return  # the slider showed the value in effect on its grid: not an edit
            new = round(float(new), decimals_of(w.step))
        if new == self._values[lane] and type(new) is type(self._values[lane]):
            return
        if from_browser and isinstance(w, widgets.IntSlider | widgets.FloatSlider):
            self._at_end(w, new)
        self._values[lane] = new
        if self._on_change is not None:
            self._on_change(self)
