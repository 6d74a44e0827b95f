"""``params_form``: a form of controls made from a ``Params`` class or instance.

The form is an ``ipywidgets.VBox`` with a ``value`` trait holding a validated Params
instance, so ``form.observe(handler, names="value")`` works as for any widget. An edit
the field refuses shows the refusal on the form's error line and the control goes back
to the last valid value; no exception reaches the notebook.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets
import traitlets

from ..errors import ParamsError
from ..params import Params
from ._controls import FieldControl


class ParamsForm(widgets.VBox):
    """Controls for every field of a Params class, with a validated ``value``.

    Args:
        params: a Params class (its defaults are shown) or instance.
        title: an optional heading shown above the controls.
        group: when True, fields named ``"<group>.<name>"`` are shown under a heading per
            group, labelled ``<name>`` (a graph's ``"node.param"`` fields).
        continuous_update: whether sliders report values while dragged.

    Attributes:
        value: the current Params instance (always valid). Assign an instance of the same
            class, or a mapping of changes, to show new values.
        error: the last refusal, or "" once a valid edit follows.
        controls: field name -> ``FieldControl`` (``.widgets`` holds one widget per lane).

    Raises:
        ParamsError: when ``params`` is neither a Params class nor instance.
    """

    value = traitlets.Any()
    error = traitlets.Unicode("")

    def __repr__(self) -> str:
        # stable text (nbval checks it): the class and the current values
        return f"ParamsForm({self.value!r})"

    def __init__(
        self,
        params: type[Params] | Params,
        *,
        title: str | None = None,
        group: bool = False,
        continuous_update: bool = True,
    ):
        if isinstance(params, type) and issubclass(params, Params):
            cls, current = params, params()
        elif isinstance(params, Params):
            cls, current = type(params), params
        else:
            raise ParamsError(f"params_form: expected a Params class or instance, got {params!r}")
        self.params_class = cls
        self.controls: dict[str, FieldControl] = {}
        self._error_line = widgets.HTML("", layout=widgets.Layout(min_height="1.5em"))
        self._error_line.add_class("procgen-form-error")
        rows: list[widgets.Widget] = []
        if title:
            rows.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
        last_group = None
        for name, field in cls.fields().items():
            label = None
            if group and "." in name:
                head, label = name.split(".", 1)
                if head != last_group:
                    rows.append(widgets.HTML(f"<b>{html.escape(head)}</b>"))
                    last_group = head
            ctl = FieldControl(
                field,
                current.to_dict()[name],
                label=label,
                continuous_update=continuous_update,
                on_change=self._edited,
            )
            self.controls[name] = ctl
            rows.append(ctl.box)
        rows.append(self._error_line)
        super().__init__(rows)
        self.add_class("procgen-params-form")
        self.value = current

    # -- traits -------------------------------------------------------------------------
    @traitlets.validate("value")
    def _validate_value(self, proposal: Any) -> Params:
        new = proposal["value"]
        if isinstance(new, self.params_class):
            return new
        if isinstance(new, Mapping):
            return self.value.replace(**dict(new))
        raise ParamsError(
            f"{self.params_class.__name__} form: expected a {self.params_class.__name__} or a "
            f"dict of fields, got {new!r}"
        )

    @traitlets.observe("value")
    def _show_value(self, change: dict[str, Any]) -> None:
        values = change["new"].to_dict()
        for name, ctl in self.controls.items():
            if ctl.get() != values[name]:
                ctl.set(values[name])

    @traitlets.observe("error")
    def _show_error(self, change: dict[str, Any]) -> None:
        text = change["new"]
        self._error_line.value = (
            f'<span style="color:#b00020">{html.escape(text)}</span>' if text else ""
        )

    # -- edits --------------------------------------------------------------------------
    def _edited(self, ctl: FieldControl) -> None:
        name = ctl.field.name
        try:
            new = self.value.replace(**{name: ctl.get()})
        except ParamsError as exc:
            self.error = str(exc)
            ctl.set(self.value.to_dict()[name])
            return
        self.error = ""
        self.value = new

    def widget(self, name: str, lane: int = 0) -> widgets.Widget:
        """Returns the widget of lane ``lane`` of field ``name``.

        Raises:
            ParamsError: for a field the form does not have, or a lane past the field's.
        """
        if name not in self.controls:
            raise ParamsError(f"widget: expected one of {sorted(self.controls)}, got {name!r}")
        ws = self.controls[name].widgets
        if not 0 <= lane < len(ws):
            raise ParamsError(f"widget {name!r}: expected a lane in [0, {len(ws) - 1}], got {lane}")
        return ws[lane]


def params_form(
    params: type[Params] | Params,
    *,
    title: str | None = None,
    group: bool = False,
    continuous_update: bool = True,
) -> ParamsForm:
    """Returns a ``ParamsForm`` for a Params class or instance.

    Args:
        params: a Params class (shows its defaults) or a Params instance.
        title: an optional heading.
        group: group ``"<group>.<name>"`` fields under a heading per group.
        continuous_update: whether sliders report values while dragged.

    Returns:
        The form; ``form.value`` is the validated Params instance it shows.

    Raises:
        ParamsError: when ``params`` is neither a Params class nor instance.
    """
    return ParamsForm(params, title=title, group=group, continuous_update=continuous_update)


def graph_form(
    graph: Any,
    *,
    node: str | None = None,
    continuous_update: bool = True,
) -> ParamsForm:
    """Returns a form for a graph's parameters, a heading per node.

    The fields are ``graph.params()`` (``"node.param"`` -> ``Field``: node parameters and
    the kernel-level ones the graph declares, uniforms and specialize options), shown at
    ``graph.values``. ``form.value.to_dict()`` is what ``graph.cook(params=...)`` takes.

    Args:
        graph: a ``procgen_nb.Graph`` (anything with ``params()`` and ``values``).
        node: only the parameters of this node.
        continuous_update: whether sliders report values while dragged.

    Returns:
        The form, grouped by node.

    Raises:
        ParamsError: when ``graph`` has no ``params()`` or ``node`` names no node with
            parameters.
    """
    from ..params import params_class

    if not callable(getattr(graph, "params", None)):
        raise ParamsError(f"graph_form: expected a graph with params(), got {graph!r}")
    fields = dict(graph.params())
    if node is not None:
        nodes = sorted({k.split(".", 1)[0] for k in fields})
        fields = {k: f for k, f in fields.items() if k.split(".", 1)[0] == node}
        if not fields:
            raise ParamsError(f"graph_form(node=...): expected one of {nodes}, got {node!r}")
    fields = {k: dataclasses.replace(f, name=k) for k, f in fields.items()}
    cls = params_class("GraphParams", fields, getattr(graph, "name", "") or "graph")
    values = getattr(graph, "values", {}) or {}
    current = cls(**{k: v for k, v in values.items() if k in fields})
    return ParamsForm(current, group=True, continuous_update=continuous_update)
