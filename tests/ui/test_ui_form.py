"""ParamsForm: a validated ``value``, observe, refusals shown in the form, graph forms."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb import Graph
from procgen_nb.errors import ParamsError
from procgen_nb.graph import node
from procgen_nb.params import Field, Params
from procgen_nb.ui import graph_form, params_form
from procgen_nb.ui._controls import IntBox, parse_int


class Knobs(Params):
    lobes: int = Field(5, bounds=(3, 12), doc="number of lobes")
    jitter: float = Field(0.2, bounds=(0.0, 1.0), doc="radius jitter")
    count: int = Field(4, bounds=(0, None), doc="one-sided bound")
    width: float = Field(2.0, bounds=(0.5, None), doc="one-sided float bound", unit="m")
    center: tuple[float, float] = Field((0.0, 0.5), bounds=(-1.0, None), doc="a vec2")
    closed: bool = Field(True)
    seed: int = Field(3, bounds=(0, 1000))


def test_value_is_a_validated_instance_and_observe_fires():
    form = params_form(Knobs)
    seen = []
    form.observe(lambda ch: seen.append((ch["old"], ch["new"])), names="value")
    form.widget("lobes").value = 7
    assert isinstance(form.value, Knobs)
    assert form.value == Knobs(lobes=7)
    assert seen == [(Knobs(), Knobs(lobes=7))]
    form.widget("center", 1).value = -0.25
    assert form.value.center == (0.0, -0.25)
    form.widget("closed").value = False
    assert form.value == Knobs(lobes=7, center=(0.0, -0.25), closed=False)
    assert len(seen) == 3
    assert form.error == ""


def test_refused_value_shows_in_form_and_keeps_last_valid():
    form = params_form(Knobs(count=9))
    seen = []
    form.observe(lambda ch: seen.append(ch["new"]), names="value")
    box = form.widget("count")
    box.value = -2
    assert form.value.count == 9
    # the text stays as typed, the message shows once: under the control, not on the
    # form's error line as well
    assert box.value == "-2"
    assert form.error == "Knobs.count: expected a value >= 0, got -2"
    assert form._error_line.value == ""
    assert form.controls["count"].text == "count: -2 is not accepted; accepted: a value >= 0"
    assert seen == []
    for typed in ("3.7", "1e3", "12x", ""):  # never rewritten (IntText made 3.7 into 37)
        box.value = typed
        assert box.value == typed and form.value.count == 9
        text = form.controls["count"].text
        assert text == f"count: {typed!r} is not accepted; accepted: an integer in [0, inf]"
        assert form.message("count").count("not accepted") == 1
    box.value = 11
    assert form.value.count == 11
    assert form.error == "" and form._error_line.value == ""


def test_refused_lane_and_float_box():
    form = params_form(Knobs)
    form.widget("center", 0).value = -3.0
    assert form.value.center == (0.0, 0.5)
    assert form.widget("center", 0).value == 0.0
    assert "Knobs.center" in form.error and "got -3.0" in form.error
    form.widget("width").value = 0.1
    assert form.value.width == 2.0 and form.widget("width").value == 2.0
    assert "Knobs.width: expected a value >= 0.5, got 0.1" == form.error


def test_assigning_value_updates_controls():
    form = params_form(Knobs)
    form.value = Knobs(lobes=9, jitter=0.75, center=(0.25, 0.5))
    assert form.widget("lobes").value == 9
    assert form.widget("jitter").value == 0.75
    assert form.widget("center", 0).value == 0.25
    form.value = {"seed": 12}
    assert form.value == Knobs(lobes=9, jitter=0.75, center=(0.25, 0.5), seed=12)
    assert form.widget("seed").value == "12"


def test_assigning_a_refused_value_raises_and_keeps_the_form():
    form = params_form(Knobs)
    with pytest.raises(ParamsError, match="Knobs.lobes: expected a value in"):
        form.value = {"lobes": 40}
    with pytest.raises(ParamsError, match="expected a Knobs or a dict"):
        form.value = 3
    assert form.value == Knobs()


def test_widget_lookup_refuses_unknown():
    form = params_form(Knobs)
    with pytest.raises(ParamsError, match="expected one of"):
        form.widget("nope")
    with pytest.raises(ParamsError, match=r"expected a lane in \[0, 1\], got 2"):
        form.widget("center", 2)


@settings(max_examples=30, deadline=None)
@given(
    lobes=st.integers(-5, 20),
    jitter=st.floats(-0.5, 1.5, allow_nan=False),
    count=st.integers(-5, 20),
)
def test_form_state_matches_params_constructor(lobes, jitter, count):
    """After any edits, the form holds exactly the edits that Params(**...) accepts."""
    form = params_form(Knobs)
    expect = {}
    for name, v in (("count", count), ("lobes", lobes), ("jitter", jitter)):
        # sliders clamp to their range as in the browser; a text box passes the value on
        before = getattr(form.value, name)
        w = form.widget(name)
        w.value = v
        shown = parse_int(w.value) if isinstance(w, IntBox) else w.value
        step = getattr(w, "step", None)
        if isinstance(shown, float) and step and abs(shown - before) < step / 2:
            # within half a step of the value in effect: a slider's echo, not an edit
            w.value = before
            continue
        if isinstance(w, widgets.FloatSlider):  # an edit holds the slider's decimals
            shown = round(shown, int(w.readout_format[1:-1]))
        try:
            Knobs(**{**expect, name: shown})
            expect[name] = shown
        except ParamsError:
            pass
    assert form.value == Knobs(**expect)
    for name in ("count", "lobes", "jitter"):
        w, v = form.widget(name), getattr(form.value, name)
        if isinstance(w, IntBox):  # a refused text stays as typed, else the value's text
            assert w.value == (str(count) if name not in expect and count != 4 else str(v))
        elif isinstance(w, widgets.FloatSlider):  # it shows what was set, within half a step
            assert abs(w.value - v) < w.step / 2
        else:
            assert w.value == v


@node(
    params={
        "n": Field(10, bounds=(1, 100), doc="points"),
        "mode": Field("a", choices=["a", "b"], doc="kernel variant"),
    }
)
def _source(n, mode):
    return {"n": n, "mode": mode}


@node(params={"gain": Field(1.5, doc="a uniform")})
def _scale(src, gain):
    return src["n"] * gain


def _graph():
    g = Graph("tiny")
    g.add("src", _source)
    g.add("scale", _scale, src="src")
    return g


def test_graph_form_groups_by_node_and_cooks_with_its_value():
    g = _graph()
    form = graph_form(g)
    assert list(form.controls) == ["src.n", "src.mode", "scale.gain"]
    assert form.widget("src.n").description == "n"
    heads = [c.titles[0] for c in form.children if isinstance(c, widgets.Accordion)]
    assert heads == ["src", "scale"]
    form.widget("scale.gain").value = 2.0
    form.widget("src.mode").value = "b"
    out = g.cook(params=form.value.to_dict()).outputs
    assert out["scale"] == 20.0 and out["src"]["mode"] == "b"


def test_graph_form_shows_current_values_and_filters_a_node():
    g = _graph()
    g.cook(params={"src.n": 30})
    form = graph_form(g, node="src")
    assert list(form.controls) == ["src.n", "src.mode"]
    assert form.widget("src.n").value == 30
    with pytest.raises(ParamsError, match=r"expected one of \['scale', 'src'\], got 'x'"):
        graph_form(g, node="x")
    with pytest.raises(ParamsError, match="expected a graph with params"):
        graph_form(object())
