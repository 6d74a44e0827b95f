"""How the package's objects show themselves: one-line reprs and notebook HTML.

Each class keeps a two-line ``__repr__`` / ``_repr_html_`` pair that hands its facts to
the helpers here, so the look lives in one place:

- ``line(kind, *facts, **named)``: ``Kind(fact, fact, name=value)``, one line;
- ``table(title, rows, picture=None)``: a small HTML table of (key, value) rows, a title
  naming the object, and an optional inline PNG (a ``data:`` URI) beside it;
- ``tracks_png(xy, valid, num_envs)``: a small grid of centerlines drawn by matplotlib
  on the Agg canvas (it reads ``xy`` and ``valid`` back: showing an object in a
  notebook is the one place a picture costs a readback).

The module imports nothing of the package (it sits in the base layer, below every class
that shows itself through it).

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
#: a valid and an invalid env's centerline (``plot.VALID_COLOR``, ``plot.INVALID_COLOR``)
VALID_COLOR = "#2a9d4b"
INVALID_COLOR = "#d1495b"


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

    Each env is centred in its own cell of a square grid, every env at one scale, green
    when valid and red when not (the colours of ``plot.plot_tracks``, which this module
    cannot import: it sits below the drawing layer, with the classes that use it).

    Args:
        xy: ``[E * N]`` vec2 centerlines (a ``wp.array`` or NumPy). valid: ``[E]`` flags.
        num_envs: E.
    """
    import io
    import math

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    pts = np.asarray(xy.numpy() if hasattr(xy, "numpy") else xy, dtype=np.float64)
    pts = pts.reshape(num_envs, -1, 2)[:MAX_ENVS]
    ok = np.asarray(valid.numpy() if hasattr(valid, "numpy") else valid).reshape(-1)
    cols = max(1, math.ceil(math.sqrt(len(pts))))
    rows = max(1, math.ceil(len(pts) / cols))
    finite = [p[np.all(np.isfinite(p), axis=-1)] for p in pts]
    lo = [p.min(axis=0) if len(p) else np.zeros(2) for p in finite]
    hi = [p.max(axis=0) if len(p) else np.zeros(2) for p in finite]
    span = max([float((h - low).max()) for h, low in zip(hi, lo)] + [1e-9])
    segs, colors = [], []
    for e, p in enumerate(finite):
        if len(p) < 2:
            continue
        centre = (lo[e] + hi[e]) / 2
        cell = np.array([e % cols + 0.5, -(e // cols + 0.5)])
        segs.append((np.vstack([p, p[:1]]) - centre) * (0.85 / span) + cell)
        colors.append(VALID_COLOR if ok[e] else INVALID_COLOR)
    fig = Figure(figsize=(PICTURE_INCHES, PICTURE_INCHES), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.add_collection(LineCollection(segs, colors=colors, linewidths=1.0))
    ax.set_xlim(0, max(cols, rows))
    ax.set_ylim(-max(cols, rows), 0)
    ax.set_aspect("equal")
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return png_uri(buf.getvalue())
