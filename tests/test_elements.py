"""One table of element types: every column type and kernel element, checked against
Warp's and NumPy's own type information, and no second copy of it in the package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import warp as wp

import procgen_nb
from procgen_nb.columns import Column, column_from_numpy
from procgen_nb.elements import COLUMN_TYPES, ELEMENTS, XYZW, column_of_dtype

PACKAGE = Path(procgen_nb.__file__).parent


@pytest.mark.parametrize("name", sorted(ELEMENTS))
def test_each_element_matches_warp(name):
    e = ELEMENTS[name]
    host = wp.zeros(2, dtype=e.dtype, device="cpu").numpy()  # Warp's own layout of it
    assert host.shape == ((2, e.lanes) if e.lanes > 1 else (2,))
    assert host.dtype == np.dtype(e.np_word)
    assert eval(e.wp_name, {"wp": wp}) is e.dtype  # noqa: S307 - the table's own text
    assert e.word == {np.float32: "f32", np.int32: "i32", np.uint32: "u32"}[e.np_word]


@pytest.mark.parametrize("name", sorted(COLUMN_TYPES))
def test_each_column_type_uploads_as_its_words(name):
    t = COLUMN_TYPES[name]
    values = np.arange(3 * t.lanes).reshape(3, t.lanes) if t.lanes > 1 else np.arange(3)
    col = column_from_numpy(values, name, "cpu")
    assert (col.type, col.lanes, col.element(), col.data.dtype) == (
        name,
        t.lanes,
        t.word,
        t.dtype,
    )
    assert col.data.numpy().reshape(values.shape).tolist() == values.tolist()
    assert len(t.lane_names) == (t.lanes if t.lanes > 1 else 0)
    assert all(len(s) == t.lanes for s in t.lane_sets())


def test_a_bare_array_is_taken_as_the_plain_type_of_its_dtype():
    assert [column_of_dtype(e.dtype) for e in ELEMENTS.values()] == [
        "Float",
        "Int",
        "UInt",
        "Vec2",
        "Vec3",
        "Vec4",
    ]
    assert column_of_dtype(wp.float64) is None
    assert Column(wp.zeros(2, dtype=wp.vec4f)).type == "Vec4"
    assert XYZW == ("x", "y", "z", "w")


# a literal table of element types: "vec2": wp.vec2f, "Vec3": 3, "f32": np.float32, ...
_COPY = re.compile(
    r"""["'](?:vec[234]|Vec[234]|Color|f32|i32|u32)["']\s*:\s*"""
    r"""(?:wp\.|np\.|["']wp\.|["'](?:Float|Int|UInt|Vec[234])["']|[234]\b|\()"""
)


def test_no_module_holds_a_second_copy_of_the_table():
    copies = [
        f"{p.relative_to(PACKAGE)}:{i}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.name != "elements.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if _COPY.search(line)
    ]
    assert copies == []
