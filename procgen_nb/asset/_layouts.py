"""The packed layout of columns bindings a kernel reads by name (``NAME_col_<column>``).

A columns binding packs a table of Columns into one ``[rows, n]`` f32 buffer: in the
binding's ``order``, or in sorted-name order where it states none, one row per lane. A
kernel that reads its columns by ``NAME_col_<column>`` needs no ``order``: its variant is
built for the layout of the table bound (one variant per layout, cached).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..columns import Column
from ..errors import BindingError
from ._preprocess import Layout
from ._variants import Variant


def columns_table(b: Any, value: Any, fallback: Mapping[str, Any]) -> Any:
    """The table a columns binding takes: the one bound, else the fallback's Columns."""
    if value is not None:
        return value
    value = {k: v for k, v in fallback.items() if isinstance(v, Column)}
    if b.order:
        value = {k: v for k, v in value.items() if k in b.order}
    return value


def column_layouts(
    variant: Variant,
    bind: Mapping[str, Any],
    fallback: Mapping[str, Any],
    where: Callable[[str], str],
) -> dict[str, Layout]:
    """The packed layout of each columns binding the kernel reads by name.

    Raises:
        BindingError: a table that lacks a column the kernel reads as NAME_col_<column>.
    """
    out: dict[str, Layout] = {}
    for bname, reads in variant.by_name.items():
        b = variant.bindings.get(bname)
        if b is None:
            continue
        table = columns_table(b, bind.get(bname), fallback)
        if not isinstance(table, Mapping):
            continue  # pack_columns refuses it, naming the binding
        names = list(b.order) if b.order else sorted(table)
        missing = sorted(reads - set(names))
        if missing:
            raise BindingError(
                f"{where(bname)}: expected the columns the kernel reads by name "
                f"({', '.join(f'{bname}_col_{m}' for m in missing)}), got a table of "
                f"{sorted(table)}"
            )
        out[bname] = tuple(
            (n, table[n].lanes if isinstance(table[n], Column) else 1) for n in names if n in table
        )
    return out
