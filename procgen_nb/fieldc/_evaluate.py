"""fieldc.evaluate: a Field in one fused dispatch over a domain; and its readback form."""

from __future__ import annotations

from typing import Any

import warp as wp

from ..columns import Column
from ..counts import resolve_domain
from ..elements import ELEMENTS
from ..errors import BindingError, UploadError
from ..launch import default_context
from ._codegen import WP_DTYPES, ensure_built, module_for, shape_key
from ._expr import Field, as_field, uniform_value

_COLUMN_TYPES = {n: e.column for n, e in ELEMENTS.items()}


def evaluate(value: Any, domain: Any = None, ctx: Any = None, device: str | None = None) -> Column:
    """Evaluates a Field over a domain in one dispatch; returns the Column it lands in.

    Args:
        value: a Field (or a Column or number, taken as one).
        domain: a Number, a Column, a LiveCount or any live-count form of ``device.kernel``;
            None takes the count of the first column the Field reads. Over a live count the
            dispatch covers the capacity, slots at or past the count hold 0, and the
            Column carries the count.
        ctx: the LaunchContext (default: the device's shared one).
        device: the device when no column or context names one.

    Returns:
        A Column of the Field's element (Float, Int, UInt, Vec2, Vec3, Vec4).

    Raises:
        BindingError: no domain for a Field that reads no column; columns on other devices.
    """
    field = as_field(value)
    shape, cols, consts = shape_key(field)
    if domain is None:
        if not cols:
            raise BindingError(
                "fieldc.evaluate domain: expected a domain for a Field that reads no column, "
                "got None"
            )
        domain = cols[0].count
    if ctx is None:
        dev = device or (cols[0].device if cols else None)
        ctx = default_context(dev)
    for c in cols:
        if c.device != ctx.device:
            raise BindingError(
                f"fieldc.evaluate: expected columns on {ctx.device}, got one on {c.device}"
            )
    dom = resolve_domain(domain, ctx)
    mod = module_for(shape, [_element(c) for c in cols], [f.element for f in consts])
    ensure_built(mod, ctx.device)
    el = field.element
    out = ctx.zeros(dom.n, WP_DTYPES[el])
    if dom.live is not None:
        words = dom.live.words
    else:
        words = ctx.zeros(1, wp.uint32)
        if dom.n:
            ctx.fill(words, dom.n)
    args: list[Any] = [c.data for c in cols] + [words, out]
    args += [uniform_value(f.payload, f.element) for f in consts]
    ctx.launch(mod.field_kernel, dom.n, args)
    return Column(out, _COLUMN_TYPES[el], dom.live)


def _element(c: Column) -> str:
    from ._expr import _COLUMN_ELEMENTS

    return _COLUMN_ELEMENTS[c.type]


def evaluate_for_readback(value: Field, key: str) -> Column:
    """Evaluates a Field over the elements of the (first) column it reads, for a readback.

    Raises:
        UploadError: a Field that reads no column (it has no length), naming the forms to use.
    """
    field = as_field(value)
    cols = field.columns()
    if not cols:
        raise UploadError(
            f"transfer.readback columns[{key!r}]: expected a Field that reads a column "
            f"(fieldc.col(column) ...), got {field.text()}, which reads none and has no "
            "length; evaluate it over a domain first: fieldc.evaluate(field, domain=n)"
        )
    return evaluate(field, domain=cols[0].count)
