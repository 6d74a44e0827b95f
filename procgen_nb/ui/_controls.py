"""One control per declared field: the widget its type, bounds and choices call for.

=====================================  ============================================
Field                                  Control (one per lane of a tuple field)
=====================================  ============================================
named ``seed`` or ``epoch``            ``IntText``
``choices`` with at most 3 values      ``ToggleButtons``
``choices`` with more                  ``Dropdown``
``bool``                               ``Checkbox``
``int`` with a slider range            ``IntSlider`` over the soft bounds
``float`` with a slider range          ``FloatSlider`` over the soft bounds
``int`` / ``float`` otherwise          ``IntText`` / ``FloatText``
``str``                                ``Text``
=====================================  ============================================
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as widgets

from ..params import Field

_INT_BOX_NAMES = ("seed", "epoch")
_LANES = "xyzw"
_DESCRIPTION_WIDTH = "170px"


def control_class(field: Field) -> type[widgets.Widget]:
    """Returns the ipywidgets class one lane of ``field`` is edited with."""
    typ = field.scalar_type
    short = field.name.rsplit(".", 1)[-1]
    if short in _INT_BOX_NAMES and typ is int:
        return widgets.IntText
    if field.choices is not None:
        return widgets.ToggleButtons if len(field.choices) <= 3 else widgets.Dropdown
    if typ is bool:
        return widgets.Checkbox
    if typ in (int, float) and field.slider_range is not None:
        return widgets.IntSlider if typ is int else widgets.FloatSlider
    if typ is int:
        return widgets.IntText
    if typ is float:
        return widgets.FloatText
    return widgets.Text


def label_of(field: Field, name: str | None = None) -> str:
    """Returns the label of a field's control: its name, with its unit in brackets."""
    text = name if name is not None else field.name
    return f"{text} [{field.unit}]" if field.unit else text


def _decimals(step: float) -> int:
    if step <= 0 or not math.isfinite(step):
        return 2
    return max(0, min(8, -math.floor(math.log10(step))))


class FieldControl:
    """The widgets editing one field: one per lane, in ``box`` with the field's label.

    Args:
        field: the declaration.
        value: the initial (valid) value.
        label: the text shown before the control (the field's name when None).
        continuous_update: whether sliders report values while dragged.
        on_change: called with this control when the user edits a lane.
    """

    def __init__(
        self,
        field: Field,
        value: Any,
        *,
        label: str | None = None,
        continuous_update: bool = True,
        on_change: Callable[[FieldControl], None] | None = None,
    ):
        self.field = field
        self._quiet = False
        self._on_change = on_change
        cls = control_class(field)
        lanes = field.lanes
        values = tuple(value) if lanes > 1 else (value,)
        text = label_of(field, label)
        self.widgets: tuple[widgets.Widget, ...] = tuple(
            self._make(cls, values[k], text if lanes == 1 else _LANES[k % 4], continuous_update)
            for k in range(lanes)
        )
        for w in self.widgets:
            w.observe(self._changed, names="value")
        if lanes == 1:
            self.box: widgets.Widget = self.widgets[0]
        else:
            head = widgets.Label(text, layout=widgets.Layout(width=_DESCRIPTION_WIDTH))
            head.tooltip = field.doc or None
            self.box = widgets.HBox([head, *self.widgets])

    def _make(self, cls: type, value: Any, text: str, continuous: bool) -> widgets.Widget:
        f = self.field
        kw: dict[str, Any] = {"description": text, "tooltip": f.doc or None}
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
            lo, hi = f.slider_range
            lo, hi = min(lo, value), max(hi, value)
            kw.update(min=lo, max=hi, continuous_update=continuous)
            if cls is widgets.FloatSlider:
                step = f.step or (hi - lo) / 100 or 0.01
                kw.update(step=step, readout_format=f".{_decimals(step)}f")
            else:
                kw.update(step=max(1, int(f.step or 1)))
        elif cls is widgets.Checkbox:
            kw["indent"] = False
        return cls(value=value, **kw)

    def get(self) -> Any:
        """Returns the value the widgets show (a tuple for a vector field)."""
        vals = tuple(w.value for w in self.widgets)
        return vals if self.field.lanes > 1 else vals[0]

    def set(self, value: Any) -> None:
        """Shows ``value`` without reporting it as an edit (a slider widens to reach it)."""
        values = tuple(value) if self.field.lanes > 1 else (value,)
        with self.quiet():
            for w, v in zip(self.widgets, values, strict=True):
                if isinstance(w, widgets.IntSlider | widgets.FloatSlider):
                    if v < w.min:
                        w.min = v
                    if v > w.max:
                        w.max = v
                w.value = v

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Changes made inside the block are not reported as edits."""
        old, self._quiet = self._quiet, True
        try:
            yield
        finally:
            self._quiet = old

    def _changed(self, change: dict[str, Any]) -> None:
        if not self._quiet and self._on_change is not None:
            self._on_change(self)
