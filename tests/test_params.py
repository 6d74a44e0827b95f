"""Params classes and Fields: types, bounds, soft bounds, choices, vectors, schema, refusals."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb.params import Field, Params, params_class


class Knobs(Params):
    owner = "acme.wobbly"
    lobes: int = Field(5, bounds=(3, 12), doc="number of lobes")
    jitter: float = Field(0.2, bounds=(0.0, 1.0), soft=(0.0, 0.5), dynamic=True, unit="m")
    mode: str = Field("smooth", choices=["smooth", "sharp"])
    offset: tuple[float, float] = (0.0, 1.0)
    closed: bool = True
    note: ClassVar[str] = "not a field"


def test_fields_types_defaults_and_schema():
    f = Knobs.fields()
    assert list(f) == ["lobes", "jitter", "mode", "offset", "closed"]
    assert f["lobes"].type is int and f["jitter"].type is float and f["closed"].type is bool
    assert f["offset"].lanes == 2 and f["offset"].scalar_type is float
    assert f["jitter"].slider_range == (0.0, 0.5) and f["lobes"].slider_range == (3, 12)
    assert Knobs.dynamic_fields() == ["jitter"]
    schema = json.loads(json.dumps(Knobs.describe()))
    assert schema["owner"] == "acme.wobbly"
    jitter = next(x for x in schema["fields"] if x["name"] == "jitter")
    assert jitter == {
        "name": "jitter",
        "type": "float",
        "default": 0.2,
        "bounds": [0.0, 1.0],
        "soft": [0.0, 0.5],
        "choices": None,
        "doc": "",
        "unit": "m",
        "dynamic": True,
    }
    k = Knobs()
    assert (k.lobes, k.mode, k.offset, k.closed) == (5, "smooth", (0.0, 1.0), True)


@pytest.mark.parametrize(
    "values, match",
    [
        ({"lobes": 20}, r"acme.wobbly.lobes: expected a value in \[3, 12\], got 20"),
        ({"lobes": 4.5}, r"acme.wobbly.lobes: expected an integer, got 4.5"),
        ({"jitter": "x"}, r"acme.wobbly.jitter: expected a number, got 'x'"),
        ({"jitter": float("nan")}, r"acme.wobbly.jitter: expected a finite number, got nan"),
        (
            {"mode": "round"},
            r"acme.wobbly.mode: expected one of \['smooth', 'sharp'\], got 'round'",
        ),
        ({"offset": (1.0,)}, r"acme.wobbly.offset: expected 2 numbers, got \(1.0,\)"),
        ({"closed": 2}, r"acme.wobbly.closed: expected a bool, got 2"),
        (
            {"lobez": 3},
            r"acme.wobbly: expected fields among \[.*'lobes'.*\], got unknown \['lobez'\]",
        ),
    ],
)
def test_refusals_name_owner_field_value_and_accepted(values, match):
    with pytest.raises(pg.ParamsError, match=match):
        Knobs(**values)


@pytest.mark.parametrize(
    "values, match",
    [
        ({"lobes": 20}, r"acme.wobbly.lobes: expected a value in \[3, 12\], got 20"),
        ({"lobes": 4.5}, r"acme.wobbly.lobes: expected an integer, got 4.5"),
        ({"mode": "round"}, r"acme.wobbly.mode: expected one of \['smooth', 'sharp'\]"),
        ({"offset": (1.0,)}, r"acme.wobbly.offset: expected 2 numbers, got \(1.0,\)"),
        ({"lobez": 3}, r"acme.wobbly: expected fields among \[.*'lobes'.*\], got unknown"),
    ],
)
def test_check_field_refuses_what_the_constructor_refuses(values, match):
    ((name, value),) = values.items()
    with pytest.raises(pg.ParamsError, match=match):
        Knobs.check_field(name, value)


def test_check_field_converts_as_the_field_holds_it():
    # hand-worked: an int field takes 7.0 as 7, a bool 1 as True, a vector a list
    assert Knobs.check_field("lobes", 7.0) == 7 and type(Knobs.check_field("lobes", 7.0)) is int
    assert Knobs.check_field("closed", 1) is True
    assert Knobs.check_field("offset", [1, 2]) == (1.0, 2.0)
    # the bounds are inclusive at both ends
    assert Knobs.check_field("lobes", 3) == 3 and Knobs.check_field("lobes", 12) == 12
    with pytest.raises(pg.ParamsError, match=r"got 13"):
        Knobs.check_field("lobes", 13)
    with pytest.raises(pg.ParamsError, match=r"got 2$"):
        Knobs.check_field("lobes", 2)


def test_immutable_replace_resolve_and_from_legacy():
    k = Knobs(lobes=7)
    with pytest.raises(AttributeError, match="immutable"):
        k.lobes = 8
    assert k.replace(jitter=0.4).jitter == 0.4 and k.jitter == 0.2
    assert Knobs.resolve(None) == Knobs() and Knobs.resolve({"lobes": 4}).lobes == 4
    assert Knobs.resolve(k) is k
    with pytest.raises(pg.ParamsError, match=r"expected Knobs or a dict of fields, got 3"):
        Knobs.resolve(3)

    class OldConfig:
        lobes = 9
        unrelated = "x"

    assert Knobs.from_legacy(OldConfig()) == Knobs(lobes=9)


@pytest.mark.parametrize("key", [1, None, ("lobes",)])
def test_resolve_refuses_a_key_that_is_not_a_field_name(key):
    with pytest.raises(
        pg.ParamsError, match=r"acme.wobbly: expected field names \(str\) as keys, got "
    ):
        Knobs.resolve({"lobes": 4, key: 0.1})


def test_declaration_refusals():
    with pytest.raises(pg.ParamsError, match=r"Bad.x: expected a default value, got none"):

        class Bad(Params):
            x: int = Field()

    with pytest.raises(pg.ParamsError, match=r"Worse.y: expected a value in \[0, 1\], got 5"):

        class Worse(Params):
            y: int = Field(5, bounds=(0, 1))


def test_params_class_from_a_mapping():
    P = params_class("P", {"a": Field(1.5, bounds=(0.0, 2.0))}, owner="node")
    assert P().a == 1.5
    with pytest.raises(pg.ParamsError, match=r"node.a: expected a value in \[0.0, 2.0\], got 3"):
        P(a=3)


@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_bounds_are_enforced_like_a_plain_comparison(x):
    inside = 0.0 <= x <= 1.0
    try:
        got = Knobs(jitter=x).jitter
    except pg.ParamsError:
        assert not inside
    else:
        assert inside and got == x


@given(st.integers(-100, 100))
def test_integer_bounds_match_a_plain_comparison(n):
    ok = 3 <= n <= 12
    try:
        Knobs(lobes=n)
    except pg.ParamsError:
        assert not ok
    else:
        assert ok
