"""device.kernel: runs a kernel asset over a domain and returns what it wrote as columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..asset import KernelRef
from ..asset._layouts import column_layouts, columns_table
from ..columns import Column, Domain, LiveCount, Record
from ..counts import ResolvedDomain, resolve_domain
from ..errors import BindingError
from ..launch import LaunchContext, default_context
from ._kernel_call import MAX_DOMAIN, KernelCall
from ._op import current_cook, op
from ._uniforms import _check_uniforms, _describe, _spread_uniforms

_AUTO_UNIFORMS = ("count", "time", "frame")


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
    ctx = default_context(device if device is not None else _first_device(bind, columns, domain))
    dom = _dispatch_domain(ref, domain, bind, columns, ctx)
    scope = current_cook()
    choice = _Choice(ref, specialize, dom, scope)
    call = KernelCall(ref, choice.variant, ctx, dom)
    _take_uniforms(call, choice, scope, uniforms, step, bind, columns)
    fallback = _fallback_columns(ref, columns, _check_bind_names(call, bind))
    _name_columns(call, choice, bind, fallback)
    _check_lengths(call, bind, fallback)
    _bind_all(call, bind, fallback)
    _launch(call)
    return _outputs(call, scope)


# -- the stages of a call, in the order ``kernel`` runs them ------------------------------


def _dispatch_domain(
    ref: KernelRef, domain: Any, bind: Mapping[str, Any], columns: Any, ctx: LaunchContext
) -> ResolvedDomain:
    """Resolves the domain (a Geometry class's count when none is given) for the dispatch.

    Raises:
        BindingError: no domain, a malformed one, or one over ``MAX_DOMAIN`` slots.
    """
    if domain is None:
        domain = _implicit_domain(ref, bind, columns)
    dom = resolve_domain(domain, ctx)
    if dom.n > MAX_DOMAIN:
        raise BindingError(
            f"{ref.identity}: domain: expected at most {MAX_DOMAIN} slots, got {dom.n}"
        )
    return dom


class _Choice:
    """The variant a call runs: the node's specialize options, a graph's overrides of the
    call site, and ``COUNT`` from the domain.

    Raises:
        BindingError: an unknown option, or ``COUNT='plain'`` over a live-count domain.
    """

    def __init__(self, ref: KernelRef, specialize: Any, dom: ResolvedDomain, scope: Any):
        self.given = dict(specialize or {})
        self.names = ref.spec.option_names()
        self.site = scope.kernel_site(ref.identity) if scope is not None else None
        self.overrides = scope.kernel_overrides.get(self.site, {}) if scope is not None else {}
        ref.options(self.given)  # refuse a bad option the node gave before an override hides it
        self.observed = {
            k: self.given.get(k, opts[0]) for k, opts in self.names.items() if k != "COUNT"
        }
        for key in self.observed:
            if key in self.overrides:
                self.given[key] = self.overrides[key]
        if "COUNT" in self.names and "COUNT" not in self.given:
            self.given["COUNT"] = "device" if dom.live is not None else "plain"
        elif "COUNT" in self.names and self.given.get("COUNT") == "plain" and dom.live is not None:
            raise BindingError(
                f"{ref.identity}: specialize COUNT: expected 'device' over a live count domain, got 'plain'"
            )
        self.variant = ref.variant(self.given)

    @property
    def overridden(self) -> bool:
        """True when a graph-level override picked another variant than the node's."""
        return any(k in self.overrides for k in self.observed)


def _take_uniforms(
    call: KernelCall,
    choice: _Choice,
    scope: Any,
    uniforms: Mapping[str, Any] | None,
    step: Mapping[str, Any] | None,
    bind: Mapping[str, Any],
    columns: Any,
) -> None:
    """Sets ``call.uniforms``: the given ones, the step's and the automatic ones the variant
    declares, with a graph's overrides; records the call site in the cook.

    Raises:
        BindingError: a uniform the variant does not declare, or a value of a wrong kind.
    """
    given = _given_uniforms(call, choice, uniforms, step)
    if scope is not None:
        _observe_site(call, choice, scope, given, bind, columns)
        given.update({k: v for k, v in choice.overrides.items() if k in call.v.uniforms})
    _auto_uniforms(call, scope, given)
    call.uniforms = {k: v for k, v in given.items() if k in call.v.uniforms}
    _check_uniforms(call)


def _given_uniforms(
    call: KernelCall,
    choice: _Choice,
    uniforms: Mapping[str, Any] | None,
    step: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The node's uniforms (Vecs spread over lanes), then the step's numbers it declares."""
    ident, variant = call.ref.identity, call.v
    given = _spread_uniforms(dict(uniforms or {}), f"{ident}: uniform")
    if choice.overridden:
        # a graph-level override picked another variant: the node's uniforms that variant
        # does not declare are left out
        given = {k: v for k, v in given.items() if k in variant.uniforms}
    for name, value in given.items():
        if name not in variant.uniforms and name not in _AUTO_UNIFORMS:
            raise BindingError(
                f"{ident}: uniform {name!r}: expected one of {sorted(variant.uniforms)}, got {value!r}"
            )
    for name, value in _spread_uniforms(dict(step or {}), f"{ident}: step").items():
        if name in variant.uniforms:
            given.setdefault(name, value)
    return given


def _observe_site(
    call: KernelCall,
    choice: _Choice,
    scope: Any,
    given: Mapping[str, Any],
    bind: Mapping[str, Any],
    columns: Any,
) -> None:
    """Records the call site in the cook: the uniforms and options it observed, and what
    was bound (a graph offers only the options that can bind it)."""
    observed = {k: v for k, v in given.items() if k in call.v.uniforms}
    bound = (dict(bind), columns)
    scope.kernel_calls.append(
        (
            choice.site,
            call.ref.identity,
            observed,
            choice.observed,
            choice.names,
            call.ref.spec,
            bound,
        )
    )


def _auto_uniforms(call: KernelCall, scope: Any, given: dict[str, Any]) -> None:
    """Fills the automatic uniforms the variant declares and nothing gave: ``zero_n``,
    ``count`` (the domain's number, or its capacity), and the cook's ``time``/``frame``."""
    dom = call.dom
    auto = {"zero_n": dom.n, "count": dom.number if dom.number is not None else dom.n}
    if scope is not None:
        auto.update(time=scope.time, frame=scope.frame)
    for name, value in auto.items():
        if name in call.v.uniforms:
            given.setdefault(name, value)


def _check_bind_names(call: KernelCall, bind: dict[str, Any]) -> Any:
    """Refuses a bind name that is no binding of the variant nor a name sizing an output;
    takes ``bind["columns"]`` out (a domain's columns) and returns it, or None.

    Raises:
        BindingError: naming the bind and the variant's bindings.
    """
    spec, variant = call.ref.spec, call.v
    sizing = {
        s
        for b in spec.bindings
        for s in (b.count, b.capacity)
        if isinstance(s, str) and s != "domain"
    }
    domain_cols = None
    if "columns" in bind and "columns" not in variant.bindings:
        domain_cols = bind.pop("columns")
    every = {b.name for b in spec.bindings}
    for name in bind:
        if name not in variant.bindings and name not in sizing:
            why = " in this variant" if name in every else ""
            raise BindingError(
                f"{call.ref.identity}: bind {name!r}: expected a binding among "
                f"{sorted(variant.bindings)}{why}, got {_describe(bind[name])}"
            )
    return domain_cols


def _fallback_columns(ref: KernelRef, columns: Any, domain_cols: Any) -> dict[str, Any]:
    """The columns that fill unbound read bindings: ``columns``, then ``bind.columns``.

    Raises:
        BindingError: a source that is no table of Columns.
    """
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
    return fallback


def _name_columns(
    call: KernelCall, choice: _Choice, bind: Mapping[str, Any], fallback: Mapping[str, Any]
) -> None:
    """A kernel reading columns by ``NAME_col_<column>``: the variant with their accessors."""
    if call.v.by_name:
        layouts = column_layouts(call.v, bind, fallback, call.where)
        call.v = call.ref.variant(choice.given, layouts)


def _check_lengths(call: KernelCall, bind: Mapping[str, Any], fallback: Mapping[str, Any]) -> None:
    """Checks every bound Column against the domain before anything is allocated."""
    for bname, b in call.v.bindings.items():
        if bname == "domain_count" or b.kind != "buffer":
            continue
        value = bind.get(bname)
        if value is None and not b.writes:
            value = fallback.get(bname)
        call.check_length(bname, value)


def _bind_all(call: KernelCall, bind: Mapping[str, Any], fallback: Mapping[str, Any]) -> None:
    """Binds every binding of the variant, in its order: the domain's count word, textures,
    read tables, read columns, and the outputs (allocated, filled, or copied)."""
    for bname, b in call.v.bindings.items():
        value = bind.get(bname)
        if bname == "domain_count":
            call.args[bname] = call.domain_count_words()
        elif b.kind == "texture":
            call.bind_texture(bname, value)
        elif b.kind == "columns":
            call.bind_table(bname, b, columns_table(b, value, fallback))
        elif not b.writes:
            call.bind_input(bname, value if value is not None else fallback.get(bname))
        else:
            call.bind_output(bname, b, value, bind)


def _launch(call: KernelCall) -> None:
    """Builds the variant on the device (once) and launches it over the domain.

    Raises:
        BindingError: a declared uniform nothing gave a value.
    """
    variant = call.v
    missing = [n for n in variant.uniforms if n not in call.uniforms]
    if missing:
        raise BindingError(
            f"{call.ref.identity}: uniforms {missing}: expected a value for each declared param "
            f"{sorted(variant.uniforms)}, got none"
        )
    variant.ensure_built(call.ctx.device)
    inputs = [call.args[a] if a in call.args else call.uniforms[a] for a in variant.args]
    dim = 1 if call.ref.spec.dispatch == "serial" else call.dom.n
    call.ctx.launch(variant.kernel, dim, inputs)


def _outputs(call: KernelCall, scope: Any) -> Record:
    """``Record(columns=...)``: every written binding, and ``<name>_count`` of each appended
    one; notes the launch in the cook."""
    out = Record()
    for bname, col in call.outputs.items():
        out[bname] = col
        if bname in call.counts:
            out[f"{bname}_count"] = call.counts[bname]
    if scope is not None:
        scope.note("launch", call.ref.identity)
    return Record(columns=out)


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
