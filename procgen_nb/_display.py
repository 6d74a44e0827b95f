"""How the package's objects show themselves: one-line reprs and notebook HTML.

Each class keeps a two-line ``__repr__`` / ``_repr_html_`` pair that hands its facts to
the helpers here, so the look lives in one place:

- ``line(kind, *facts, **named)``: ``Kind(fact, fact, name=value)``, one line;
- ``table(title, rows, picture=None)``: a small HTML table of (key, value) rows, a title
  naming the object, and an optional inline PNG (a ``data:`` URI) beside it;
- ``tracks_png(xy, valid, num_envs)``: a small grid of centerlines drawn with
  ``plot.plot_tracks`` on the Agg canvas (it reads ``xy`` and ``valid`` back: showing an
  object in a notebook is the one place a picture costs a readback).

Nothing here is public: ``repr(obj)`` and IPython's display formatter are the way in.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable
from typing import Any

#: the most envs a picture draws, and its size in inches at 80 dpi
MAX_ENVS = 16
PICTURE_INCHES = 2.4


def line(kind: str, *facts: Any, **named: Any) -> str:
    """Returns ``kind(fact, ..., name=value, ...)``: strings as they are, values by repr."""
    parts = [str(f) for f in facts] + [f"{k}={v!r}" for k, v in named.items()]
    return f"{kind}({', '.join(parts)})"


def table(title: str, rows: Iterable[tuple[str, Any]], picture: str | None = None) -> str:
    """Returns an HTML block: ``title`` in bold, a two-column table, the picture beside it.

    Args:
        title: what the object is (escaped).
        rows: (key, value) pairs; a value is written as ``str`` and escaped.
        picture: a ``data:image/png;base64,...`` URI, or None for none.
    """
    body = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(str(k))}</th>"
        f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>"
        for k, v in rows
    )
    info = f"<div><b>{html.escape(title)}</b><table>{body}</table></div>"
    if picture is None:
        return f"<div class='procgen-nb'>{info}</div>"
    img = f"<img src='{picture}' alt='{html.escape(title)}' style='width:12em;height:12em'/>"
    return f"<div class='procgen-nb' style='display:flex;gap:1em;align-items:flex-start'>{img}{info}</div>"


def png_uri(data: bytes) -> str:
    """Returns PNG bytes as a ``data:`` URI an ``<img>`` shows inline."""
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def tracks_png(xy: Any, valid: Any, num_envs: int) -> str:
    """Returns a ``data:`` URI of a PNG of the first ``MAX_ENVS`` envs' centerlines.

    Args:
        xy: ``[E * N]`` vec2 centerlines (a ``wp.array`` or NumPy). valid: ``[E]`` flags.
        num_envs: E.
    """
    from .plot import figure_png, new_figure, plot_tracks

    fig = new_figure(PICTURE_INCHES, PICTURE_INCHES, dpi=80)
    ax = fig.add_axes((0, 0, 1, 1))
    plot_tracks(xy, valid, ax=ax, num_envs=num_envs, max_envs=MAX_ENVS, labels=False)
    ax.set_title("")
    ax.axis("off")
    return png_uri(figure_png(fig))
