"""``procgen_nb.viz.param_explorer``: the registry-wide explorer seed 004 names.

Seed: "Registry-wide tools (``benchmarks/compare_generators.py``, ``viz/param_explorer.py``)
build a plain ``TrackGenConfig`` for every registered generator, so a generator that needs
a config subclass must still fall back to defaults there; a Params class needs nothing
more." References: the built-in names listed by hand, a plugin installed here through an
entry point (its name and Params defaults known by construction), the HTML parsed back
and its PNGs decoded by their header.
"""

from __future__ import annotations

import base64
import struct
import sys
import textwrap
from html.parser import HTMLParser

import pytest

BUILTINS = {"bezier", "checkpoint", "hull", "polar", "repulsive", "voronoi"}

PLUGIN = textwrap.dedent(
    """
    import warp as wp
    from procgen_nb.track_gen.plugin import Field, GeneratorSpec, Params


    class VizRingParams(Params):
        owner = "vizacme.ring"
        radius: float = Field(0.7, bounds=(0.1, 2.0), doc="ring radius")
        lobes: int = Field(3, bounds=(0, 8), doc="bumps on the ring")


    @wp.kernel
    def _ring_k(raw: int, r: float, xy: wp.array(dtype=wp.vec2), valid: wp.array(dtype=wp.int32)):
        tid = wp.tid()
        th = 6.283185307179586 * float(tid % raw) / float(raw)
        xy[tid] = wp.vec2(r * wp.cos(th), r * wp.sin(th))
        valid[tid / raw] = 1


    def _generate(seeds, config, out, valid, scratch, ctx=None):
        n = config.num_points
        ctx.launch(_ring_k, config.num_envs * n, [n, config.generator_params.radius, out, valid])


    def _broken_alloc(config):
        raise RuntimeError("vizacme.broken cannot allocate")


    RING = GeneratorSpec("vizacme.ring", lambda c: None, _generate, accepts_ctx=True,
                         params=VizRingParams)
    BROKEN = GeneratorSpec("vizacme.broken", _broken_alloc, _generate, accepts_ctx=True)
    """
)


@pytest.fixture
def plugin(tmp_path):
    """A distribution ``vizacme`` with two generators as entry points, on sys.path."""
    from procgen_nb.track_gen.plugin import registry

    (tmp_path / "vizacme_tracks.py").write_text(PLUGIN)
    info = tmp_path / "vizacme-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vizacme\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[procgen_nb.track_gen]\nring = vizacme_tracks:RING\nbroken = vizacme_tracks:BROKEN\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield {"vizacme.ring": {"radius": 0.7, "lobes": 3}, "vizacme.broken": None}
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("vizacme.ring", "vizacme.broken"):
            registry.remove("generator", name)
        registry._loaded_eps = {k for k in registry._loaded_eps if "vizacme" not in k[1]}
        sys.modules.pop("vizacme_tracks", None)


class _Page(HTMLParser):
    """Sections by id: the table cells and the image sources of each."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self._cur = None
        self._cell = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self._cur = self.sections.setdefault(a["id"], {"cells": [], "imgs": [], "text": ""})
        elif tag == "td":
            self._cell = True
            self._cur["cells"].append("")
        elif tag == "img" and self._cur is not None:
            self._cur["imgs"].append(a["src"])

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = False

    def handle_data(self, data):
        if self._cur is not None:
            self._cur["text"] += data
            if self._cell:
                self._cur["cells"][-1] += data


def _png(src: str) -> tuple[int, int]:
    data = base64.b64decode(src.split("base64,", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_names_list_every_registered_generator_entry_points_included(plugin):
    """Seed: a registry-wide tool covers "every registered generator" (an installed plugin
    is registered through the entry-point group)."""
    from procgen_nb.track_gen.plugin import registry
    from procgen_nb.viz import default_params, generator_names

    names = generator_names()
    assert BUILTINS | set(plugin) <= set(names)
    assert set(names) == set(registry._specs["generator"])  # and any other test's plugins
    assert names == sorted(names)
    assert default_params("vizacme.ring").to_dict() == plugin["vizacme.ring"]
    assert default_params("vizacme.broken") is None


def test_explorer_picks_each_generator_with_its_default_params(plugin):
    """Seed: the explorer lists each generator with its default Params (a plain
    ``TrackGenConfig``), built on ``procgen_nb.ui``'s ``explore``."""
    import procgen_nb.viz
    from procgen_nb.ui import ExploreView
    from procgen_nb.viz.param_explorer import defaults_rows

    ex = procgen_nb.viz.param_explorer(num_envs=4, num_points=64)
    try:
        names = list(ex.picker.options)
        assert names == sorted(names) and BUILTINS | set(plugin) <= set(names)
        assert ex.name == names[0] and isinstance(ex.view, ExploreView)
        view = ex.pick("vizacme.ring")
        assert ex.picker.value == "vizacme.ring" and ex.view is view
        assert view.value.to_dict()["radius"] == 0.7  # the default Params in the controls
        frame = view.wait(120)
        assert frame is not None and not view.error, view.error
        rows = {r["name"]: r["default"] for r in defaults_rows("vizacme.ring")}
        assert rows == plugin["vizacme.ring"]
        for field, value in plugin["vizacme.ring"].items():
            assert f"<td>{field}</td><td>{value!r}</td>" in ex.defaults.value
        ex.picker.value = "polar"  # the picker itself switches the view
        assert ex.view is not view and "lobes" in ex.defaults.value
    finally:
        ex.close()


def test_write_html_draws_every_generator_and_lists_a_failure(plugin, tmp_path):
    """``procgen-nb explore``'s page: every generator's default Params and a PNG of its
    tracks; a generator that cannot build is listed with its error."""
    from procgen_nb.viz import write_html

    out = tmp_path / "gens.html"
    status = write_html(out, num_envs=3, num_points=32)
    assert BUILTINS | set(plugin) <= set(status)
    assert status["vizacme.broken"].startswith("RuntimeError: vizacme.broken cannot allocate")
    assert all(status[k] == "ok" for k in BUILTINS | {"vizacme.ring"})
    page = _Page()
    page.feed(out.read_text())
    assert set(page.sections) == set(status)
    for name, sec in page.sections.items():
        if status[name] != "ok":
            assert not sec["imgs"] and status[name].split(":")[0] in sec["text"]
        if name == "vizacme.broken":
            assert not sec["imgs"] and "cannot allocate" in sec["text"]
            assert "has no Params class" in sec["text"]
            continue
        if status[name] != "ok":  # another test's plugin
            continue
        (src,) = sec["imgs"]
        w, h = _png(src)
        assert w > 100 and h > 100
    ring = page.sections["vizacme.ring"]
    assert ring["cells"][:2] == ["radius", "0.7"]
    with pytest.raises(Exception, match=r"write_html generators: expected names among"):
        write_html(out, generators=["nope"])
