"""A typed vector upload takes each element's lanes by name, from Python dicts and Lua
tables alike; a missing or unknown lane is an UploadError naming it."""

from __future__ import annotations

import lupa
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.elements import COLUMN_TYPES


def _up(value):
    return ops.transfer.upload(values={"c": value})["columns"]["c"]


def test_a_color_takes_its_lanes_by_name():
    c = _up({"type": "Color", "values": [{"r": 1, "g": 0.5, "b": 0.25, "a": 1}]})
    assert c.type == "Color"
    assert c.data.numpy().tolist() == [[1.0, 0.5, 0.25, 1.0]]
    # the same by x, y, z, w, in any key order, and a list of numbers as it is
    c = _up({"type": "Color", "values": [{"w": 4, "z": 3, "y": 2, "x": 1}, [5, 6, 7, 8]]})
    assert c.data.numpy().tolist() == [[1, 2, 3, 4], [5, 6, 7, 8]]


def test_the_tables_lua_returns_upload_by_name():
    lua = lupa.LuaRuntime()
    table = lua.eval(
        "{type = 'Color', values = {{r = 1, g = .5, b = .25, a = 1}, {a = 0, b = 3, g = 2, r = 1}}}"
    )
    assert _up(table).data.numpy().tolist() == [[1, 0.5, 0.25, 1], [1, 2, 3, 0]]
    vec = lua.eval("{type = 'Vec3', values = {{z = 3, x = 1, y = 2}}}")
    assert _up(vec).data.numpy().tolist() == [[1, 2, 3]]
    # a whole values table from Lua, untyped: a list of {x, y} tables is a Vec2 column
    cols = ops.transfer.upload(values=lua.eval("{p = {{x = 1, y = 2}, {x = 3, y = 4}}}"))
    assert cols["columns"]["p"].type == "Vec2"
    assert cols["columns"]["p"].data.numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(pg.UploadError, match=r"values\['c'\]\.values\[0\].*missing a"):
        _up(lua.eval("{type = 'Color', values = {{r = 1, g = .5, b = .25}}}"))


def test_a_lua_table_through_cpu_call_uploads_by_name():
    @pg.node
    def colors():
        got = ops.cpu.call(
            fn="function() return {type = 'Color', values = {{r = 1, g = .5, b = .25, a = 1}}} end",
            returns=["Record"],
        )["values"][0]
        return ops.transfer.upload(values={"c": got})["columns"]["c"]

    g = pg.Graph("lanes")
    g.add("colors", colors)
    assert g.cook()["colors"].data.numpy().tolist() == [[1.0, 0.5, 0.25, 1.0]]


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (
            {"type": "Vec3", "values": [{"x": 1, "y": 2}]},
            r"\{x, y, z\} of a Vec3, got \{x, y\} \(missing z\)",
        ),
        ({"type": "Vec2", "values": [{"x": 1, "yy": 2}]}, r"missing y; unknown yy"),
        ({"type": "Vec4", "values": [{"x": 1, "y": 2, "z": 3, "w": 4, "v": 0}]}, r"unknown v"),
        (
            {"type": "Color", "values": [{"r": 1, "g": 1, "b": 1, "w": 1}]},
            r"\{r, g, b, a\} or \{x, y, z, w\}",
        ),
        ({"type": "Vec2", "values": [[1, 2], {"x": 1}]}, r"values\[1\].*missing y"),
    ],
)
def test_a_missing_or_unknown_lane_is_refused_naming_it(value, named):
    with pytest.raises(pg.UploadError, match=named):
        _up(value)


VEC_TYPES = [n for n, t in COLUMN_TYPES.items() if t.lanes > 1]


@settings(max_examples=60, deadline=None)
@given(
    t=st.sampled_from(VEC_TYPES),
    rows=st.lists(st.lists(st.integers(-1000, 1000), min_size=4, max_size=4), max_size=6),
    data=st.data(),
)
def test_lanes_by_name_land_in_their_lane(t, rows, data):
    ct = COLUMN_TYPES[t]
    lanes = data.draw(st.sampled_from(ct.lane_sets()))
    tables = []
    for r in rows:
        keys = data.draw(st.permutations(lanes))  # any key order
        tables.append({k: float(r[lanes.index(k)]) for k in keys})
    col = _up({"type": t, "values": tables})
    want = np.asarray([r[: ct.lanes] for r in rows], np.float32).reshape(-1, ct.lanes)
    np.testing.assert_array_equal(col.data.numpy().reshape(-1, ct.lanes), want)
