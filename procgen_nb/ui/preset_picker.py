"""The explore view's named presets: a dropdown that restores one, a box that saves one.

``PresetPicker`` lists the presets of a folder (``history.Presets``: one JSON file of every
value per name). Choosing a name in its dropdown sets exactly the values saved (the view
cooks them and its history records them); typing a name and pressing "save preset" writes
the values in effect under that name and lists it. The dropdown goes back to its blank
entry once the values move away from the preset chosen (it names what is in effect, or
nothing). A refused name or a file that does not load is said in the picker's note.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ..errors import ProcgenError
from ..params import Params
from .history import Presets

#: the dropdown's entry when no preset is in effect
NONE = ""


class PresetPicker(widgets.VBox):
    """A dropdown of the presets in ``folder`` and a box to save the values as one.

    Args:
        folder: where the preset files are (created on the first save).
        params_class: the Params class the values belong to.
        values: returns the values in effect.
        apply: sets values (the view's form: a cook follows).
        target: the target's name written into each file.

    Attributes:
        dropdown: the presets by name ("" : none chosen).
        reload: the button that lists the folder again (``refresh``).
        name: the name to save as. save: the button that saves. note: what the last
            choice or save did, or why it did not.
    """

    def __init__(
        self,
        folder: str | os.PathLike,
        params_class: type[Params],
        values: Callable[[], Params],
        apply: Callable[[Params], None],
        target: str = "",
    ):
        self.presets = Presets(folder)
        self.params_class = params_class
        self._values, self._apply, self._target = values, apply, target
        self._quiet = False
        self.chosen: Params | None = None  # the values of the preset chosen, while in effect
        self.dropdown = widgets.Dropdown(
            options=[("preset…", NONE)],
            value=NONE,
            description="preset",
            tooltip="restore every value of a named preset (view.load_preset(name))",
            style={"description_width": "initial"},
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="0"),
        )
        self.name = widgets.Text(
            "",
            placeholder="name",
            tooltip="the name to save the values in effect as",
            layout=widgets.Layout(flex="1 1 6em", width="auto", min_width="0"),
        )
        self.save = widgets.Button(
            description="save preset",
            icon="save",
            tooltip="save every value in effect as this name (view.save_preset(name))",
            layout=widgets.Layout(width="auto"),
        )
        self.save.add_class("procgen-save-preset")
        self.reload = widgets.Button(
            description="",
            icon="refresh",
            tooltip="list the folder's presets again (files saved from elsewhere)",
            layout=widgets.Layout(width="auto"),
        )
        self.reload.add_class("procgen-reload-presets")
        self.reload.on_click(lambda _b: self.refresh())
        self.note = widgets.HTML("")
        self.note.add_class("procgen-preset-note")
        self.refresh()
        self.dropdown.observe(self._chosen, names="value")
        self.save.on_click(lambda _b: self.save_as(self.name.value.strip()))
        super().__init__(
            [
                widgets.HBox(
                    [self.dropdown, self.reload, self.name, self.save],
                    layout=widgets.Layout(flex_flow="row wrap", width="100%"),
                ),
                self.note,
            ],
            layout=widgets.Layout(width="100%"),
        )
        self.add_class("procgen-presets")

    def names(self) -> list[str]:
        """The names the dropdown lists (the folder's presets, sorted)."""
        return [v for _t, v in self.dropdown.options if v != NONE]

    def refresh(self) -> None:
        """Lists the folder's presets again (a file saved from elsewhere shows up)."""
        current = self.dropdown.value
        names = self.presets.names()
        self._quiet = True
        try:
            self.dropdown.options = [("preset…", NONE), *((n, n) for n in names)]
            self.dropdown.value = current if current in names else NONE
        finally:
            self._quiet = False

    def save_as(self, name: str) -> None:
        """Saves the values in effect as preset ``name`` and lists it (chosen); a refused
        name is said in the note (nothing is written)."""
        try:
            path = self.presets.save(name, self._values(), self._target)
        except ProcgenError as exc:
            self.note.value = f"<span style='color:#b00020'>{html.escape(str(exc))}</span>"
            return
        self.refresh()
        self.chosen = self._values()
        self._set_quietly(name)
        self.note.value = f"<span>saved as {html.escape(name)} ({html.escape(str(path))})</span>"

    def moved(self, values: Params) -> None:
        """The values in effect became ``values``: the dropdown goes blank unless they are
        the chosen preset's."""
        if self.chosen is not None and values != self.chosen:
            self.chosen = None
            self._set_quietly(NONE)

    def _set_quietly(self, value: str) -> None:
        self._quiet = True
        try:
            self.dropdown.value = value
        finally:
            self._quiet = False

    def _chosen(self, change: dict[str, Any]) -> None:
        if self._quiet or change["new"] == NONE:
            return
        name = change["new"]
        try:
            values = self.presets.load(name, self.params_class, self._target)
        except ProcgenError as exc:  # a file that no longer loads: said, nothing set
            self.note.value = f"<span style='color:#b00020'>{html.escape(str(exc))}</span>"
            self._set_quietly(NONE)
            return
        self.chosen = values
        self._apply(values)
        self.note.value = f"<span>restored {html.escape(name)}</span>"
