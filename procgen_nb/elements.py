"""Element types: the one table of column types and kernel elements, with their Warp dtypes
and lanes.

A Column's elements are 32-bit words (an Int column holds i32, a UInt column u32, every
other type f32). A kernel binding states its element (``f32``, ``i32``, ``u32``, ``vec2``,
``vec3``, ``vec4``); each column type meets one element. Every module that needs a dtype,
a lane count, lane names or a NumPy word type reads it here:

>>> COLUMN_TYPES["Color"].lanes, COLUMN_TYPES["Color"].lane_names, COLUMN_TYPES["Color"].element
(4, ('r', 'g', 'b', 'a'), 'vec4')
>>> ELEMENTS["vec3"].column, ELEMENTS["u32"].wp_name
('Vec3', 'wp.uint32')
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import warp as wp

__all__ = [
    "COLUMN_TYPES",
    "ELEMENTS",
    "F32_MAX",
    "SCALARS",
    "VECTORS",
    "WORD_RANGES",
    "XYZW",
    "ColumnType",
    "Element",
    "column_of_dtype",
]

#: the lane names of a vector, in order (``{x, y, z, w}`` tables, ``<param>_x`` uniforms)
XYZW = ("x", "y", "z", "w")


@dataclasses.dataclass(frozen=True)
class Element:
    """A kernel element (what ``bindings.yaml`` states).

    Attributes:
        name: ``f32``, ``i32``, ``u32``, ``vec2``, ``vec3`` or ``vec4``.
        dtype: the Warp dtype of an array of it.
        wp_name: the dtype as Warp source text (``wp.vec2f``).
        lanes: 32-bit words per element.
        word: the word kind of each lane (``f32``, ``i32`` or ``u32``).
        column: the column type a kernel's output of it is.
    """

    name: str
    dtype: Any
    wp_name: str
    lanes: int
    word: str
    column: str

    @property
    def np_word(self) -> type:
        """The NumPy type of one lane's word."""
        return _NP_WORDS[self.word]


@dataclasses.dataclass(frozen=True)
class ColumnType:
    """A column type (the 0.1 interface's Float, Int, UInt, Vec2, Vec3, Vec4, Color, String).

    Attributes:
        name: the type's name.
        element: the kernel element its words are.
        lane_names: the names of its lanes in a table (``{x, y}``, ``{r, g, b, a}``); empty
            for a scalar type.
        aliases: other complete sets of lane names it takes (a Color as ``{x, y, z, w}``).
    """

    name: str
    element: str
    lane_names: tuple[str, ...] = ()
    aliases: tuple[tuple[str, ...], ...] = ()

    @property
    def dtype(self) -> Any:
        """The Warp dtype of the column's array."""
        return ELEMENTS[self.element].dtype

    @property
    def lanes(self) -> int:
        """32-bit words per element (1 for scalars, 2-4 for vectors)."""
        return ELEMENTS[self.element].lanes

    @property
    def word(self) -> str:
        """The word kind of the elements: ``f32``, ``i32`` or ``u32``."""
        return ELEMENTS[self.element].word

    @property
    def np_word(self) -> type:
        """The NumPy type of one lane's word."""
        return _NP_WORDS[self.word]

    def lane_sets(self) -> tuple[tuple[str, ...], ...]:
        """Every complete set of lane names a table of this type may use."""
        return (self.lane_names, *self.aliases) if self.lane_names else ()


_NP_WORDS = {"f32": np.float32, "i32": np.int32, "u32": np.uint32}

#: kernel element name -> Element
ELEMENTS: dict[str, Element] = {
    e.name: e
    for e in (
        Element("f32", wp.float32, "wp.float32", 1, "f32", "Float"),
        Element("i32", wp.int32, "wp.int32", 1, "i32", "Int"),
        Element("u32", wp.uint32, "wp.uint32", 1, "u32", "UInt"),
        Element("vec2", wp.vec2f, "wp.vec2f", 2, "f32", "Vec2"),
        Element("vec3", wp.vec3f, "wp.vec3f", 3, "f32", "Vec3"),
        Element("vec4", wp.vec4f, "wp.vec4f", 4, "f32", "Vec4"),
    )
}
#: column type name -> ColumnType (a String column's words index its table of text)
COLUMN_TYPES: dict[str, ColumnType] = {
    t.name: t
    for t in (
        ColumnType("Float", "f32"),
        ColumnType("Int", "i32"),
        ColumnType("UInt", "u32"),
        ColumnType("Vec2", "vec2", XYZW[:2]),
        ColumnType("Vec3", "vec3", XYZW[:3]),
        ColumnType("Vec4", "vec4", XYZW),
        ColumnType("Color", "vec4", ("r", "g", "b", "a"), (XYZW,)),
        ColumnType("String", "i32"),
    )
}
#: the values an integer word holds: word kind (and Warp dtype) -> (least, most)
#: the largest finite float32 (a Float word holds no finite value past it)
F32_MAX = float(np.finfo(np.float32).max)
WORD_RANGES: dict[Any, tuple[int, int]] = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}
WORD_RANGES.update({ELEMENTS[w].dtype: r for w, r in list(WORD_RANGES.items())})
#: the one-lane elements
SCALARS: tuple[str, ...] = tuple(n for n, e in ELEMENTS.items() if e.lanes == 1)
#: the vector elements -> their lanes
VECTORS: dict[str, int] = {n: e.lanes for n, e in ELEMENTS.items() if e.lanes > 1}


def column_of_dtype(dtype: Any) -> str | None:
    """Returns the column type an array of ``dtype`` is taken as (None for another dtype).

    Color and String share Vec4's and Int's words; a bare array is taken as those.
    """
    for e in ELEMENTS.values():
        if e.dtype == dtype:
            return e.column
    return None
