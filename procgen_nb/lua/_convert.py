"""Conversions between Python values and Lua values, and the check of a call's results:
``_Convert``, a mixin of ``lua.state.LuaState`` (its methods work over the state's tables).

Python to Lua (``_Convert._to_lua``): numbers, strings, bools and None as they are; lists,
tuples and NumPy arrays as sequence tables; dicts, Records and Domains as tables; a Column
as a BufferRef table (its data stays where it is); a Geometry read to the CPU (a table of
classes, each column a table of numbers, or of ``{x, y, z, w}`` tables for vectors, and
``count``) or, with ``device`` on, as it stands (each column a BufferRef); a Curve as
its curve (``{keys, at}``) with ``curves`` on, else as its value at the cook's time; a
Handle as an opaque table; a Lua value of the same state as it is.

Lua to Python (``_Convert._check_returns``): per the type name ``returns`` states for the
position.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..columns import Column, Domain, Geometry, LiveCount, Record
from ..elements import COLUMN_TYPES, XYZW
from ..errors import BindingError, LuaArgError, LuaReturnError
from ._checks import _node, _short
from ._sandbox import lua_type
from .values import BufferRef, Curve, Handle

#: The type names ``returns`` accepts.
RETURN_TYPES = (
    "Bool",
    "BufferRef",
    "Color",
    "Column",
    "Function",
    "Geometry",
    "Handle",
    "List",
    "Number",
    "Record",
    "String",
    "Vec2",
    "Vec3",
    "Vec4",
)
_VEC_LANES = {n: t.lanes for n, t in COLUMN_TYPES.items() if t.lanes > 1}
_XYZW = XYZW
_RGBA = COLUMN_TYPES["Color"].lane_names
_MAX_DEPTH = 64
#: lupa's classes for a Lua thread (one not yet started comes as a coroutine function).
_THREAD_CLASSES = ("_LuaThread", "_LuaCoroutineFunction")


@dataclasses.dataclass
class ArgOptions:
    """How args cross to Lua: ``device`` (Geometry as it stands), ``curves``, the ``time``,
    and the ``node`` whose BufferRefs they are."""

    device: bool = False
    curves: bool = False
    time: float = 0.0
    node: str | None = None


_ACCEPTED = "a Number, String, Bool, List, Record, Column, Geometry, Curve, Handle or Lua value"
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _integer(value: int, where: str) -> int:
    """An int as Lua's 64-bit integer; refuses one past int64 (lupa raised OverflowError)."""
    if not _INT64[0] <= value <= _INT64[1]:
        raise LuaArgError(
            f"{where}: expected an integer from -2^63 to 2^63 - 1 (a Lua integer), got "
            f"{_short(value)}"
        )
    return int(value)


def _numpy_scalar(value: np.generic, where: str) -> Any:
    """A NumPy scalar as the Lua value it stands for: bools, integers (int64's range),
    floats of every width (a finite longdouble past float64's range refused), strings and
    bytes. Every other kind (complex, datetime64, timedelta64, void, object) is refused:
    ``item()`` would hand Lua a Python object."""
    name = f"numpy.{type(value).__name__}"
    if isinstance(value, np.datetime64 | np.timedelta64):  # timedelta64 is an integer type
        raise LuaArgError(f"{where}: expected {_ACCEPTED}, got {name} {_short(value)}")
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return _integer(int(value), where)
    if isinstance(value, np.floating):
        out = float(value)
        if np.isfinite(value) and not np.isfinite(out):
            raise LuaArgError(
                f"{where}: expected a float within float64's range (a Lua number), got "
                f"{name} {_short(value)}"
            )
        return out
    if isinstance(value, np.str_):
        return str(value)
    if isinstance(value, np.bytes_):
        return bytes(value)
    raise LuaArgError(f"{where}: expected {_ACCEPTED}, got {name} {_short(value)}")


@dataclasses.dataclass
class _Where:
    what: str
    node: str | None
    over: Callable[[], Exception | None] | None = None
    ticks: int = 0

    def tick(self) -> None:
        """Counts one value converted; every 4096, raises once the call's budget is spent."""
        self.ticks += 1
        if self.ticks & 4095 == 0 and self.over is not None:
            err = self.over()
            if err is not None:
                raise err

    def fail(self, pos: int, expected: str, got: str, detail: str = "") -> LuaReturnError:
        extra = f" ({detail})" if detail else ""
        return LuaReturnError(
            f"{self.what} in node {_node(self.node)}: result {pos}: expected {expected}, "
            f"got {got}{extra}"
        )


def _items(t: Any, where: _Where | None) -> dict:
    """A Lua table's entries, counted against the call's budget."""
    if where is None:
        return dict(t.items())
    out = {}
    for k, v in t.items():
        where.tick()
        out[k] = v
    return out


def _sequence(t: Any, where: _Where | None = None) -> list | None:
    items = _items(t, where)
    n = len(items)
    if all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= n for k in items):
        return [items[i] for i in range(1, n + 1)]
    return None


def _count(col: Column) -> int:
    return col.live.capacity if col.live is not None else len(col)


def _vector(t: Any, expected: str, where: _Where, pos: int) -> tuple[float, ...]:
    lanes = _VEC_LANES[expected]
    items = _items(t, where)
    seq = _sequence(t, where)
    if seq is not None and len(seq) == lanes:
        vals = seq
    else:
        names = _RGBA if expected == "Color" and "r" in items else _XYZW
        vals = [items.get(k) for k in names[:lanes]]
        if set(items) != set(names[:lanes]):
            vals = []
    if len(vals) == lanes and all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in vals
    ):
        return tuple(float(x) for x in vals)
    keys = ", ".join(_XYZW[:lanes])
    raise where.fail(
        pos,
        f"{expected} (a table {{{keys}}} or {lanes} numbers)",
        "a table",
        f"keys {sorted(map(str, items))}",
    )


def canon(value: Any, depth: int = 0) -> Any:
    """Returns a hashable stand-in for a plain value (lists as tuples, dicts sorted).

    Raises:
        TypeError: a value that is not plain (a Column, a Handle, a Lua object, ...).
    """
    if depth > _MAX_DEPTH:
        raise TypeError("nested too deep")
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return (type(value).__name__, value)
    if isinstance(value, np.generic):
        return canon(value.item(), depth)
    if isinstance(value, Curve):
        return ("Curve", value.keys)
    if isinstance(value, Mapping):
        items = [(canon(k, depth + 1), canon(v, depth + 1)) for k, v in value.items()]
        return ("map", tuple(sorted(items, key=repr)))
    if isinstance(value, list | tuple):
        return ("list", tuple(canon(v, depth + 1) for v in value))
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tobytes())
    raise TypeError(f"{type(value).__name__} is not a plain value")


class _Convert:
    """The conversions of a ``LuaState`` (a mixin of it): Python values to its Lua
    values and its call results back, over its tables (``_table``, ``_helpers``,
    ``_buffer_table``, ``_column_for`` and its handle maps)."""

    def _to_lua(self, value: Any, where: str, opts: ArgOptions, depth: int = 0) -> Any:
        """Returns ``value`` as a Lua value of this state.

        Args:
            value: the Python value.
            where: the name of the value in messages ("args[2]").
            opts: device, curves and time.
            depth: nesting depth (refused past 64).

        Returns:
            A value lupa passes to Lua as it stands (a number, string, bool, None or Lua object).

        Raises:
            BindingError: a value of a type no Lua value stands for, a released Handle, a Lua
                value of another state, or nesting deeper than 64 (a cycle).
        """
        if depth > _MAX_DEPTH:
            raise BindingError(
                f"{where}: expected values nested at most {_MAX_DEPTH} deep, got deeper"
            )
        if value is None or isinstance(value, bool | float | str | bytes):
            return value
        if isinstance(value, int):
            return _integer(value, where)
        if isinstance(value, np.generic):
            return _numpy_scalar(value, where)
        if isinstance(value, Column):
            return self._buffer_table(value, opts.node)
        if isinstance(value, Curve):
            if not opts.curves:
                return self._to_lua(value.at(opts.time), where, opts, depth + 1)
            keys = [
                self._table([t, self._to_lua(v, where, opts, depth + 1)]) for t, v in value.keys
            ]
            return self._helpers.make_curve(self._table(keys))
        if isinstance(value, Handle):
            if value.released:
                raise BindingError(f"{where}: expected a Handle not yet released, got {value!r}")
            return self._handle_table(value)
        if isinstance(value, Geometry):
            return self._geometry_to_lua(value, where, opts, depth)
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                if not isinstance(k, str | int | float) or isinstance(k, bool):
                    raise BindingError(f"{where}: expected string or number keys, got key {k!r}")
                if isinstance(k, int):
                    _integer(k, f"{where} key")
                out[k] = self._to_lua(v, f"{where}[{k!r}]", opts, depth + 1)
            return self._table(out)
        if isinstance(value, list | tuple):
            return self._table(
                [self._to_lua(v, f"{where}[{i}]", opts, depth + 1) for i, v in enumerate(value)]
            )
        if isinstance(value, np.ndarray):
            return self._to_lua(value.tolist(), where, opts, depth)
        if lua_type(value) is not None:
            return value
        raise LuaArgError(
            f"{where}: expected {_ACCEPTED}, got {type(value).__name__} {_short(value)}"
        )

    def _geometry_to_lua(self, geo: Geometry, where: str, opts: ArgOptions, depth: int) -> Any:
        from ..launch import default_context

        classes = {}
        for cname, dom in geo.classes.items():
            entries: dict[str, Any] = {}
            count = dom.count
            if opts.device:
                for name, col in dom.items():
                    if isinstance(col, Column):
                        entries[name] = self._buffer_table(col, opts.node)
                if isinstance(count, LiveCount):
                    entries.setdefault(
                        "count", self._buffer_table(Column(count.words, "UInt"), opts.node)
                    )
                    entries.setdefault("capacity", count.capacity)
                else:
                    entries.setdefault("count", int(count))
            else:
                n = None
                if isinstance(count, LiveCount):
                    ctx = default_context(count.device)
                    n = min(int(ctx.readback(count.words)[0]), count.capacity)
                for name, col in dom.items():
                    if not isinstance(col, Column):
                        continue
                    ctx = default_context(col.device)
                    live = n
                    if col.live is not None and col.live is not count:
                        live = min(int(ctx.readback(col.live.words)[0]), col.live.capacity)
                    data = ctx.readback(col.data)
                    if live is not None:
                        data = data[:live]
                    if col.type == "String" and col.table is not None:
                        table = col.table
                        entries[name] = self._table([table[int(i)] for i in data.tolist()])
                    elif col.lanes == 1:
                        entries[name] = self._table(data.tolist())
                    else:
                        keys = _RGBA if col.type == "Color" else _XYZW
                        entries[name] = self._table(
                            [self._table(dict(zip(keys, row))) for row in data.tolist()]
                        )
                    if n is None:
                        n = len(data)
                entries.setdefault("count", n if n is not None else int(count))
            classes[cname] = self._table(entries)
        return self._table(classes)

    def _check_returns(
        self,
        results: tuple,
        returns: Any,
        what: str,
        node: str | None,
        over: Callable[[], Exception | None] | None = None,
    ) -> list:
        """Checks a call's results (values of this state) against ``returns`` and returns
        them as Python values.

        Args:
            results: the raw results, in order.
            returns: the type name of each result, or None to take any results as they are.
            what: the op named in messages ("cpu.call").
            node: the node named in messages (and whose BufferRefs the results may hold).
            over: called every 4096 values converted; answers the error to raise once the
                call's CPU-time budget is spent, or None.

        Returns:
            A list of Python values, one per result.

        Raises:
            LuaReturnError: another count of results than ``returns`` states, or a result of
                another type (naming its 1-based position, the type expected and the type got).
        """
        where = _Where(what, node, over)
        try:
            if returns is None:
                return [self._plain(v, where, i + 1) for i, v in enumerate(results)]
            if len(results) != len(returns):
                got = ", ".join(self._kind_of(v) for v in results) or "nothing"
                raise LuaReturnError(
                    f"{what} in node {_node(node)}: expected {len(returns)} result(s) "
                    f"({', '.join(returns) or 'none'}), got {len(results)} ({got})"
                )
            return [
                self._expect(v, t, where, i + 1) for i, (v, t) in enumerate(zip(results, returns))
            ]
        except UnicodeDecodeError as e:
            raise LuaReturnError(
                f"{what} in node {_node(node)}: expected strings of UTF-8 text, got bytes "
                f"that are not ({e.reason} at byte {e.start})"
            ) from None

    def _kind_of(self, v: Any, where: _Where | None = None) -> str:
        """Returns the type name of a Lua value as messages state it (Number, List, ...)."""
        if v is None:
            return "Nil"
        if isinstance(v, bool):
            return "Bool"
        if isinstance(v, int | float):
            return "Number"
        if isinstance(v, str | bytes):
            return "String"
        lt = lua_type(v)
        if type(v).__name__ in _THREAD_CLASSES:
            return "Thread"
        if lt == "table":
            if self._handle_info(v) is not None:
                return "Handle"
            if self._buffer_id(v) is not None:
                return "BufferRef"
            return "List" if _sequence(v, where) is not None else "Record"
        return {"function": "Function", "thread": "Thread", "userdata": "Userdata"}.get(
            lt, type(v).__name__
        )

    def _buffer_id(self, t: Any) -> int | str | None:
        buf = self._helpers.rawget(t, "buffer")
        typ = self._helpers.rawget(t, "type")
        if isinstance(buf, int | str) and not isinstance(buf, bool) and isinstance(typ, str):
            return buf
        return None

    def _expect(self, v: Any, expected: str, where: _Where, pos: int) -> Any:
        got = self._kind_of(v, where)
        if expected == "Number":
            if got == "Number":
                return v
        elif expected == "String":
            if isinstance(v, str):
                return v
        elif expected == "Bool":
            if got == "Bool":
                return v
        elif expected == "Function":
            if got == "Function":
                return v
        elif expected == "List":
            if lua_type(v) == "table" and got in ("List", "Record"):
                seq = _sequence(v, where)
                if seq is None:
                    raise where.fail(pos, "List", "Record", "a table with keys other than 1..n")
                return [self._plain(x, where, pos) for x in seq]
        elif expected == "Record":
            if got in ("Record", "List"):
                return self._record(v, where, pos)
        elif expected in ("Column", "BufferRef"):
            if got == "BufferRef":
                ref = self._buffer_ref(v, where, pos, expected)
                return ref.column if expected == "Column" else ref
        elif expected == "Handle":
            if got == "Handle":
                return self._handle(v, where, pos)
        elif expected in _VEC_LANES:
            if got in ("List", "Record"):
                return _vector(v, expected, where, pos)
        elif expected == "Geometry":
            if got in ("Record", "List"):
                return self._geometry(v, where, pos)
        return_detail = _short(v) if got in ("Number", "String", "Bool") else ""
        raise where.fail(pos, expected, got, return_detail)

    def _plain(self, v: Any, where: _Where, pos: int, depth: int = 0) -> Any:
        """Converts a Lua value without a stated type: tables become lists or Records,
        BufferRefs their Columns, handles Handles; functions stay Lua functions."""
        if depth > _MAX_DEPTH:
            raise where.fail(pos, f"values nested at most {_MAX_DEPTH} deep", "deeper (a cycle?)")
        where.tick()
        if lua_type(v) != "table":
            return v
        kind = self._kind_of(v, where)
        if kind == "Handle":
            return self._handle(v, where, pos)
        if kind == "BufferRef":
            return self._buffer_ref(v, where, pos, "Column").column
        seq = _sequence(v, where)
        if seq is not None:
            return [self._plain(x, where, pos, depth + 1) for x in seq]
        return self._record(v, where, pos, depth)

    def _record(self, v: Any, where: _Where, pos: int, depth: int = 0) -> Record:
        out = Record()
        for k, x in _items(v, where).items():
            out[k] = self._plain(x, where, pos, depth + 1)
        return out

    def _buffer_ref(self, t: Any, where: _Where, pos: int, expected: str) -> BufferRef:
        buf = self._buffer_id(t)
        col = self._column_for(buf, where.node) if isinstance(buf, str) else None
        if col is None:
            raise where.fail(
                pos,
                expected,
                "BufferRef",
                f"buffer {buf!r} is not a column this node was given, or it was let go",
            )
        return BufferRef(buf, col.type, _count(col), col.lanes, col.element(), col)

    def _handle(self, t: Any, where: _Where, pos: int) -> Handle:
        kind, hid, value = self._handle_info(t)
        h = self._handle_from_lua(kind, hid, value, t)
        if h is None:
            raise where.fail(pos, "Handle", "Handle", f"handle {hid} was let go on the Python side")
        return h

    def _geometry(self, t: Any, where: _Where, pos: int) -> Geometry:
        classes = {}
        for cname, ct in _items(t, where).items():
            if lua_type(ct) != "table":
                raise where.fail(
                    pos,
                    "Geometry (a table of classes of BufferRefs)",
                    "a table",
                    f"class {cname!r} is a {self._kind_of(ct)}",
                )
            cols = {}
            for name, v in _items(ct, where).items():
                if name in ("count", "capacity"):
                    continue
                if self._kind_of(v) != "BufferRef":
                    raise where.fail(
                        pos,
                        "Geometry (a table of classes of BufferRefs)",
                        "a table",
                        f"class {cname!r} entry {name!r} is a {self._kind_of(v)}",
                    )
                cols[name] = self._buffer_ref(v, where, pos, "Geometry").column
            classes[str(cname)] = Domain(cols)
        return Geometry(**classes)
