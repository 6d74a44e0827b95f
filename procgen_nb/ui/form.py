"""``params_form``: a form of controls made from a ``Params`` class or instance.

The form is an ``ipywidgets.VBox`` with a ``value`` trait holding a validated Params
instance, so ``form.observe(handler, names="value")`` works as for any widget. An edit
the field refuses shows the refusal on the form's error line and the control goes back
to the last valid value; no exception reaches the notebook.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import traitlets

from ..errors import ParamsError
from ..params import Params
from ._controls import FieldControl, IntBox, label_of, readable


class ParamsForm(widgets.VBox):
    """Controls for every field of a Params class, with a validated ``value``.

    Args:
        params: a Params class (its defaults are shown) or instance.
        title: an optional heading shown above the controls.
        group: when True, fields named ``"<group>.<name>"`` are shown in a collapsible
            section per group, labelled ``<name>`` (a graph's ``"node.param"`` fields).
        continuous_update: whether sliders report values while dragged (False: on release;
            ipywidgets sliders that report while dragged also send back what they are shown).
        sections: (title, field names, open) of the collapsible sections, instead of
            ``group``'s.
        kernel: fields shown in a collapsed "kernel parameters" section inside their own
            section (kernel-level values a graph found).

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
        continuous_update: bool = False,
        sections: Sequence[tuple[str, Sequence[str], bool]] | None = None,
        kernel: Collection[str] = (),
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
        values = current.to_dict()
        fields = cls.fields()
        kernel = set(kernel)

        def control(name: str, label: str | None) -> widgets.Widget:
            ctl = FieldControl(
                fields[name],
                values[name],
                label=label,
                continuous_update=continuous_update,
                on_change=self._edited,
            )
            self.controls[name] = ctl
            return ctl.box

        rows: list[widgets.Widget] = []
        if title:
            rows.append(widgets.HTML(f"<b>{html.escape(title)}</b>"))
        if sections is None and group:
            sections = _node_sections(list(fields))
        if sections is None:
            rows += [control(name, None) for name in fields]
        else:
            placed: set[str] = set()
            for head, names, is_open in sections:
                names = [n for n in names if n in fields and n not in placed]
                placed.update(names)
                own = [n for n in names if n not in kernel]
                deep = [n for n in names if n in kernel]
                prefix = _common_prefix(names, head)
                children = [control(n, _short(n, prefix)) for n in own]
                if deep:
                    inner = widgets.VBox([control(n, _short(n, prefix)) for n in deep])
                    children.append(
                        _section(
                            "kernel parameters (override what the node passes)",
                            [
                                widgets.HTML(
                                    "<i>kernel-level values the node passes as literals; "
                                    "set one to override it</i>"
                                ),
                                inner,
                            ],
                            False,
                            "procgen-kernel-section",
                        )
                    )
                rows.append(_section(head, children, is_open, "procgen-section"))
            rest = [n for n in fields if n not in placed]
            rows += [control(n, None) for n in rest]
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
            # a control showing the value (a slider within half a step of what the
            # browser sent, a refused text as typed) is left as it is: writing to it
            # would overwrite an edit the browser made since
            if not ctl.shows(values[name]):
                ctl.set(values[name])

    @traitlets.observe("error")
    def _show_error(self, change: dict[str, Any]) -> None:
        text = change["new"]
        if self.__dict__.get("_control_error"):
            text = ""  # shown under its control: once
        self._error_line.value = (
            f'<span style="color:#b00020">{html.escape(text)}</span>' if text else ""
        )

    # -- edits --------------------------------------------------------------------------
    def _edited(self, ctl: FieldControl, lane: int | None = None, text: str | None = None) -> None:
        name = ctl.field.name
        wanted: Any = ctl.get()
        if text is not None:  # lane ``lane`` holds a text that is no number: refuse it as typed
            lanes = list(wanted) if ctl.field.lanes > 1 else [wanted]
            lanes[lane or 0] = text
            wanted = tuple(lanes) if ctl.field.lanes > 1 else text
        try:
            new = self.value.replace(**{name: wanted})
        except ParamsError as exc:
            # the message once, under the control (the error line is for refusals that
            # belong to no control); a text box keeps what was typed, other controls go
            # back to the value in effect
            self._control_error = True
            shown = text if text is not None else _lane_text(ctl, wanted, lane)
            ctl.show_message(in_words(ctl, shown, str(exc)))
            self.error = str(exc)  # after the message: observers see the control refused
            good = self.value.to_dict()[name]
            if lane is not None and isinstance(ctl.widgets[lane], IntBox):
                ctl.refuse(lane, str(ctl.widgets[lane].value))
                ctl.keep(good)
            else:
                ctl.set(good)
            return
        self._control_error = False
        self.error = ""
        for c in self.controls.values():
            if c.text or c.message.value:  # one already clear stays as it is (no trait set)
                c.show_message("")
        self.value = new

    @property
    def refused(self) -> bool:
        """Whether a control shows a refused value (its message under it)."""
        return any(c.text for c in self.controls.values())

    @property
    def browser_values(self) -> int:
        """How many values the browser has sent to the form's controls (0 for a form that
        was only shown: showing a control sends nothing)."""
        return sum(c.browser_values for c in self.controls.values())

    def show_message(self, name: str, text: str) -> None:
        """Shows ``text`` under the control of ``name`` (the form's error line when the
        form has no such control)."""
        if name in self.controls:
            self.controls[name].show_message(text)
        else:
            self._control_error = False
            self.error = text

    def message_text(self) -> str:
        """The first message under a control, else the form's error ("" when none)."""
        return next((c.text for c in self.controls.values() if c.text), self.error)

    def message(self, name: str) -> str:
        """Returns the message under the control of ``name`` ("" when none)."""
        return self.controls[name].text if name in self.controls else ""

    def clear_messages(self) -> None:
        """Clears every message under the controls; a box still showing a refused text
        shows the value in effect again (the refusal it stood for is gone with it)."""
        values = self.value.to_dict()
        for name, c in self.controls.items():
            if any(r is not None for r in c.refused):
                c.set(values[name])
            if c.text or c.message.value:  # one already clear stays as it is (no trait set)
                c.show_message("")

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


def in_words(ctl: FieldControl, value: Any, message: str) -> str:
    """Returns a refusal in the person's words: the control's label, the value, what is
    accepted (the refusal's "expected ..." part, with the bounds when it names only the
    type)."""
    f = ctl.field
    label = label_of(f, readable(f.name))
    expected = message.split(": ", 1)[-1] if ": expected" in message else message
    expected = expected.rsplit(", got ", 1)[0]
    expected = expected.removeprefix("expected ")
    if expected in ("an integer", "a number") and f.bounds is not None:
        lo, hi = f.bounds
        expected += f" in [{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    return f"{label}: {value!r} is not accepted; accepted: {expected}"


def _lane_text(ctl: FieldControl, wanted: Any, lane: int | None) -> Any:
    """The value wanted in the lane edited (the whole value for a scalar field)."""
    if ctl.field.lanes > 1 and lane is not None:
        return wanted[lane]
    return wanted


def _common_prefix(names: Sequence[str], head: str) -> str:
    """The ``"<group>"`` every name of a section starts with (``head`` when they start with
    it), or "" when they share none."""
    firsts = {n.split(".", 1)[0] for n in names if "." in n}
    if len(firsts) == 1 and all("." in n for n in names):
        return firsts.pop()
    return head


def _short(name: str, head: str) -> str:
    return name[len(head) + 1 :] if name.startswith(head + ".") else name


def _node_sections(names: list[str]) -> list[tuple[str, list[str], bool]]:
    out: dict[str, list[str]] = {}
    for n in names:
        out.setdefault(n.split(".", 1)[0] if "." in n else "", []).append(n)
    return [(head or "parameters", ns, True) for head, ns in out.items()]


def _section(title: str, children: list, is_open: bool, cls: str) -> widgets.Widget:
    acc = widgets.Accordion(children=[widgets.VBox(children)], titles=(title,))
    acc.selected_index = 0 if is_open else None
    acc.add_class(cls)
    return acc


def params_form(
    params: type[Params] | Params,
    *,
    title: str | None = None,
    group: bool = False,
    continuous_update: bool = False,
    sections: Sequence[tuple[str, Sequence[str], bool]] | None = None,
    kernel: Collection[str] = (),
) -> ParamsForm:
    """Returns a ``ParamsForm`` for a Params class or instance.

    Args:
        params: a Params class (shows its defaults) or a Params instance.
        title: an optional heading.
        group: group ``"<group>.<name>"`` fields in a collapsible section per group.
        continuous_update: whether sliders report values while dragged (False: on release;
            ipywidgets sliders that report while dragged also send back what they are shown).
        sections: (title, field names, open) of the collapsible sections (instead of
            ``group``'s); fields in none follow them.
        kernel: fields shown in a collapsed "kernel parameters" section of their own
            section (kernel-level values).

    Returns:
        The form; ``form.value`` is the validated Params instance it shows.

    Raises:
        ParamsError: when ``params`` is neither a Params class nor instance.
    """
    return ParamsForm(
        params,
        title=title,
        group=group,
        continuous_update=continuous_update,
        sections=sections,
        kernel=kernel,
    )


def graph_form(
    graph: Any,
    *,
    node: str | None = None,
    continuous_update: bool = False,
) -> ParamsForm:
    """Returns a form for a graph's parameters, a heading per node.

    The fields are ``graph.params()`` (``"node.param"`` -> ``Field``: node parameters and
    the kernel-level ones the graph declares, uniforms and specialize options), shown at
    ``graph.values``. ``form.value.to_dict()`` is what ``graph.cook(params=...)`` takes.

    Args:
        graph: a ``procgen_nb.Graph`` (anything with ``params()`` and ``values``).
        node: only the parameters of this node.
        continuous_update: whether sliders report values while dragged (False: on release;
            ipywidgets sliders that report while dragged also send back what they are shown).

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
