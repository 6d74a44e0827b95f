"""params_form picks the control each field's type, bounds and choices call for."""

from __future__ import annotations

import ipywidgets as widgets
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb.params import Field, Params, params_class
from procgen_nb.ui import control_class, params_form
from procgen_nb.ui._controls import IntBox, parse_int


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
    "count": IntBox,
    "mode": widgets.ToggleButtons,
    "kind": widgets.Dropdown,
    "closed": widgets.Checkbox,
    "center": widgets.FloatSlider,
    "size": IntBox,
    "seed": IntBox,
    "epoch": IntBox,
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


def test_slider_starts_on_the_soft_bounds_at_the_value():
    """The slider starts on the field's soft range (0..0.5 of the bounds 0..1), as
    HoloViz param does; the step comes from the soft range (about 200 steps over it)."""
    form = params_form(Knobs(jitter=0.3))
    s = form.widget("jitter")
    assert (s.min, s.max, s.value) == (0.0, 0.5, 0.3)
    assert s.step <= 0.5 / 200
    # exact: the value lies on the slider's grid, and the readout writes it as it is
    k = (s.value - s.min) / s.step
    assert abs(k - round(k)) < 1e-9 and (s.max - s.min) / s.step >= 100
    assert format(0.3, s.readout_format.replace("f", "f")) == "0.300"
    lobes = form.widget("lobes")  # no soft bounds: the bounds
    assert (lobes.min, lobes.max, lobes.step) == (3, 12, 1)


def test_value_outside_soft_bounds_widens_the_slider_to_the_bounds():
    """A value past the soft range (from the start, or set from Python) widens the
    slider to the bounds; past an open end, to the value."""
    form = params_form(Knobs(jitter=0.9))
    s = form.widget("jitter")
    assert (s.min, s.max, s.value) == (0.0, 1.0, 0.9) and form.value.jitter == 0.9
    form = params_form(Knobs(jitter=0.2))
    s = form.widget("jitter")
    assert (s.min, s.max) == (0.0, 0.5)
    form.value = {"jitter": 0.7}
    assert (s.min, s.max, s.value) == (0.0, 1.0, 0.7)
    k = (s.value - s.min) / s.step
    assert abs(k - round(k)) < 1e-9
    cls = params_class("G", {"reach": Field(2.0, bounds=(0.0, None), soft=(0.0, 5.0))}, "g")
    form = params_form(cls(reach=40.0))
    s = form.widget("reach")
    assert (s.min, s.max, s.value) == (0.0, 40.0, 40.0) and form.value.reach == 40.0
    form.value = {"reach": 70.0}
    assert (s.max, s.value) == (70.0, 70.0)


def _from_browser(w, value):
    """Sets ``value`` as a message from the browser does (under the property lock)."""
    with w._lock_property(value=value):
        w.value = value


def test_a_soft_end_sent_by_the_browser_widens_the_slider():
    """A value typed past the soft end in the readout arrives clamped to it (the browser
    clamps to the slider's range): the slider widens to the bounds, so the value typed
    again lands; the value sent is taken as it is."""
    cls = params_class("N", {"num_envs": Field(16, bounds=(1, 65536), soft=(1, 64))}, "n")
    form = params_form(cls)
    s = form.widget("num_envs")
    assert (s.min, s.max, s.value) == (1, 64, 16)
    _from_browser(s, 30)  # inside: the range stays
    assert (s.min, s.max) == (1, 64) and form.value.num_envs == 30
    _from_browser(s, 64)  # "1000" typed in the readout arrives as 64
    assert form.value.num_envs == 64 and (s.min, s.max, s.value) == (1, 65536, 64)
    _from_browser(s, 1000)  # typed again: now in range
    assert form.value.num_envs == 1000 and s.value == 1000
    # the low end of a float slider; a soft end that is a bound widens nothing
    cls = params_class("F", {"gain": Field(0.5, bounds=(0.0, 1.0), soft=(0.2, 0.8))}, "f")
    form = params_form(cls)
    s = form.widget("gain")
    assert (s.min, s.max) == (0.2, 0.8)
    _from_browser(s, 0.2)
    assert form.value.gain == 0.2 and (s.min, s.max, s.value) == (0.0, 1.0, 0.2)
    form = params_form(Knobs)
    s = form.widget("jitter")
    _from_browser(s, 0.0)  # the soft end 0 is the bound: nothing to widen to
    assert form.value.jitter == 0.0 and (s.min, s.max) == (0.0, 0.5)


def test_tooltip_and_unit_in_label():
    form = params_form(Knobs)
    s = form.widget("jitter")
    # the full label first (a long one is cut where it is shown), then doc and range
    assert s.tooltip == "jitter [m] — radius jitter — accepted: [0.0, 1.0]"
    assert s.description == "jitter [m]"
    assert form.widget("lobes").description == "lobes"
    head = form.controls["center"].box.children[0].children[0]
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
            "intbox": IntBox,
            "bool": widgets.Checkbox,
            "choice": widgets.ToggleButtons if len(f.choices or ()) <= 3 else widgets.Dropdown,
        }[kind]
        assert type(w) is want
        assert control_class(cls.fields()[f"f{i}"]) is want
        shown = parse_int(w.value) if isinstance(w, IntBox) else w.value
        assert shown == cls.fields()[f"f{i}"].default
    assert form.value == cls()


def _sections(form):
    """(title, open) of the form's collapsible sections, outermost first."""
    out = []
    for c in form.children:
        if isinstance(c, widgets.Accordion):
            out.append((c.titles[0], c.selected_index == 0))
    return out


@pytest.mark.parametrize(
    ("field", "value"),
    [
        (Field(0.2, bounds=(0.01, 0.5)), 0.2),  # the issue: 0.2 shown as 0.1981
        (Field(0.9, bounds=(0.0, 2.0), soft=(0.05, 0.95)), 0.9),  # 0.9 shown as 0.9025
        (Field(1.0, bounds=(0.0, 2.0), soft=(0.2, 1.2)), 1.0),
        (Field(0.5, bounds=(0.0, 1.0), step=0.03), 0.5),  # a declared step off the value
        (Field(0.1, bounds=(0.0, 1.0)), 0.123456),  # a set value with more decimals
    ],
)
def test_a_float_slider_holds_its_value_on_its_grid(field, value):
    """Reference: a slider (like noUiSlider) shows min + k * step; the value must be one."""
    cls = params_class("G", {"x": field}, "g")
    form = params_form(cls(x=value))
    w = form.widget("x")
    k = round((value - w.min) / w.step)
    assert abs(w.min + k * w.step - value) < w.step * 1e-6
    assert float(format(value, w.readout_format)) == value
    lo, hi = field.soft or field.bounds
    d = field.default
    for v in (lo, hi, d):  # the soft ends and the default lie on the grid too
        assert abs(round((v - w.min) / w.step) * w.step + w.min - v) < w.step * 1e-6


def test_the_browser_showing_a_value_is_not_an_edit():
    """A slider that sends back its value on its grid (0.2 as 0.20000000000000004, or a
    value rounded to the step) changes nothing and reports nothing; a real move does."""
    cls = params_class("G", {"x": Field(0.2, bounds=(0.01, 0.5))}, "g")
    form = params_form(cls)
    seen = []
    form.observe(lambda c: seen.append(c["new"].x), names="value")
    w = form.widget("x")
    w.value = 0.1 + 0.1 + 1e-12
    w.value = 0.20000000000000004
    assert seen == [] and form.value.x == 0.2
    w.value = 0.2 + w.step  # one step: an edit, rounded to the slider's decimals
    assert seen == [round(0.2 + w.step, 6)] and repr(form.value.x) in ("0.201", "0.21")


def test_labels_are_words_and_sections_fold():
    cls = params_class(
        "G",
        {
            "keep.min_radius": Field(0.2, bounds=(0.0, 1.0), unit="m", doc="smallest radius"),
            "keep.inside.SHAPE": Field("disk", choices=["disk", "ring"]),
            "src.n": Field(3, bounds=(0, 10)),
        },
        "g",
    )
    form = params_form(cls, group=True)
    assert form.widget("keep.min_radius").description == "min radius [m]"
    assert form.widget("keep.inside.SHAPE").description == "inside · SHAPE"
    assert _sections(form) == [("keep", True), ("src", True)]
    form = params_form(cls, group=True, kernel={"keep.inside.SHAPE"})
    keep = form.children[0].children[0]
    inner = [c for c in keep.children if isinstance(c, widgets.Accordion)]
    assert [(a.titles[0].split(" (")[0], a.selected_index) for a in inner] == [
        ("kernel parameters", None)
    ]


def test_a_refused_value_is_explained_under_its_control():
    form = params_form(Knobs)
    form.widget("count").value = -2
    msg = form.controls["count"].message.value
    assert "count: -2 is not accepted; accepted: " in msg and form.value.count == 4
    form.widget("count").value = 5
    assert form.controls["count"].message.value == "" and form.value.count == 5


def _from_browser(w, value):
    """What ipywidgets does with a value the browser sends (the property lock is held)."""
    with w._lock_property(value=value):
        w.value = value


def test_a_late_echo_of_an_earlier_value_is_not_an_edit():
    """The issue's 03 case: the kernel shows 0.3 then 1.0; the browser, behind, sends 0.3
    back. The value in effect stays 1.0, nothing is reported, the widget shows 1.0 again;
    a value the kernel never showed is an edit. Only a slider that reports while dragged
    sends back what it is shown (one that reports on release sends only a person's
    edits, and each is one: the next test)."""
    cls = params_class("G", {"x": Field(0.6, bounds=(0.2, 1.2))}, "g")
    form = params_form(cls, continuous_update=True)
    seen = []
    form.observe(lambda c: seen.append(c["new"].x), names="value")
    w = form.widget("x")
    w.value = 0.3
    w.value = 1.0
    assert seen == [0.3, 1.0]
    _from_browser(w, 0.3)
    assert seen == [0.3, 1.0] and form.value.x == 1.0 and w.value == 1.0
    _from_browser(w, 0.7)
    assert seen == [0.3, 1.0, 0.7] and form.value.x == 0.7
    assert form.browser_values == 2


def test_a_person_stepping_back_and_forth_is_never_an_echo():
    """Browser edits right, left, right, left (each one step): every one is an edit, even
    when the browser sends a float a hair off the grid that the kernel shows again."""
    cls = params_class("G", {"x": Field(0.35, bounds=(0.0, 1.0))}, "g")
    form = params_form(cls)
    seen = []
    form.observe(lambda c: seen.append(c["new"].x), names="value")
    w = form.widget("x")
    sent = [0.35100000000000003, 0.35, 0.35100000000000003, 0.35, 0.351, 0.35]
    for v in sent:
        _from_browser(w, v)
    assert seen == [0.351, 0.35, 0.351, 0.35, 0.351, 0.35]
