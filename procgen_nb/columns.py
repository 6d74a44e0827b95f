"""Columns, live counts, Records, Geometries, Parts and Textures: the values ops pass around.

A ``Column`` is a device array of 32-bit words with an element type. An Int column holds
i32, a UInt column u32, every other type f32 (``column.element()``). A column may carry a
capacity and a live count held in a one-word device buffer (``_capacity``/``_liveCount``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import warp as wp

from .counts import (
    Count,
    LiveCount,
    ResolvedDomain,
    as_live_count,
    counted_slots,  # noqa: F401 - its home is counts; columns hands it on
    resolve_domain,
)
from .elements import COLUMN_TYPES, ELEMENTS, F32_MAX, WORD_RANGES, column_of_dtype
from .errors import BindingError

#: element type name -> (warp dtype, lanes, word kind), read from ``procgen_nb.elements``
ELEMENT_TYPES: dict[str, tuple[Any, int, str]] = {
    n: (t.dtype, t.lanes, t.word) for n, t in COLUMN_TYPES.items()
}
#: bindings.yaml element name -> column type
BINDING_ELEMENTS: dict[str, str] = {n: e.column for n, e in ELEMENTS.items()}


def _type_of_dtype(dtype: Any) -> str:
    name = column_of_dtype(dtype)
    if name is not None:
        return name
    raise BindingError(
        f"column dtype: expected one of float32, int32, uint32, vec2f, vec3f, vec4f, got {dtype}"
    )


class Column:
    """A device array of 32-bit words with an element type and an optional live count.

    Args:
        data: a ``wp.array`` of float32, int32, uint32, vec2f, vec3f or vec4f.
        type: the element type name (Float, Int, UInt, Vec2, Vec3, Vec4, Color, String);
            taken from the dtype when omitted.
        live: a ``LiveCount`` when the column holds a live count (its data then has the
            capacity's slots and only the first ``count`` are live).
        table: for a String column, the list of distinct values the words index.
    """

    def __init__(
        self,
        data: wp.array,
        type: str | None = None,
        live: LiveCount | None = None,
        table: list[str] | None = None,
    ):
        if not isinstance(data, wp.array):
            raise BindingError(f"column data: expected a wp.array, got {_describe_value(data)}")
        if type is None:
            type = _type_of_dtype(data.dtype)
        if type not in ELEMENT_TYPES:
            raise BindingError(f"column type: expected one of {list(ELEMENT_TYPES)}, got {type!r}")
        if ELEMENT_TYPES[type][0] != data.dtype:
            raise BindingError(
                f"column of type {type}: expected dtype {ELEMENT_TYPES[type][0].__name__}, "
                f"got {getattr(data.dtype, '__name__', data.dtype)}"
            )
        self.data = data
        self.type = type
        self.live = live
        self.table = table

    # -- seed names ---------------------------------------------------------------------
    def element(self) -> str:
        """Returns the word kind of the elements: "i32", "u32" or "f32"."""
        return ELEMENT_TYPES[self.type][2]

    @property
    def lanes(self) -> int:
        """Words per element (1 for scalars, 2-4 for vectors)."""
        return ELEMENT_TYPES[self.type][1]

    @property
    def _capacity(self) -> int | None:
        return self.live.capacity if self.live is not None else None

    @property
    def _liveCount(self) -> wp.array | None:  # noqa: N802 - the 0.1 interface's name
        return self.live.words if self.live is not None else None

    @property
    def capacity(self) -> int:
        """Slots allocated (the live count's capacity for a live column)."""
        return self.data.shape[0]

    @property
    def count(self) -> int | LiveCount:
        """The element count: a number for a plain column, a LiveCount for a live one."""
        return self.live if self.live is not None else self.data.shape[0]

    @property
    def device(self) -> str:
        """The device the column lives on."""
        return str(self.data.device)

    def __len__(self) -> int:
        return self.data.shape[0]

    def __repr__(self) -> str:
        live = f", live capacity={self.live.capacity}" if self.live else ""
        return f"Column({self.type}, {self.data.shape[0]} slots{live}, device={self.device!r})"

    def _repr_html_(self) -> str:
        from ._display import table

        live = self.live
        rows = [("type", self.type), ("slots", len(self)), ("device", self.device)]
        if live is not None:
            from .launch import default_context

            word = int(default_context(self.device).readback(live.words)[0])
            rows += [("live count", f"{word} of capacity {live.capacity}")]
        head = self.numpy()[:8]
        rows += [("first values", np.array2string(head, precision=4, separator=", "))]
        return table("Column", rows)

    def numpy(self, live: bool = False) -> np.ndarray:
        """Reads the column back as a NumPy array (a readback and a wait).

        Args:
            live: read only the live slots of a live column (reads its count first).
        """
        from .launch import default_context

        ctx = default_context(self.device)
        n = len(self)
        if live and self.live is not None:
            n = min(int(ctx.readback(self.live.words)[0]), n)
        return ctx.readback(self.data[:n]) if n else self.data.numpy()[:0]

    def _resolve_domain(self, ctx: Any = None) -> ResolvedDomain:
        """A dispatch over the column: its live count, or every slot of a plain one."""
        if self.live is not None:
            return ResolvedDomain(self.live.capacity, self.live, None)
        return ResolvedDomain(len(self), None, len(self))

    def with_live(self, live: LiveCount | None) -> Column:
        """Returns the same data carrying ``live`` as its live count."""
        return Column(self.data, self.type, live, self.table)


class Record(dict):
    """A table of named values; items are reachable as keys or attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"Record has no entry {name!r}; it has {sorted(self)}") from None

    def __repr__(self) -> str:
        return f"Record({dict.__repr__(self)})"

    def _repr_html_(self) -> str:
        from ._display import table

        return table(f"Record of {len(self)}", [(k, repr(v)) for k, v in self.items()])


class Domain(Record):
    """A class of a Geometry: columns over a shared count."""

    def __init__(self, columns: Mapping[str, Column] | None = None, count: Any = None):
        super().__init__(columns or {})
        cols = list(self.values())
        if count is None:
            count = cols[0].count if cols else 0
        object.__setattr__(self, "_count", count)

    @property
    def count(self) -> Any:
        """The class's element count: a number, a LiveCount, or count arithmetic over them.

        Set it with ``class.count = count`` (the procgen ABI's form): a whole number >= 0, a live
        count (a LiveCount, a live Column, an appended output's count,
        ``{count=, capacity=}``, what ``device.bound`` answers) or count arithmetic that
        only grows with the counts it reads; its capacity must fit the class's columns.
        Nothing is read back.
        """
        return self._count

    @count.setter
    def count(self, value: Any) -> None:
        object.__setattr__(self, "_count", _class_count(value, self))

    def _resolve_domain(self, ctx: Any = None) -> ResolvedDomain:
        """A dispatch over the class: over its count (``counts`` reads it)."""
        return resolve_domain(self._count, ctx)

    @property
    def columns(self) -> dict[str, Column]:
        """The class's columns by name."""
        return dict(self)


def _class_count(value: Any, dom: Domain) -> Any:
    """Checks a count assigned to a Geometry class (``class.count = count``)."""
    import numbers

    where = "class.count"
    slots = min((len(c) for c in dom.values() if isinstance(c, Column)), default=None)
    if isinstance(value, bool):
        raise BindingError(f"{where}: expected a whole Number >= 0 or a live count, got {value!r}")
    if isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer()):
        n = int(value)
        if n < 0 or (slots is not None and n > slots):
            raise BindingError(
                f"{where}: expected a whole Number in [0, {slots if slots is not None else 'inf'}] "
                f"(the class's column slots), got {value!r}"
            )
        return n
    if isinstance(value, Count):
        cap = value.capacity
        if cap is None:
            raise BindingError(
                f"{where}: expected count arithmetic that only grows with its counts (a live "
                f"count carries its capacity), got {value.text} (it subtracts: read it with "
                "count(...).read() or bound it with device.bound(value, capacity=...))"
            )
    else:
        live = as_live_count(value, where)
        if live is None:
            raise BindingError(
                f"{where}: expected a whole Number >= 0, a live count or count arithmetic, "
                f"got {_describe_value(value)}"
            )
        value, cap = live, live.capacity
    if slots is not None and cap > slots:
        raise BindingError(
            f"{where}: expected a count whose capacity fits the class's columns ({slots} "
            f"slots), got capacity {cap}"
        )
    return value


class Geometry:
    """Classes (``point`` at least), each a Domain of columns with a count."""

    def __init__(self, **classes: Domain | Mapping[str, Column]):
        self.classes: dict[str, Domain] = {}
        for name, dom in classes.items():
            self.classes[name] = dom if isinstance(dom, Domain) else Domain(dom)
        self.classes.setdefault("point", Domain())

    def __getattr__(self, name: str) -> Domain:
        classes = self.__dict__.get("classes", {})
        if name in classes:
            return classes[name]
        raise AttributeError(f"Geometry has no class {name!r}; it has {sorted(classes)}")

    def __repr__(self) -> str:
        return "Geometry(" + ", ".join(f"{k}={sorted(v)}" for k, v in self.classes.items()) + ")"

    def part(self, *classes: str, **columns: Any) -> Part:
        """Returns a Part of this Geometry: some of its classes, and of each some columns.

        Args:
            *classes: classes taken whole (every column).
            **columns: class name -> the names of the columns taken from it (a list, or a
                space-separated string like the ``order`` of a columns binding).

        Raises:
            BindingError: a class or a column the Geometry does not have.
        """
        return Part(self, *classes, **columns)


class Part:
    """A part of a Geometry: chosen classes, and in each chosen columns over its count.

    The 0.1 interface lets ``transfer.readback`` take "a Geometry or a Part, which answers the copy
    holding what its columns held". A Geometry here is classes, each a Domain of columns
    over one count, so a part of it is the same thing cut down: some of its classes, and
    of each some of its columns, still over the class's count (a piece named by class
    and column, not a range of elements: the count is the class's, live or not). A Part
    holds the Geometry and its choice, not copies (a class count set later is the part's
    too): a readback of it reads what the columns hold then, and answers
    ``{class: {"count": n, column: values, ...}}`` like the Geometry's readback, with only
    the classes and columns of the part.

    Args:
        geometry: the Geometry it is a part of.
        *classes: classes taken whole.
        **columns: class name -> the column names taken from it (a list or a
            space-separated string).

    Raises:
        BindingError: no Geometry, no class chosen, or a class or column it does not have.
    """

    def __init__(self, geometry: Geometry, *classes: str, **columns: Any):
        if not isinstance(geometry, Geometry):
            raise BindingError(
                f"Part geometry: expected a Geometry, got {_describe_value(geometry)}"
            )
        chosen: dict[str, tuple[str, ...] | None] = {}
        for name in classes:
            chosen[name] = None
        for name, cols in columns.items():
            if isinstance(cols, str):
                cols = cols.split()
            if not isinstance(cols, list | tuple) or not all(isinstance(c, str) for c in cols):
                raise BindingError(
                    f"Part columns[{name!r}]: expected a list of column names, got "
                    f"{_describe_value(cols)}"
                )
            chosen[name] = tuple(cols)
        if not chosen:
            raise BindingError(
                f"Part classes: expected at least one of {sorted(geometry.classes)}, got none"
            )
        for name, cols in chosen.items():
            if not isinstance(name, str) or name not in geometry.classes:
                raise BindingError(
                    f"Part class: expected one of {sorted(geometry.classes)}, got {name!r}"
                )
            dom = geometry.classes[name]
            missing = [c for c in cols or () if c not in dom]
            if missing:
                raise BindingError(
                    f"Part columns of {name!r}: expected names among {sorted(dom)}, got {missing}"
                )
        self.geometry = geometry
        self._chosen = chosen

    @property
    def classes(self) -> dict[str, Domain]:
        """The part's classes as they stand now: each the class's columns chosen, its count."""
        out: dict[str, Domain] = {}
        for name, cols in self._chosen.items():
            dom = self.geometry.classes[name]
            out[name] = dom if cols is None else Domain({c: dom[c] for c in cols}, dom.count)
        return out

    def __getattr__(self, name: str) -> Domain:
        if name.startswith("_") or "_chosen" not in self.__dict__:
            raise AttributeError(name)
        classes = self.classes
        if name in classes:
            return classes[name]
        raise AttributeError(f"Part has no class {name!r}; it has {sorted(classes)}")

    def __repr__(self) -> str:
        return "Part(" + ", ".join(f"{k}={sorted(v)}" for k, v in self.classes.items()) + ")"


class Texture:
    """A texture: a texels column laid out row by row, with its width and height."""

    def __init__(self, texels: Column, width: int, height: int):
        if not isinstance(texels, Column):
            raise BindingError(f"texture texels: expected a Column, got {_describe_value(texels)}")
        for name, v in (("width", width), ("height", height)):
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
                raise BindingError(f"texture {name}: expected a whole Number >= 0, got {v!r}")
        if int(width) * int(height) != len(texels):
            raise BindingError(
                f"texture: expected width*height == texels ({len(texels)}), got {width}x{height}"
            )
        self.texels = texels
        self.width = int(width)
        self.height = int(height)


def _describe_value(v: Any) -> str:
    if isinstance(v, wp.array):
        return f"wp.array(dtype={getattr(v.dtype, '__name__', v.dtype)}, shape={v.shape})"
    if isinstance(v, Column):
        return repr(v)
    text = repr(v)
    return text if len(text) < 80 else text[:77] + "..."


_RANGES = WORD_RANGES


def _check_range(src: np.ndarray, type: str, word: str) -> None:
    """Refuses values a 32-bit word cannot hold (no silent wrap), naming the first one."""
    from .errors import UploadError

    lo, hi = _RANGES[word]
    if src.dtype.kind in "iu":
        info = np.iinfo(src.dtype)
        if info.min >= lo and info.max <= hi:
            return
        bad = np.flatnonzero((src < lo) | (src > hi))
    else:
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.isfinite(src) | (src < lo) | (src > hi))
    if bad.size:
        i = int(bad[0])
        raise UploadError(
            f"column of type {type}: expected numbers in [{lo}, {hi}] (32-bit words), got "
            f"{src.reshape(-1)[i].item()!r} at index {i}"
        )


def _check_f32(src: np.ndarray, type: str) -> None:
    """Refuses a finite value float32 cannot hold (an int past float64, 1e300: inf once cast),
    naming the first one; NaN and inf given as floats pass."""
    from .errors import UploadError

    flat = src.reshape(-1)
    try:
        wide = flat.astype(np.float64)
    except (OverflowError, TypeError, ValueError):
        wide = None
    if wide is None or src.dtype.kind == "O":
        for i, v in enumerate(flat):
            try:
                ok = isinstance(v, float) or abs(float(v)) <= F32_MAX
            except (OverflowError, TypeError, ValueError):
                ok = False
            if not ok:
                shown = f"an int of {len(str(abs(v)))} digits" if isinstance(v, int) else repr(v)
                raise UploadError(
                    f"column of type {type}: expected numbers within float32's range "
                    f"[-{F32_MAX:.7g}, {F32_MAX:.7g}], got {shown} at index {i}"
                )
        return
    bad = np.flatnonzero(np.isfinite(wide) & (np.abs(wide) > F32_MAX))
    if bad.size:
        i = int(bad[0])
        raise UploadError(
            f"column of type {type}: expected numbers within float32's range "
            f"[-{F32_MAX:.7g}, {F32_MAX:.7g}], got {flat[i].item()!r} at index {i}"
        )


def column_from_numpy(values: Any, type: str, device: str, ctx: Any = None) -> Column:
    """Uploads host values as a Column of ``type`` (counts one upload)."""
    from .launch import default_context

    ctx = ctx or default_context(device)
    t = COLUMN_TYPES[type]
    dtype, lanes, word = t.dtype, t.lanes, t.word
    src = np.asarray(values)
    if word != "f32" and src.size and src.dtype.kind in "iuf":
        _check_range(src, type, word)
    elif word == "f32" and src.size and src.dtype.kind in "iufO":
        _check_f32(src, type)
    arr = np.asarray(src, dtype=t.np_word)
    if lanes > 1:
        arr = arr.reshape(-1, lanes) if arr.size else np.zeros((0, lanes), t.np_word)
    else:
        arr = arr.reshape(-1)
    return Column(ctx.upload(arr, dtype), type)
