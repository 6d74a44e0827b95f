"""The registry-wide param explorer of the 0.1 plugin interface.

``param_explorer()`` is one notebook view of every generator registered in
``track_gen.plugin.registry``, the built-ins and the plugins installed through the
``procgen_nb.track_gen`` entry points alike: a picker, the picked generator's default
``Params`` as a table, and ``procgen_nb.ui.explore`` of it (its controls beside a live
view). Like the 0.1 plugin interface's registry-wide tools it builds a plain
``TrackGenConfig`` for every generator (default Params), so a generator that needs a config
subclass falls back to its defaults here.

``write_html(path)`` writes the same overview as one static HTML page (outside a notebook;
``procgen-nb explore`` calls it): for each generator its default Params table and a PNG of
a few of its tracks drawn by matplotlib, inlined.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Sequence
from typing import Any

from ..errors import GeneratorError, ParamsError
from ..params import Params


def generator_names() -> list[str]:
    """Returns the sorted names of every registered track generator (entry points included)."""
    from ..track_gen.plugin import registry

    return registry.available("generator")


def params_class(name: str) -> type[Params] | None:
    """Returns the Params class of the registered generator ``name`` (None without one).

    Raises:
        GeneratorError: an unknown name (the message lists the registered ones).
    """
    from ..track_gen._spec_stage import as_stage
    from ..track_gen.plugin import registry

    return as_stage(registry.get("generator", name)).Params


def default_params(name: str) -> Params | None:
    """Returns the default ``Params`` instance of the registered generator ``name``.

    Raises:
        GeneratorError: an unknown name.
    """
    pcls = params_class(name)
    return None if pcls is None else pcls.resolve(None)


def defaults_rows(name: str) -> list[dict[str, Any]]:
    """Returns one row per Params field of ``name``: field, default, bounds, unit, dynamic, doc."""
    pcls = params_class(name)
    if pcls is None:
        return []
    rows = []
    for f in pcls.describe()["fields"]:
        rows.append({k: f[k] for k in ("name", "default", "bounds", "unit", "dynamic", "doc")})
    return rows


def defaults_html(name: str) -> str:
    """Returns the default Params of ``name`` as an HTML table ("no Params" without any)."""
    rows = defaults_rows(name)
    if not rows:
        return f"<p><code>{html.escape(name)}</code> has no Params class.</p>"
    head = "".join(f"<th>{h}</th>" for h in ("field", "default", "bounds", "dynamic", "doc"))
    body = []
    for r in rows:
        bounds = "" if r["bounds"] is None else f"[{r['bounds'][0]}, {r['bounds'][1]}]"
        unit = f" {r['unit']}" if r["unit"] else ""
        cells = (
            r["name"],
            f"{r['default']!r}{unit}",
            bounds,
            "yes" if r["dynamic"] else "",
            r["doc"],
        )
        body.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    return (
        f'<table class="procgen-defaults"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def tracks_png(
    name: str, *, num_envs: int = 6, num_points: int = 128, seed: int = 0, device: str | None = None
) -> bytes:
    """Returns a PNG (matplotlib) of ``num_envs`` tracks of ``name`` with default Params."""
    from ..plot import figure_png, new_figure, plot_tracks
    from ..track_gen import TrackGenConfig, TrackGenerator

    cfg = TrackGenConfig(
        generator=name, num_envs=num_envs, num_points=num_points, seed=seed, device=device
    )
    res = TrackGenerator(cfg).generate()
    fig = new_figure(width=6.0, height=6.0 * 2 / 3, dpi=80)
    ax = fig.add_subplot(1, 1, 1)
    plot_tracks(res.xy, res.valid, ax=ax, num_envs=num_envs, columns=min(num_envs, 3))
    ax.set_title(f"{name}: {res.num_valid()}/{num_envs} valid (default Params, seed {seed})")
    return figure_png(fig)


def write_html(
    path: str | os.PathLike[str],
    *,
    generators: Sequence[str] | None = None,
    num_envs: int = 6,
    num_points: int = 128,
    seed: int = 0,
    device: str | None = None,
) -> dict[str, str]:
    """Writes one static HTML page of every registered generator (or ``generators``): its
    default Params table and a PNG of ``num_envs`` of its tracks.

    Returns:
        ``{name: "ok" | "<error>"}``: a generator that fails to build is listed on the page
        with its error instead of a picture.

    Raises:
        GeneratorError: a name in ``generators`` that is not registered.
        ParamsError: a ``path`` whose folder does not exist.
    """
    folder = os.path.dirname(os.path.abspath(os.fspath(path)))
    if not os.path.isdir(folder):
        raise ParamsError(f"write_html path: expected a file in an existing folder, got {path!r}")
    names = generator_names()
    if generators is not None:
        unknown = [n for n in generators if n not in names]
        if unknown:
            raise GeneratorError(
                f"write_html generators: expected names among {names}, got {unknown}"
            )
        names = list(generators)
    status: dict[str, str] = {}
    sections = []
    for name in names:
        try:
            png = tracks_png(
                name, num_envs=num_envs, num_points=num_points, seed=seed, device=device
            )
            pic = f'<img alt="{html.escape(name)} tracks" src="data:image/png;base64,'
            pic += base64.b64encode(png).decode() + '">'
            status[name] = "ok"
        except Exception as exc:  # noqa: BLE001  (reported on the page, per generator)
            status[name] = f"{type(exc).__name__}: {exc}"
            pic = f'<p class="error">{html.escape(status[name])}</p>'
        sections.append(
            f'<section id="{html.escape(name)}"><h2>{html.escape(name)}</h2>'
            f"{defaults_html(name)}{pic}</section>"
        )
    index = " | ".join(f'<a href="#{html.escape(n)}">{html.escape(n)}</a>' for n in names)
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>procgen_nb generators</title>'
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}.error{color:#b00}"
        "</style></head><body><h1>Registered track generators</h1>"
        f"<p>{len(names)} generators, default Params: {index}</p>{''.join(sections)}</body></html>"
    )
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return status


def _widgets() -> Any:
    import ipywidgets

    return ipywidgets


class ParamExplorer:
    """A picker of every registered generator, its default Params and its ``explore`` view.

    Build it with ``param_explorer()``. ``widget`` is the ipywidgets box shown in a
    notebook (the object displays as it).

    Attributes:
        names: the generators listed. picker: the ``Dropdown``. defaults: the ``HTML`` table
        of the picked generator's default Params. view: its ``procgen_nb.ui.ExploreView``.
    """

    def __init__(self, generator: str | None = None, **options: Any):
        w = _widgets()
        self.names = generator_names()
        if not self.names:
            raise GeneratorError("param_explorer: expected a registered generator, got none")
        if generator is not None and generator not in self.names:
            raise GeneratorError(
                f"param_explorer generator: expected one of {self.names}, got {generator!r}"
            )
        self.options = options
        self.picker = w.Dropdown(
            options=self.names, value=generator or self.names[0], description="generator"
        )
        self.defaults = w.HTML("")
        self.view: Any = None
        self._view_box = w.Box([])
        self.widget = w.VBox([self.picker, self.defaults, self._view_box])
        self.picker.observe(self._picked, names="value")
        self.pick(self.picker.value)

    @property
    def name(self) -> str:
        """The picked generator's name."""
        return self.picker.value

    def pick(self, name: str) -> Any:
        """Shows ``name``: its default Params and a new ``explore`` view; returns the view."""
        from ..ui import explore

        if self.picker.value != name:
            self.picker.value = name  # observes back into pick
            return self.view
        if self.view is not None:
            self.view.close()
        self.defaults.value = defaults_html(name)
        self.view = explore(name, **self.options)
        self._view_box.children = (self.view,)
        return self.view

    def _picked(self, change: dict[str, Any]) -> None:
        self.pick(change["new"])

    def close(self) -> None:
        """Stops the view's cooks and closes the widgets."""
        if self.view is not None:
            self.view.close()
        self.widget.close()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def param_explorer(generator: str | None = None, **options: Any) -> ParamExplorer:
    """Returns the registry-wide param explorer (see the module docstring).

    Args:
        generator: the generator picked first (the first name, sorted, when None).
        **options: passed to ``procgen_nb.ui.explore`` (``num_envs``, ``num_points``,
            ``seed``).

    Raises:
        GeneratorError: ``generator`` is not registered.
    """
    return ParamExplorer(generator, **options)


__all__ = [
    "ParamExplorer",
    "default_params",
    "defaults_html",
    "defaults_rows",
    "generator_names",
    "param_explorer",
    "params_class",
    "tracks_png",
    "write_html",
]
