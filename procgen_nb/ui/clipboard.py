"""``CopyButton``: a button that writes a text to the clipboard (an anywidget).

Its front end is ``widgets/copy_button/copy_button.js`` (shipped in the wheel as
``procgen_nb/_assets/widgets``). A click in the browser writes ``text`` to the clipboard and
counts it in ``copies``; where the browser refuses, ``error`` says why. ``click()`` from
Python runs the handlers given to ``on_click`` (what a test or a notebook cell can do: the
kernel has no clipboard of its own).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import traitlets


def _asset(name: str) -> Path:
    """Returns the path of a front-end asset (in the wheel, or the source tree's widgets/)."""
    packaged = importlib.resources.files("procgen_nb") / "_assets" / "widgets" / name
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "widgets" / name


class CopyButton(anywidget.AnyWidget):
    """A button whose click in the browser copies ``text`` to the clipboard.

    Attributes:
        text: what a click copies.
        description: the button's label.
        tooltip: the button's tooltip.
        copies: how many clicks in the browser have run (counted after each).
        error: why the browser refused the last copy ("" when it copied).
    """

    _esm = _asset("copy_button/copy_button.js")
    _css = _asset("copy_button/copy_button.css")
    text = traitlets.Unicode("").tag(sync=True)
    description = traitlets.Unicode("Copy").tag(sync=True)
    tooltip = traitlets.Unicode("").tag(sync=True)
    copies = traitlets.Int(0).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._handlers: list[Callable[[CopyButton], None]] = []
        self.observe(lambda _change: self._run_handlers(), names="copies")

    def on_click(self, handler: Callable[[CopyButton], None]) -> None:
        """Calls ``handler(button)`` after each click (in the browser or through ``click()``)."""
        self._handlers.append(handler)

    def click(self) -> None:
        """Runs the click handlers from Python (the clipboard is the browser's to write)."""
        self._run_handlers()

    def _run_handlers(self) -> None:
        for handler in list(self._handlers):
            handler(self)

    def __repr__(self) -> str:
        return f"CopyButton({self.description!r})"
