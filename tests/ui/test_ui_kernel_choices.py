"""The kernel-level option controls of a graph view offer only the choices that bind."""

from __future__ import annotations

import ipywidgets as widgets

from procgen_nb.demo import build_demo_graph
from procgen_nb.params import Field
from procgen_nb.ui import GraphTarget, explore


def _options(view, key):
    w = view.form.widget(key)
    return (
        [value for _label, value in w.options]
        if isinstance(w.options[0], tuple)
        else list(w.options)
    )


def test_the_type_control_shows_only_the_choices_that_bind():
    """Issue 11, item 3: "a TYPE-like option offers only the choices that can bind to the
    columns given": gather over vec2 points shows vec2 alone (f32, i32, u32, vec3, vec4
    cannot read them); scan over i32 flags shows i32 and f32 (read by value); SEGMENTS
    shows plain (device needs a starts column, none is bound)."""
    v = explore(build_demo_graph(), min_interval=0.0)
    try:
        v.wait(60)
        assert _options(v, "kept.gather.TYPE") == ["vec2"]
        assert _options(v, "offsets.scan.TYPE") == ["i32", "f32"]
        assert _options(v, "offsets.scan.SEGMENTS") == ["plain"]
        assert isinstance(v.form.widget("kept.gather.TYPE"), widgets.ToggleButtons)
        assert v.form.value.to_dict()["kept.gather.TYPE"] == "vec2"
        assert v.browser_values == 0  # shown, nothing sent
    finally:
        v.close()


class _FakeGraph:
    """params() with one option whose choices a cook changes."""

    name = "fake"
    nodes = ["n"]

    def __init__(self):
        self.choices = ["a", "b"]
        self.values = {"n.k.TYPE": "a"}

    def params(self):
        return {"n.k.TYPE": Field("a", choices=list(self.choices))}

    def kernel_params(self):
        return self.params()


def test_a_graph_target_takes_new_choices_of_an_option():
    g = _FakeGraph()
    t = GraphTarget(g)
    assert not t.refresh()
    g.choices = ["a"]  # a cook bound other columns: b no longer binds
    assert t.refresh()
    assert t.params_class.fields()["n.k.TYPE"].choices == ["a"]


class _Cooked:
    outputs: dict = {}
    report = None


class _NarrowingGraph(_FakeGraph):
    """Its first cook binds columns that only choice a can read."""

    def __init__(self):
        super().__init__()
        self.values = {"n.k.TYPE": "b"}

    def cook(self, params=None):
        self.choices, self.values = ["a"], {"n.k.TYPE": "a"}
        return _Cooked()


def test_the_view_drops_a_choice_its_new_form_no_longer_offers():
    v = explore(_NarrowingGraph(), min_interval=0.0)
    try:
        v.wait(30)
        assert v.error == ""
        w = v.form.widget("n.k.TYPE")
        assert [o[1] if isinstance(o, tuple) else o for o in w.options] == ["a"]
        assert v.value.to_dict()["n.k.TYPE"] == "a"
    finally:
        v.close()
