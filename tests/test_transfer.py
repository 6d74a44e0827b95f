"""transfer.upload and transfer.readback: every form of the seed, refusals, and round trips."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.columns import Column, LiveCount


def up(values, device="cpu"):
    return ops.transfer.upload(values=values, device=device)["columns"]


def read(**cols):
    return ops.transfer.readback(columns=cols)["values"]


def test_forms(device):
    c = up(
        {
            "n": 2.5,
            "xs": [1, 2, 3],
            "pts": [{"x": 1, "y": 2, "z": 3}, {"x": 4, "y": 5, "z": 6}],
            "p2": [{"x": 1, "y": 2}],
            "names": ["a", "b", "a"],
            "label": "hello",
            "ids": {"type": "Int", "values": [1, -2]},
            "u": {"type": "UInt", "values": [7]},
            "col": {"type": "Color", "values": [[1, 0, 0, 1]]},
            "nested": {"a": [1.0], "b": {"type": "Int", "values": [3]}},
        },
        device,
    )
    assert c["n"].type == "Float" and len(c["n"]) == 1
    assert c["xs"].type == "Float" and c["pts"].type == "Vec3" and c["p2"].type == "Vec2"
    assert c["names"].type == "String" and c["names"].table == ["a", "b"]
    assert c["ids"].type == "Int" and c["u"].type == "UInt" and c["col"].type == "Color"
    assert isinstance(c["nested"], pg.Record) and c["nested"]["b"].type == "Int"
    got = read(**c)
    assert got["n"] == [2.5]
    assert got["xs"] == [1.0, 2.0, 3.0]
    assert got["pts"] == [{"x": 1, "y": 2, "z": 3}, {"x": 4, "y": 5, "z": 6}]
    assert got["names"] == ["a", "b", "a"] and got["label"] == ["hello"]
    assert got["ids"] == [1, -2] and got["u"] == [7]
    assert got["col"] == [{"x": 1, "y": 0, "z": 0, "w": 1}]
    assert got["nested"] == {"a": [1.0], "b": [3]}


def test_column_is_held_as_it_is(device):
    col = Column(wp.zeros(3, dtype=wp.float32, device=device))
    before = pg.traffic().uploads
    assert up({"c": col}, device)["c"] is col
    assert pg.traffic().uploads == before


@pytest.mark.parametrize(
    "values, match",
    [
        (
            {"a": object()},
            r"values\['a'\]: expected a Number, a list, text, \{type=, values=\}, a table or a Column, got object",
        ),
        (
            {"a": [1, "x"]},
            r"values\['a'\]: expected a list of numbers, of text or of \{x,y,z\} tables, got \[1, 'x'\]",
        ),
        ({"a": [{"x": 1}, {"x": 1}]}, r"values\['a'\]: expected keys x,y\[,z\[,w\]\], got \['x'\]"),
        ({"a": [{"x": 1, "y": 2}, {"x": 1}]}, r"with the same keys, got \{'x': 1\}"),
        (
            {"a": {"type": "Quat", "values": [1]}},
            r"values\['a'\].type: expected one of \['Float', .*got 'Quat'",
        ),
        (
            {"a": {"type": "Int", "values": [1.5]}},
            r"values\['a'\].values: expected whole numbers for Int, got \[1.5\]",
        ),
        (
            {"a": {"type": "UInt", "values": [-1]}},
            r"expected UInt numbers in \[0, 4294967295\] \(32-bit words\), got -1 at index 0",
        ),
        (
            {"a": {"type": "Vec2", "values": [[1, 2, 3]]}},
            r"expected 2 numbers per element for Vec2, got shape \(1, 3\)",
        ),
        ({"a": {"type": "Int", "values": 3}}, r"values\['a'\].values: expected a list, got 3"),
    ],
)
def test_upload_refusals(values, match):
    with pytest.raises(pg.UploadError, match=match):
        up(values)


def test_upload_and_readback_need_records():
    with pytest.raises(
        pg.UploadError,
        match=r"transfer.upload values: expected a Record of named values, got \[1, 2\]",
    ):
        ops.transfer.upload(values=[1, 2])
    with pytest.raises(
        pg.UploadError, match=r"transfer.readback columns: expected a Record of columns, got 3"
    ):
        ops.transfer.readback(columns=3)
    with pytest.raises(
        pg.UploadError, match=r"columns\['x'\]: expected a Column, a live count, .*got object"
    ):
        ops.transfer.readback(columns={"x": object()})


def test_readback_live_counts_plain_values_geometry(device):
    words = wp.array([2], dtype=wp.uint32, device=device)
    live = LiveCount(words, 4)
    col = Column(wp.array([1.0, 2.0, 3.0, 4.0], dtype=wp.float32, device=device), "Float", live)
    geo = pg.Geometry(point={"P": col})
    got = read(
        count=live,
        rec={"count": Column(words), "capacity": 4},
        col=col,
        n=3,
        flag=True,
        s="text",
        tbl={"a": 1, "b": [live]},
        geo=geo,
    )
    assert got["count"] == 2 and got["rec"] == 2
    assert got["col"] == [1.0, 2.0]  # a live column answers its live elements
    assert (got["n"], got["flag"], got["s"]) == (3, True, "text")
    assert got["tbl"] == {"a": 1, "b": [2]}
    assert got["geo"] == {"point": {"count": 2, "P": [1.0, 2.0]}}


def test_readback_is_a_wait_point_in_the_report():
    g = pg.Graph("w")

    @pg.node
    def src():
        return up({"a": [1.0, 2.0]})["a"]

    @pg.node
    def reader(a):
        return read(a=a)["a"]

    g.add("src", src)
    g.add("reader", reader, a="src")
    r = g.cook()
    assert r.report.waits == [("reader", "transfer.readback of ['a']")]
    assert r.report.node("reader").readbacks == 1 and r.report.node("src").readbacks == 0
    assert r["reader"] == [1.0, 2.0]


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.lists(st.floats(-1e6, 1e6, width=32), max_size=50).map(lambda v: ("Float", v)),
        st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50).map(lambda v: ("Int", v)),
        st.lists(st.integers(0, 2**32 - 1), max_size=50).map(lambda v: ("UInt", v)),
        st.lists(st.tuples(*[st.floats(-1e3, 1e3, width=32)] * 3), max_size=20).map(
            lambda v: ("Vec3", v)
        ),
        st.lists(st.text(max_size=5), max_size=20).map(lambda v: ("String", v)),
    )
)
def test_round_trip_matches_numpy(case):
    typ, values = case
    col = up({"v": {"type": typ, "values": values}})["v"]
    assert col.type == typ and len(col) == len(values)
    got = read(v=col)["v"]
    if typ == "Vec3":
        mine = np.array([[p["x"], p["y"], p["z"]] for p in got], np.float32).reshape(-1, 3)
        assert np.array_equal(mine, np.array(values, np.float32).reshape(-1, 3))
    elif typ == "String":
        assert got == list(values)
    else:
        dtype = {"Float": np.float32, "Int": np.int32, "UInt": np.uint32}[typ]
        assert got == np.asarray(values, dtype).tolist()
