"""transfer.upload and transfer.readback: CPU values to device columns, and back."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..columns import (
    ELEMENT_TYPES,
    Column,
    Domain,
    Geometry,
    LiveCount,
    Part,
    Record,
    column_from_numpy,
)
from ..counts import as_live_count
from ..device import get_device
from ..elements import COLUMN_TYPES, WORD_RANGES, XYZW
from ..errors import UploadError
from ..launch import default_context
from ._op import current_cook, op

_TYPED = tuple(ELEMENT_TYPES)
#: the lanes a readback names a vector's elements by (the 0.1 interface's {x,y,z,w})
_LANES = {n: XYZW[: t.lanes] for n, t in COLUMN_TYPES.items() if t.lanes > 1}


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_num(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _lua_table(value: Any) -> Any:
    """A Lua table (lupa) as a dict, or a list for a sequence table; any other value as is."""
    if not type(value).__module__.startswith("lupa") or not callable(getattr(value, "items", None)):
        return value
    items = dict(value.items())
    n = len(items)
    if n and all(isinstance(k, int) and not isinstance(k, bool) for k in items):
        if set(items) == set(range(1, n + 1)):
            return [_lua_table(items[i]) for i in range(1, n + 1)]
    return {k: _lua_table(v) for k, v in items.items()}


def _vec_type(items: Sequence[Mapping[str, Any]], key: str) -> str:
    keys = set(items[0])
    for it in items:
        if not isinstance(it, Mapping) or set(it) != keys:
            raise UploadError(
                f"values[{key!r}]: expected a list of {{x,y[,z[,w]]}} tables with the same keys, got {_short(it)}"
            )
    for name, t in COLUMN_TYPES.items():
        if t.lanes > 1 and keys == set(t.lane_names):
            return name
    raise UploadError(
        f"values[{key!r}]: expected keys x,y[,z[,w]], got {sorted(keys)} (a Color takes r,g,b,a)"
    )


def _lane_rows(items: Sequence[Any], t: str, key: str) -> list[Any]:
    """The lanes of each element of a vector type, each table's taken by name.

    A table must name exactly one of the type's lane sets (``{x, y, z}`` for a Vec3,
    ``{r, g, b, a}`` or ``{x, y, z, w}`` for a Color); a list of numbers is taken as it is.

    Raises:
        UploadError: a table missing a lane or naming one the type does not have, naming
            the element, the lanes given and the lanes accepted.
    """
    ct = COLUMN_TYPES[t]
    sets = ct.lane_sets()
    rows = []
    for i, item in enumerate(items):
        item = _lua_table(item)
        if not isinstance(item, Mapping):
            rows.append(item)
            continue
        keys = set(item)
        lanes = next((s for s in sets if keys == set(s)), None)
        if lanes is None:
            best = min(sets, key=lambda s: len(keys ^ set(s)))
            missing = [c for c in best if c not in keys]
            unknown = sorted(map(str, keys - set(best)))
            what = "; ".join(
                part
                for part in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"unknown {', '.join(unknown)}" if unknown else "",
                )
                if part
            )
            accepted = " or ".join("{" + ", ".join(s) + "}" for s in sets)
            raise UploadError(
                f"values[{key!r}].values[{i}]: expected the lanes {accepted} of a {t}, got "
                f"{{{', '.join(sorted(map(str, keys)))}}} ({what})"
            )
        rows.append([item[c] for c in lanes])
    return rows


_WORD_RANGE = {t: WORD_RANGES[COLUMN_TYPES[t].word] for t in ("Int", "UInt")}


def _check_words(arr: np.ndarray, t: str, key: str) -> None:
    """Refuses integers a 32-bit word of type ``t`` cannot hold, naming the first one."""
    lo, hi = _WORD_RANGE[t]
    if arr.size == 0 or (np.iinfo(arr.dtype).min >= lo and np.iinfo(arr.dtype).max <= hi):
        return
    bad = np.flatnonzero((arr < lo) | (arr > hi))
    if bad.size:
        i = int(bad[0])
        raise UploadError(
            f"values[{key!r}]: expected {t} numbers in [{lo}, {hi}] (32-bit words), got "
            f"{int(arr[i])} at index {i} (a {arr.dtype} array)"
        )


def _string_column(values: Sequence[Any], key: str, device: str) -> Column:
    if not all(isinstance(v, str) for v in values):
        raise UploadError(f"values[{key!r}]: expected a list of text, got {_short(values)}")
    table: list[str] = []
    index: dict[str, int] = {}
    words = []
    for v in values:
        if v not in index:
            index[v] = len(table)
            table.append(v)
        words.append(index[v])
    col = column_from_numpy(np.asarray(words, np.int32), "String", device)
    col.table = table
    return col


def _typed(value: Mapping[str, Any], key: str, device: str) -> Column:
    t = value.get("type")
    if t not in _TYPED:
        raise UploadError(f"values[{key!r}].type: expected one of {list(_TYPED)}, got {t!r}")
    if set(value) - {"type", "values"}:
        raise UploadError(f"values[{key!r}]: expected only type and values, got {sorted(value)}")
    vals = _lua_table(value.get("values"))
    if not isinstance(vals, Sequence | np.ndarray) or isinstance(vals, str):
        raise UploadError(f"values[{key!r}].values: expected a list, got {_short(vals)}")
    if t == "String":
        return _string_column(list(vals), key, device)
    lanes = ELEMENT_TYPES[t][1]
    if lanes > 1:
        vals = _lane_rows(vals, t, key)
    try:
        arr = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise UploadError(
            f"values[{key!r}].values: expected numbers for {t}, got {_short(vals)}"
        ) from None
    if lanes > 1 and arr.size and (arr.ndim != 2 or arr.shape[1] != lanes):
        raise UploadError(
            f"values[{key!r}].values: expected {lanes} numbers per element for {t}, got shape {arr.shape}"
        )
    if t in ("Int", "UInt"):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise UploadError(
                f"values[{key!r}].values: expected whole numbers for {t}, got {_short(vals)}"
            )
        lo, hi = _WORD_RANGE[t]
        bad = np.flatnonzero((arr < lo) | (arr > hi)) if arr.size else ()
        if len(bad):
            i = int(bad[0])
            raise UploadError(
                f"values[{key!r}].values: expected {t} numbers in [{lo}, {hi}] (32-bit words), "
                f"got {vals[i]!r} at index {i}"
            )
    return column_from_numpy(arr, t, device)


def _upload_one(value: Any, key: str, device: str) -> Any:
    value = _lua_table(value)
    if isinstance(value, Column):
        return value
    if isinstance(value, bool):
        return column_from_numpy([1.0 if value else 0.0], "Float", device)
    if _is_num(value):
        return column_from_numpy([float(value)], "Float", device)
    if isinstance(value, str):
        return _string_column([value], key, device)
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.ndim == 1:
            return column_from_numpy(value, "Float", device)
        if value.dtype.kind == "i" and value.ndim == 1:
            _check_words(value, "Int", key)
            return column_from_numpy(value, "Int", device)
        if value.dtype.kind == "u" and value.ndim == 1:
            _check_words(value, "UInt", key)
            return column_from_numpy(value, "UInt", device)
        if value.ndim == 2 and value.shape[1] in (2, 3, 4) and value.dtype.kind in "fiu":
            return column_from_numpy(value, f"Vec{value.shape[1]}", device)
        raise UploadError(
            f"values[{key!r}]: expected a 1-D array or an [N, 2..4] array, got shape {value.shape} {value.dtype}"
        )
    if isinstance(value, Mapping):
        if "type" in value:
            return _typed(value, key, device)
        return Record({k: _upload_one(v, f"{key}.{k}", device) for k, v in value.items()})
    if isinstance(value, Sequence):
        items = [_lua_table(v) for v in value]
        if not items:
            return column_from_numpy([], "Float", device)
        if all(_is_num(v) for v in items):
            try:
                nums = np.asarray(items, np.float64)
            except OverflowError:  # an int past float64: refused, named, below
                nums = np.asarray(items, object)
            try:
                return column_from_numpy(nums, "Float", device)
            except UploadError as e:
                raise UploadError(f"values[{key!r}]: {e}") from None
        if all(isinstance(v, str) for v in items):
            return _string_column(items, key, device)
        if all(isinstance(v, Mapping) for v in items):
            t = _vec_type(items, key)
            rows = [[it[c] for c in COLUMN_TYPES[t].lane_names] for it in items]
            if not all(_is_num(x) for r in rows for x in r):
                raise UploadError(
                    f"values[{key!r}]: expected numbers in every {{x,y,...}}, got {_short(items)}"
                )
            return column_from_numpy(np.asarray(rows, np.float64), t, device)
        raise UploadError(
            f"values[{key!r}]: expected a list of numbers, of text or of {{x,y,z}} tables, got {_short(items)}"
        )
    raise UploadError(
        f"values[{key!r}]: expected a Number, a list, text, {{type=, values=}}, a table or a Column, "
        f"got {type(value).__name__}"
    )


@op(
    "transfer.upload",
    runs="cpu_to_gpu",
    inputs=("values",),
    params=("device",),
    outputs=("columns",),
)
def upload(values: Mapping[str, Any] | None = None, device: str | None = None) -> Record:
    """Turns CPU numbers, lists and tables into device columns.

    Args:
        values: a Record: a Number becomes a one-element Float column, a list of numbers a
            Float column, a list of {x,y[,z[,w]]} a Vec column, text or a list of text a
            String column, ``{type=, values=}`` a typed column, a table a table of columns,
            a Column stays as it is. NumPy arrays are taken by dtype and shape.
        device: the device (default: procgen_nb's).

    Returns:
        Record with ``columns`` holding the columns under the keys ``values`` gave them.

    Raises:
        UploadError: naming the key and the value refused.

    Example:
        >>> import numpy as np
        >>> from procgen_nb import ops
        >>> cols = ops.transfer.upload(values={"f": [1.0, 2.0], "P": np.zeros((3, 2), np.float32)})
        >>> cols["columns"]["f"]
        Column(Float, 2 slots, device='cpu')
        >>> cols["columns"]["P"].type, len(cols["columns"]["P"])
        ('Vec2', 3)
    """
    values = _lua_table(values)
    if not isinstance(values, Mapping):
        raise UploadError(
            f"transfer.upload values: expected a Record of named values, got {_short(values)}"
        )
    device = device or get_device()
    try:
        return Record(columns=Record({k: _upload_one(v, k, device) for k, v in values.items()}))
    except RecursionError:  # tables in tables past Python's stack (issue 21)
        raise UploadError(
            "transfer.upload values: expected tables nested a few hundred deep at most, got "
            "deeper (a cycle?)"
        ) from None


def _read_column(col: Column, key: str, limit: int | None = None) -> list[Any]:
    ctx = default_context(col.device)
    n = len(col)
    if col.live is not None:
        n = min(int(ctx.readback(col.live.words)[0]), len(col))
    if limit is not None:
        n = min(n, limit)
    data = (
        ctx.readback(col.data[:n])
        if n
        else np.zeros((0,) + (() if col.lanes == 1 else (col.lanes,)))
    )
    if col.type == "String":
        table = col.table or []
        return [table[i] if 0 <= i < len(table) else None for i in data.tolist()]
    if col.lanes == 1:
        return data.tolist()
    lanes = _LANES[col.type]
    return [{c: float(x) for c, x in zip(lanes, row)} for row in data.tolist()]


def _read_class(dom: Domain, key: str) -> dict[str, Any]:
    """The copy of a Geometry's class: its count, and each column's first ``count`` values."""
    n = _read_one(dom.count, f"{key}.count")
    out: dict[str, Any] = {"count": n}
    for name, col in dom.items():
        out[name] = (
            _read_one(col, f"{key}.{name}")
            if not isinstance(col, Column)
            else (_read_column(col, f"{key}.{name}", n))
        )
    return out


def _read_one(value: Any, key: str) -> Any:
    if value is None or isinstance(value, bool | str) or _is_num(value):
        return value
    if hasattr(value, "_procgen_field_"):
        from .. import fieldc

        return _read_one(fieldc.evaluate_for_readback(value, key), key)
    if hasattr(value, "_as_live_count"):  # count arithmetic (procgen_nb.counts.Count)
        value = value._as_live_count(None)
    if isinstance(value, LiveCount):
        return int(default_context(value.device).readback(value.words)[0])
    if isinstance(value, Column):
        return _read_column(value, key)
    if isinstance(value, Geometry | Part):
        return {cls: _read_class(dom, f"{key}.{cls}") for cls, dom in value.classes.items()}
    if isinstance(value, Mapping):
        live = as_live_count(value, key) if set(value) == {"count", "capacity"} else None
        if live is not None:
            return _read_one(live, key)
        return {k: _read_one(v, f"{key}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_read_one(v, f"{key}[{i}]") for i, v in enumerate(value)]
    raise UploadError(
        f"transfer.readback columns[{key!r}]: expected a Column, a live count, a plain value, a Field, "
        f"a Geometry, a Part or a table of them, got {type(value).__name__}"
    )


@op(
    "transfer.readback",
    runs="gpu_to_cpu",
    inputs=("columns",),
    params=("as_numpy",),
    outputs=("values",),
)
def readback(columns: Mapping[str, Any] | None = None, as_numpy: bool = False) -> Record:
    """Turns device columns and live counts into CPU values; a wait point of the cook.

    Args:
        columns: a Record of Columns (a list of numbers; a vector column a list of
            {x,y[,z,w]}; a live column its live elements), live counts (a Number), plain
            values (themselves), Fields (evaluated over the column they read), a Geometry
            or a Part of one (the copy holding what its columns held: a table per class
            with its count, each column its first ``count`` values) or tables of them.
        as_numpy: True reads each Column of ``columns`` (and of its tables) as a NumPy
            array instead of a list: ``[n]`` of its element type, ``[n, lanes]`` float32
            for a vector column (its live elements for a live column); String columns
            stay lists of text. ``Column.numpy()`` reads one column the same way.

    Returns:
        Record with ``values`` under the keys ``columns`` gave them.

    Raises:
        UploadError: a value of another kind; a Field that reads no column; an
            ``as_numpy`` that is not True or False.

    Example:
        >>> import numpy as np
        >>> from procgen_nb import ops
        >>> xy = np.array([[0.0, 1.0], [2.0, 3.0]], dtype=np.float32)
        >>> col = ops.transfer.upload(values={"P": xy})["columns"]["P"]
        >>> ops.transfer.readback(columns={"P": col})["values"]["P"]
        [{'x': 0.0, 'y': 1.0}, {'x': 2.0, 'y': 3.0}]
        >>> ops.transfer.readback(columns={"P": col}, as_numpy=True)["values"]["P"]
        array([[0., 1.],
               [2., 3.]], dtype=float32)
    """
    if not isinstance(as_numpy, bool):
        raise UploadError(f"transfer.readback as_numpy: expected True or False, got {as_numpy!r}")
    if not isinstance(columns, Mapping):
        raise UploadError(
            f"transfer.readback columns: expected a Record of columns, got {_short(columns)}"
        )
    scope = current_cook()
    if scope is not None:
        scope.note("wait", f"transfer.readback of {sorted(columns)}")
    read = _read_numpy if as_numpy else _read_one
    return Record(values=Record({k: read(v, k) for k, v in columns.items()}))


def _read_numpy(value: Any, key: str) -> Any:
    """``_read_one``, with a (non-String) Column read as a NumPy array of its live slots."""
    if isinstance(value, Column) and value.type != "String":
        return value.numpy(live=True)
    if isinstance(value, Mapping) and not (set(value) == {"count", "capacity"}):
        return {k: _read_numpy(v, f"{key}.{k}") for k, v in value.items()}
    return _read_one(value, key)
