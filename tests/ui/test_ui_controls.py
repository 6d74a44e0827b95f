"""params_form picks the control each field's type, bounds and choices call for."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb.params import Field, Params, params_class
from procgen_nb.ui import control_class, params_form


class Knobs(Params):
    lobes: int = Field(5, bounds=(3, 12), doc="number of lobes")
    jitter: float = Field(0.2, bounds=(0.0, 1.0), soft=(0.0, 0.5), doc="radius jitter", unit="m")
    scale: float = Field(1.0, doc="overall scale")
    count: int = Field(4, bounds=(0, None), doc="one-sided bound")
    mode: str = Field("a", choices=["a", "b", "c"], doc="three choices")
    kind: str = Field("x", choices=["x", "y", "z", "w"], doc="four choices")
    closed: bool = Field(True, doc="a flag")
    center: tuple[float, float] = Field((0.0, 0.5), bounds=(-1.0, 1.0), doc="a vec2", unit="m")
    size: tuple[int, int, int] = Field((1, 2, 3), doc="an unbounded int vec3")
    seed: int = Field(3, bounds=(0, 1000), doc="seed")
    epoch: int = Field(0, bounds=(0, 100), doc="epoch")
    label: str = Field("hi", doc="free text")


EXPECTED = {
    "lobes": widgets.IntSlider,
    "jitter": widgets.FloatSlider,
    "scale": widgets.FloatText,
    "count": widgets.IntText,
    "mode": widgets.ToggleButtons,
    "kind": widgets.Dropdown,
    "closed": widgets.Checkbox,
    "center": widgets.FloatSlider,
    "size": widgets.IntText,
    "seed": widgets.IntText,
    "epoch": widgets.IntText,
    "label": widgets.Text,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_control_per_field_kind(name):
    form = params_form(Knobs)
    lanes = Knobs.fields()[name].lanes
    ws = form.controls[name].widgets
    assert len(ws) == lanes
    for w in ws:
        assert type(w) is EXPECTED[name]


def test_slider_spans_soft_bounds_and_starts_at_the_value():
    form = params_form(Knobs(jitter=0.3))
    s = form.widget("jitter")
    assert (s.min, s.max, s.value) == (0.0, 0.5, 0.3)
    assert s.step == pytest.approx(0.005)
    lobes = form.widget("lobes")
    assert (lobes.min, lobes.max, lobes.step) == (3, 12, 1)


def test_value_outside_soft_bounds_widens_the_slider():
    form = params_form(Knobs(jitter=0.9))
    s = form.widget("jitter")
    assert s.value == 0.9 and s.max == 0.9
    assert form.value.jitter == 0.9


def test_tooltip_and_unit_in_label():
    form = params_form(Knobs)
    s = form.widget("jitter")
    assert s.tooltip == "radius jitter"
    assert s.description == "jitter [m]"
    assert form.widget("lobes").description == "lobes"
    head = form.controls["center"].box.children[0]
    assert head.value == "center [m]"
    assert [w.description for w in form.controls["center"].widgets] == ["x", "y"]


def test_choices_options_are_the_values():
    form = params_form(Knobs)
    assert [v for _, v in form.widget("kind").options] == ["x", "y", "z", "w"]
    assert [v for _, v in form.widget("mode").options] == ["a", "b", "c"]


def test_refuses_what_is_not_params():
    with pytest.raises(ValueError, match="expected a Params class or instance"):
        params_form({"a": 1})


_scalar_fields = st.one_of(
    st.builds(
        lambda lo, span, d: ("int", Field(lo + d % (span + 1), bounds=(lo, lo + span))),
        st.integers(-50, 50),
        st.integers(1, 100),
        st.integers(0, 1000),
    ),
    st.builds(
        lambda lo, span, t: ("float", Field(lo + t * span, bounds=(lo, lo + span))),
        st.floats(-10, 10),
        st.floats(0.01, 10),
        st.floats(0, 1),
    ),
    st.builds(lambda v: ("floatbox", Field(v)), st.floats(-1e6, 1e6)),
    st.builds(lambda v: ("intbox", Field(v)), st.integers(-(10**6), 10**6)),
    st.builds(lambda v: ("bool", Field(v)), st.booleans()),
    st.builds(
        lambda n, k: ("choice", Field(k % n, choices=list(range(n)))),
        st.integers(1, 8),
        st.integers(0, 100),
    ),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_scalar_fields, min_size=1, max_size=5))
def test_any_declaration_gets_a_control_that_round_trips(specs):
    fields = {f"f{i}": f for i, (_, f) in enumerate(specs)}
    cls = params_class("Gen", fields, "gen")
    form = params_form(cls)
    for i, (kind, f) in enumerate(specs):
        w = form.widget(f"f{i}")
        want = {
            "int": widgets.IntSlider,
            "float": widgets.FloatSlider,
            "floatbox": widgets.FloatText,
            "intbox": widgets.IntText,
            "bool": widgets.Checkbox,
            "choice": widgets.ToggleButtons if len(f.choices or ()) <= 3 else widgets.Dropdown,
        }[kind]
        assert type(w) is want
        assert control_class(cls.fields()[f"f{i}"]) is want
        assert w.value == cls.fields()[f"f{i}"].default
    assert form.value == cls()
