"""device.kernel: runs a kernel asset over a domain and returns what it wrote as columns."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import warp as wp

from .. import _cast
from ..asset import KernelRef
from ..asset._layouts import column_layouts, columns_table
from ..asset._variants import WP_ELEMENTS, Variant
from ..columns import BINDING_ELEMENTS, Column, Domain, LiveCount, Record, Texture
from ..counts import ResolvedDomain, as_live_count, resolve_domain
from ..dynamic import is_dynamic, key_of, leaves, mark_host, peek
from ..errors import BindingError
from ..launch import LaunchContext, default_context
from ._op import current_cook, op
from ._uniforms import _check_uniforms, _describe, _is_number, _spread_uniforms

_AUTO_UNIFORMS = ("count", "time", "frame")
#: the most slots a dispatch covers: kernels index their slots with i32
MAX_DOMAIN = 2**31 - 1


def _as_column(value: Any, where: str) -> Column:
    if isinstance(value, Column):
        return value
    if isinstance(value, wp.array):
        return Column(value)
    if hasattr(value, "_procgen_field_"):
        raise BindingError(f"{where}: a Field is evaluated by the field compiler; got {value!r}")
    raise BindingError(f"{where}: expected a Column, got {_describe(value)}")


class _Call:
    """The state of one device.kernel call while its arguments are assembled."""

    def __init__(self, ref: KernelRef, variant: Variant, ctx: LaunchContext, dom: ResolvedDomain):
        self.ref = ref
        self.v = variant
        self.ctx = ctx
        self.dom = dom
        self.name = ref.identity
        self.args: dict[str, Any] = {}
        self.uniforms: dict[str, Any] = {}
        self.outputs: dict[str, Column] = {}
        self.counts: dict[str, LiveCount] = {}

    def where(self, binding: str) -> str:
        return f"{self.name}: binding {binding!r}"

    def check_length(self, bname: str, value: Any) -> None:
        """Refuses a Column too short for what the kernel reads (or writes) of it.

        A read binding holds one element per slot of the domain unless its schema states
        another ``length`` (``any``: the kernel bounds every access by the length itself).
        """
        if isinstance(value, Column):
            have = len(value)
        elif isinstance(value, wp.array):
            have = value.shape[0]
        else:
            return  # a Field is evaluated over the domain; other values are refused later
        want = self.v.bindings[bname].min_length(self.dom.n)
        if want is None or have >= want:
            return
        if self.v.bindings[bname].length_rule() == "domain":
            what = (
                f"the capacity {self.dom.n} of the live-count domain"
                if self.dom.live is not None
                else f"the domain of {self.dom.n}"
            )
        else:
            what = f"the binding's length {want}"
        raise BindingError(
            f"{self.where(bname)}: expected a Column of at least {want} elements ({what}), "
            f"got one of {have}"
        )

    # -- inputs ---------------------------------------------------------------------
    def read_column(self, bname: str, value: Any) -> wp.array:
        """Returns the array a read (or in-place) binding gets, cast by value when needed."""
        want = self.v.elements[bname]
        if hasattr(value, "_procgen_field_"):
            from .. import fieldc  # the field compiler evaluates a Field in one dispatch

            value = fieldc.evaluate(value, domain=self.dom.live or self.dom.n, ctx=self.ctx)
        col = _as_column(value, self.where(bname))
        if col.device != self.ctx.device:
            raise BindingError(
                f"{self.where(bname)}: expected a Column on {self.ctx.device}, got one on {col.device}"
            )
        have_dtype = col.data.dtype
        if have_dtype == WP_ELEMENTS[want]:
            return col.data
        have = col.element() if col.lanes == 1 else col.type
        if col.lanes == 1 and want in ("f32", "i32", "u32") and _cast.can_cast(have, want):
            return _cast.cast(self.ctx, col.data, have, want)
        raise BindingError(
            f"{self.where(bname)}: expected a column of {want} elements "
            f"({BINDING_ELEMENTS.get(want, want)}), got {col.type}"
        )

    def pack_columns(self, bname: str, value: Any) -> wp.array:
        """Packs a table of columns into one [lanes, n] f32 buffer (by value)."""
        b = self.v.bindings[bname]
        if isinstance(value, Domain):
            table = dict(value)
        elif isinstance(value, Mapping):
            table = dict(value)
        else:
            raise BindingError(
                f"{self.where(bname)}: expected a table of Columns, got {_describe(value)}"
            )
        names = list(b.order) if b.order else sorted(table)
        if b.order and set(table) != set(b.order):
            raise BindingError(
                f"{self.where(bname)}: expected exactly the columns {list(b.order)}, got {sorted(table)}"
            )
        cols = [_as_column(table[n], f"{self.where(bname)} column {n!r}") for n in names]
        # at least one slot per slot of the domain: a shorter column reads 0 past its end
        n = max([self.dom.n] + [len(c) for c in cols])
        # packing is a host-side layout step of columns already on the device: one copy per lane
        lanes = sum(c.lanes for c in cols)
        packed = self.ctx.zeros((lanes, n), wp.float32)
        row = 0
        for c in cols:
            if len(c) == 0:  # an empty column leaves its rows zero
                row += c.lanes
                continue
            data = c.data
            if c.element() != "f32":
                data = _cast.cast(self.ctx, data, c.element(), "f32")
            flat = data if c.lanes == 1 else data.view(wp.float32).reshape((len(c), c.lanes))
            if c.lanes == 1:
                self.ctx.copy(packed[row], flat, 0, 0, len(c))
            else:
                for lane in range(c.lanes):
                    self.ctx.launch(_lane_copy, len(c), [flat, lane, packed, row + lane])
            row += c.lanes
        return packed

    # -- outputs --------------------------------------------------------------------
    def size_of(
        self, bname: str, spec: int | str | None, bind: Mapping[str, Any]
    ) -> tuple[int, LiveCount | None]:
        """Returns (slots, live count) for an output sized by ``spec``."""
        if spec is None or spec == "domain":
            return self.dom.n, self.dom.live
        if isinstance(spec, int):
            return spec, None
        if spec in self.uniforms:
            return _slots(_read_size(self.uniforms[spec]), f"{self.name}: uniform {spec!r}"), None
        if spec in bind:
            value = bind[spec]
            if _is_number(value):
                return _slots(_read_size(value), f"{self.name}: bind {spec!r}"), None
            if isinstance(value, Mapping) and set(value) == {"live"}:
                live = as_live_count(value["live"], f"{self.name}: bind {spec!r}.live", self.ctx)
                if live is None:
                    raise BindingError(
                        f"{self.name}: bind {spec!r}.live: expected a count Column carrying its "
                        f"capacity, got {_describe(value['live'])}"
                    )
                return live.capacity, live
            raise BindingError(
                f"{self.name}: bind {spec!r}: expected a Number or {{live = <count>}} sizing "
                f"{bname!r}, got {_describe(value)}"
            )
        raise BindingError(
            f"{self.name}: output {bname!r} is sized by {spec!r}: expected a bind or uniform of "
            "that name, got none"
        )


@wp.kernel
def _lane_copy(
    src: wp.array2d(dtype=wp.float32), lane: int, dst: wp.array2d(dtype=wp.float32), row: int
):
    i = wp.tid()
    dst[row, i] = src[i, lane]


def _resolve_ref(kernel: Any) -> KernelRef:
    if isinstance(kernel, KernelRef):
        return kernel
    raise BindingError(
        "device.kernel kernel: expected a reference from asset.resolve('<identity>', "
        f"'computeShader') (a name is refused), got {_describe(kernel)}"
    )


@op(
    "device.kernel",
    runs="gpu",
    inputs=("bind", "domain", "uniforms", "step", "columns"),
    params=("kernel", "specialize", "device"),
    outputs=("columns",),
)
def kernel(
    kernel: Any = None,
    specialize: Mapping[str, Any] | None = None,
    bind: Mapping[str, Any] | None = None,
    domain: Any = None,
    uniforms: Mapping[str, Any] | None = None,
    step: Mapping[str, Any] | None = None,
    columns: Any = None,
    device: str | None = None,
) -> Record:
    """Runs a kernel asset over a domain; returns ``Record(columns=Record(...))``.

    Args:
        kernel: a KernelRef from ``asset.resolve("<identity>", "computeShader")``.
        specialize: one option for each of the kernel's specialize keys (defaults: first).
        bind: binding name -> Column (buffer), table of Columns (columns), Texture, Field,
            or a Number / ``{live = count}`` for a name that sizes an output;
            ``bind["columns"]`` may be a domain whose columns fill unnamed read bindings.
        domain: a Number, a Column, a live count or ``{count=, capacity=}``.
        uniforms: the kernel's params by name (Number, Bool, or a Vec spread over _x.._w).
        step: numbers taken where the kernel declares a param of the same name.
        columns: a table of Columns or a Geometry class filling unbound read bindings.
        device: the device (default: the columns', else procgen_nb's).

    Returns:
        Record with ``columns``: every written binding as a Column by name, and
        ``<name>_count`` (a LiveCount) for each appended output.

    Raises:
        BindingError: a bare kernel name, an unknown specialize option, uniform or binding,
            a missing binding, a column of the wrong element, a bad domain.

    Example:
        Flag the points inside the unit disk, then compact them: the kept count stays on the
        device as a live count until it is read:

        >>> import numpy as np
        >>> from procgen_nb import asset, ops
        >>> pts = np.array([[0.1, 0.2], [2.0, 0.0], [0.0, -0.5]], np.float32)
        >>> col = ops.transfer.upload(values={"P": pts})["columns"]["P"]
        >>> flags = ops.device.kernel(
        ...     kernel=asset.resolve("procgen/inside", "computeShader"),
        ...     specialize={"SHAPE": "disk"},
        ...     bind={"points": col},
        ...     domain=col,
        ...     uniforms={"center": (0.0, 0.0), "radius": 1.0},
        ... )["columns"]["flags"]
        >>> flags.numpy().tolist()
        [1, 0, 1]
        >>> kept = ops.device.kernel(
        ...     kernel=asset.resolve("procgen/compact", "computeShader"), bind={"flags": flags}, domain=col
        ... )["columns"]
        >>> ops.transfer.readback(columns={"n": kept["indices_count"], "i": kept["indices"]})["values"]
        Record({'n': 2, 'i': [0, 2]})
    """
    ref = _resolve_ref(kernel)
    bind = dict(bind or {})
    if device is None:
        device = _first_device(bind, columns, domain)
    ctx = default_context(device)
    if domain is None:
        domain = _implicit_domain(ref, bind, columns)
    dom = resolve_domain(domain, ctx)
    if dom.n > MAX_DOMAIN:
        raise BindingError(
            f"{ref.identity}: domain: expected at most {MAX_DOMAIN} slots, got {dom.n}"
        )
    spec_given = dict(specialize or {})
    names = ref.spec.option_names()
    scope = current_cook()
    site = scope.kernel_site(ref.identity) if scope is not None else None
    overrides = scope.kernel_overrides.get(site, {}) if scope is not None else {}
    ref.options(spec_given)  # refuse a bad option the node gave before an override hides it
    observed_spec = {k: spec_given.get(k, opts[0]) for k, opts in names.items() if k != "COUNT"}
    for key in observed_spec:
        if key in overrides:
            spec_given[key] = overrides[key]
    if "COUNT" in names and "COUNT" not in spec_given:
        spec_given["COUNT"] = "device" if dom.live is not None else "plain"
    elif "COUNT" in names and spec_given.get("COUNT") == "plain" and dom.live is not None:
        raise BindingError(
            f"{ref.identity}: specialize COUNT: expected 'device' over a live count domain, got 'plain'"
        )
    variant = ref.variant(spec_given)
    call = _Call(ref, variant, ctx, dom)

    # uniforms: given ones must be declared; step and auto names only where declared
    given = _spread_uniforms(dict(uniforms or {}), f"{ref.identity}: uniform")
    if any(k in overrides for k in observed_spec):
        # a graph-level override picked another variant: the node's uniforms that variant
        # does not declare are left out
        given = {k: v for k, v in given.items() if k in variant.uniforms}
    for name, value in given.items():
        if name not in variant.uniforms and name not in _AUTO_UNIFORMS:
            raise BindingError(
                f"{ref.identity}: uniform {name!r}: expected one of {sorted(variant.uniforms)}, got {value!r}"
            )
    for name, value in _spread_uniforms(dict(step or {}), f"{ref.identity}: step").items():
        if name in variant.uniforms:
            given.setdefault(name, value)
    if scope is not None:
        observed = {k: v for k, v in given.items() if k in variant.uniforms}
        # what was bound travels too: a graph offers only the options that can bind it
        bound = (dict(bind), columns)
        scope.kernel_calls.append(
            (site, ref.identity, observed, observed_spec, names, ref.spec, bound)
        )
        given.update({k: v for k, v in overrides.items() if k in variant.uniforms})
    auto = {"zero_n": dom.n, "count": dom.number if dom.number is not None else dom.n}
    if scope is not None:
        auto.update(time=scope.time, frame=scope.frame)
    for name, value in auto.items():
        if name in variant.uniforms:
            given.setdefault(name, value)
    call.uniforms = {k: v for k, v in given.items() if k in variant.uniforms}
    _check_uniforms(call)

    # bind: names must be bindings of the variant, a name sizing an output, or "columns"
    sizing = {
        s
        for b in ref.spec.bindings
        for s in (b.count, b.capacity)
        if isinstance(s, str) and s != "domain"
    }
    domain_cols = None
    if "columns" in bind and "columns" not in variant.bindings:
        domain_cols = bind.pop("columns")
    every = {b.name for b in ref.spec.bindings}
    for name in bind:
        if name not in variant.bindings and name not in sizing:
            why = " in this variant" if name in every else ""
            raise BindingError(
                f"{ref.identity}: bind {name!r}: expected a binding among "
                f"{sorted(variant.bindings)}{why}, got {_describe(bind[name])}"
            )
    fallback: dict[str, Any] = {}
    for source in (columns, domain_cols):
        if source is None:
            continue
        if not isinstance(source, Mapping):
            raise BindingError(
                f"{ref.identity}: columns: expected a table of Columns or a Geometry class, got {_describe(source)}"
            )
        for k, v in dict(source).items():
            fallback.setdefault(k, v)

    if variant.by_name:
        # a kernel reading columns by NAME_col_<column>: the variant with their accessors
        layouts = column_layouts(variant, bind, fallback, call.where)
        variant = call.v = ref.variant(spec_given, layouts)

    # every bound Column is checked against the domain before anything is allocated
    for bname, b in variant.bindings.items():
        if bname == "domain_count" or b.kind != "buffer":
            continue
        value = bind.get(bname)
        if value is None and not b.writes:
            value = fallback.get(bname)
        call.check_length(bname, value)

    for bname, b in variant.bindings.items():
        if bname == "domain_count":
            call.args[bname] = _domain_count_words(ctx, dom)
            continue
        value = bind.get(bname)
        if b.kind == "texture":
            if value is None:
                raise BindingError(f"{call.where(bname)}: expected a Texture, got nothing bound")
            if not isinstance(value, Texture):
                raise BindingError(
                    f"{call.where(bname)}: expected a Texture, got {_describe(value)}"
                )
            call.args[bname] = call.read_column(bname, value.texels)
            for lane, n in (("width", value.width), ("height", value.height)):
                if f"{bname}_{lane}" in variant.uniforms:
                    call.uniforms[f"{bname}_{lane}"] = n
            continue
        if b.kind == "columns":
            value = columns_table(b, value, fallback)
            if not b.writes:
                call.args[bname] = call.pack_columns(bname, value)
                continue
            raise BindingError(
                f"{call.where(bname)}: expected a read columns binding, got {b.access}"
            )
        if not b.writes:
            if value is None:
                value = fallback.get(bname)
            if value is None:
                raise BindingError(
                    f"{call.where(bname)}: expected a Column (bind, columns or bind.columns), "
                    "got nothing bound"
                )
            call.args[bname] = call.read_column(bname, value)
            continue
        _bind_output(call, bname, b, value, bind)

    missing = [n for n in variant.uniforms if n not in call.uniforms]
    if missing:
        raise BindingError(
            f"{ref.identity}: uniforms {missing}: expected a value for each declared param "
            f"{sorted(variant.uniforms)}, got none"
        )
    variant.ensure_built(ctx.device)
    inputs = [call.args[a] if a in call.args else call.uniforms[a] for a in variant.args]
    dim = 1 if ref.spec.dispatch == "serial" else dom.n
    ctx.launch(variant.kernel, dim, inputs)
    out = Record()
    for bname, col in call.outputs.items():
        out[bname] = col
        if bname in call.counts:
            out[f"{bname}_count"] = call.counts[bname]
    if scope is not None:
        scope.note("launch", ref.identity)
    return Record(columns=out)


def _bind_output(call: _Call, bname: str, b: Any, value: Any, bind: Mapping[str, Any]) -> None:
    ctx = call.ctx
    element = call.v.elements[bname]
    dtype = WP_ELEMENTS[element]
    ctype = BINDING_ELEMENTS[element]
    live: LiveCount | None = None
    if value is not None and not _is_sizing(value):
        src = _as_column(value, call.where(bname))
        if b.access == "read_write" and src.data.dtype != dtype:
            data = call.read_column(bname, src)  # cast by value makes a new array
        elif src.data.dtype != dtype:
            raise BindingError(
                f"{call.where(bname)}: expected a column of {element} elements, got {src.type}"
            )
        else:
            data = ctx.empty(src.data.shape[0], dtype)
            ctx.copy(data, src.data)
        if b.appended:
            counter = ctx.empty(1, wp.uint32)
            if src.live is not None:  # a later pass appends after what the earlier one did
                ctx.copy(counter, src.live.words)
            else:
                ctx.fill(counter, 0)  # a replay counts from 0 again
            live = LiveCount(counter, data.shape[0])
            call.args[f"{bname}_count"] = counter
            call.counts[bname] = live
        elif b.live:
            live = call.dom.live
        call.args[bname] = data
        call.outputs[bname] = Column(data, ctype, live)
        return
    size_spec = b.capacity if (b.appended and b.capacity is not None) else b.count
    if value is not None:
        size_spec = bname  # the binding itself was bound to a size
    n, sized_live = call.size_of(
        bname, size_spec, {**bind, bname: value} if value is not None else bind
    )
    # every output starts from its init value (0 unless bindings.yaml states one) by a
    # logged fill, so a replay starts it from the words a fresh cook's allocation holds:
    # a slot the kernel leaves unwritten (past a live count) holds the inert value after
    # any replay, as after a fresh cook (counters, folds and tables start over too)
    init = b.init if b.init is not None else 0
    data = ctx.empty(n, dtype)
    if n:
        ctx.fill(data, _init_value(init, element))
    call.args[bname] = data
    if b.appended:
        counter = ctx.empty(1, wp.uint32)
        ctx.fill(counter, 0)  # a replay counts from 0 again
        call.args[f"{bname}_count"] = counter
        live = LiveCount(counter, n)
        call.counts[bname] = live
    elif sized_live is not None and size_spec not in (None, "domain"):
        live = sized_live  # sized by {live = <count>}: the output carries that count
    elif b.live:
        # only an output declared live: true carries the count its dispatch ran over
        live = call.dom.live
    call.outputs[bname] = Column(data, ctype, live)


def _read_size(value: Any) -> Any:
    """The number sizing an output, read in Python: a dynamic one marks the node host-
    dependent on it, so the node plans again (a new allocation) when it moves; a replay
    would keep the old size (the fresh cook's output has the new one)."""
    if is_dynamic(value):
        mark_host(leaves(key_of(value)))
    return peek(value)


def _slots(value: Any, where: str) -> int:
    """An output's size: a whole Number in [0, MAX_DOMAIN]."""
    if not (_is_number(value) and math.isfinite(value) and float(value).is_integer()) or not (
        0 <= value <= MAX_DOMAIN
    ):
        raise BindingError(
            f"{where}: expected a whole Number in [0, {MAX_DOMAIN}] sizing an output, got {value!r}"
        )
    return int(value)


def _is_sizing(value: Any) -> bool:
    return _is_number(value) or (isinstance(value, Mapping) and set(value) == {"live"})


def _init_value(v: Any, element: str) -> Any:
    if element == "f32":
        return float(v)
    if element in ("i32", "u32"):
        return int(v)
    return float(v)


def _domain_count_words(ctx: LaunchContext, dom: ResolvedDomain) -> wp.array:
    if dom.live is not None:
        return dom.live.words
    words = ctx.zeros(1, wp.uint32)
    if dom.number:
        ctx.fill(words, int(dom.number))
    return words


def _first_device(bind: Mapping[str, Any], columns: Any, domain: Any) -> str | None:
    for v in list(bind.values()) + ([domain] if domain is not None else []):
        if isinstance(v, Column):
            return v.device
        if isinstance(v, LiveCount):
            return v.device
    if isinstance(columns, Mapping):
        for v in columns.values():
            if isinstance(v, Column):
                return v.device
    return None


def _implicit_domain(ref: KernelRef, bind: Mapping[str, Any], columns: Any) -> Any:
    for source in (columns, bind.get("columns")):
        if isinstance(source, Domain):
            return source.count
    raise BindingError(
        f"{ref.identity}: domain: expected a Number, a Column or a live count, got nothing"
    )
