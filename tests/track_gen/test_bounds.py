"""Bounds are inclusive: the exact end values are accepted, the next value out is refused.

For every bounded field of the built-in Params classes (generators, gate generators, the
z profile, validity) and every ranged field of the two configs: ``lo`` and ``hi``
themselves pass unchanged; ``lo - 1`` / ``hi + 1`` (integers) or the adjacent float
(``math.nextafter``) are refused with a ``ParamsError`` naming the field and the range.
A ``>=`` written for ``>`` (or ``<=`` for ``<``) at a bound fails here.
"""

from __future__ import annotations

import math
import re

import pytest

from procgen_nb.errors import ParamsError
from procgen_nb.track_gen import GateGenConfig, TrackGenConfig, ValidityParams
from procgen_nb.track_gen.plugin import registry


def _params_classes() -> list[type]:
    found = {ValidityParams}
    for kind in ("generator", "gate_generator", "stage"):
        for name in registry.available(kind):
            pcls = getattr(registry.get(kind, name), "Params", None)
            if pcls is not None:
                found.add(pcls)
    return sorted(found, key=lambda c: c.__name__)


def _outside(value, typ, step: int):
    """The next value past ``value`` in direction ``step`` (-1 below, +1 above)."""
    if typ is int:
        return value + step
    return math.nextafter(float(value), step * math.inf)


BOUNDED = [
    (pcls, name, field.type, field.bounds)
    for pcls in _params_classes()
    for name, field in pcls.fields().items()
    if field.bounds is not None and field.type in (int, float)
]


def test_the_builtins_have_bounded_fields():
    # the table below is not empty, and covers both kinds of field
    assert len(BOUNDED) >= 30
    assert {typ for _, _, typ, _ in BOUNDED} == {int, float}


@pytest.mark.parametrize(
    ("pcls", "name", "typ", "bounds"),
    BOUNDED,
    ids=[f"{p.__name__}.{n}" for p, n, _, _ in BOUNDED],
)
def test_params_bounds_are_inclusive(pcls, name, typ, bounds):
    lo, hi = bounds
    # a half-open range names its one end
    accepted = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in [{lo}, {hi}]"
    range_text = re.escape(f"{name}: expected a value {accepted}, got ")
    for end, step in ((lo, -1), (hi, +1)):
        if end is None:
            continue
        value = typ(end)
        assert getattr(pcls(**{name: value}), name) == value
        assert getattr(pcls().replace(**{name: value}), name) == value
        out = _outside(value, typ, step)
        with pytest.raises(ParamsError, match=range_text + re.escape(repr(out))):
            pcls(**{name: out})
        with pytest.raises(ParamsError, match=range_text):
            pcls().replace(**{name: out})


# (field, lo, hi) of the integer fields, as the configs document them
TRACK_INTS = [
    ("num_envs", 1, 1 << 24),
    ("num_points", 8, 1 << 16),
    ("seed", -(1 << 31), (1 << 32) - 1),
    ("epoch", 0, (1 << 31) - 1),
]
GATE_INTS = [
    ("num_envs", 1, 1 << 24),
    ("seed", -(1 << 31), (1 << 32) - 1),
    ("epoch", 0, (1 << 31) - 1),
]


@pytest.mark.parametrize(("field", "lo", "hi"), TRACK_INTS)
def test_track_config_integer_ranges_are_inclusive(field, lo, hi):
    # seed + e must fit too, and num_envs x num_points in memory (issue 21)
    one = {"seed": {"num_envs": 1}, "num_envs": {"num_points": 8}, "num_points": {"num_envs": 1}}
    one = one.get(field, {})
    for end, step in ((lo, -1), (hi, +1)):
        assert getattr(TrackGenConfig(**{field: end}, **one), field) == end
        with pytest.raises(
            ParamsError,
            match=re.escape(f"TrackGenConfig.{field}: expected an integer in [{lo}, {hi}], got "),
        ):
            TrackGenConfig(**{field: end + step}, **one)


@pytest.mark.parametrize(("field", "lo", "hi"), GATE_INTS)
def test_gate_config_integer_ranges_are_inclusive(field, lo, hi):
    one = {"num_envs": 1} if field == "seed" else {}  # seed + e must fit too (issue 21)
    for end, step in ((lo, -1), (hi, +1)):
        assert getattr(GateGenConfig(**{field: end}, **one), field) == end
        with pytest.raises(
            ParamsError,
            match=re.escape(f"GateGenConfig.{field}: expected an integer in [{lo}, {hi}], got "),
        ):
            GateGenConfig(**{field: end + step}, **one)


def test_gate_counts_are_inclusive():
    assert GateGenConfig(min_gates=1, max_gates=1).max_gates == 1
    assert GateGenConfig(min_gates=4096, max_gates=4096).min_gates == 4096
    assert GateGenConfig(min_gates=5, max_gates=5).max_gates == 5  # max == min accepted
    for kw in ({"min_gates": 0}, {"max_gates": 4097}, {"min_gates": 5, "max_gates": 4}):
        with pytest.raises(ParamsError):
            GateGenConfig(**kw)


def test_positive_and_non_negative_numbers():
    tiny = math.nextafter(0.0, 1.0)
    assert TrackGenConfig(scale=tiny).scale == tiny
    assert GateGenConfig(scale=tiny, gate_size=tiny).gate_size == tiny
    assert GateGenConfig(min_spacing=0.0).min_spacing == 0.0  # >= 0: zero itself is in
    for make, text in (
        (lambda: TrackGenConfig(scale=0.0), "TrackGenConfig.scale: expected a positive number"),
        (lambda: GateGenConfig(scale=0), "GateGenConfig.scale: expected a positive number"),
        (
            lambda: GateGenConfig(gate_size=0.0),
            "GateGenConfig.gate_size: expected a positive number",
        ),
        (
            lambda: GateGenConfig(min_spacing=-tiny),
            "GateGenConfig.min_spacing: expected a number >= 0",
        ),
    ):
        with pytest.raises(ParamsError, match=re.escape(text)):
            make()
