"""Kernel-level parameters of a graph: the literals its nodes pass to ``device.kernel``.

Every ``device.kernel`` call of a node offers the uniforms and specialize options (COUNT
aside) the node passes as literals, as ``"node.<site>.<name>"`` parameters of the graph
(``site`` is the kernel's name, ``inside``, then ``inside#2`` for its second call in the
node). A value the node computed from its own parameters is no kernel-level parameter:
the node's own control moves it. Set one like any parameter: it then overrides what the
node passes, until ``clear_kernel_overrides()``.

A specialize option offers only the choices that can bind what the node bound
(``bindable_choices``): ``gather.TYPE`` over vec2 points offers ``vec2`` alone (an f32
variant cannot read them), ``scan.SEGMENTS = device`` is not offered when no ``starts``
column is bound. The choices follow the cooks: a cook that binds other columns updates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import warp as wp

from . import _cast
from ._derived import origin
from .asset._preprocess import when_holds
from .asset._variants import WP_ELEMENTS
from .columns import Column
from .dynamic import is_dynamic
from .params import Field


class KernelParams:
    """The kernel-level parameter methods of ``Graph`` (a mixin over its state)."""

    _kernel_fields: dict[str, Field]
    _kernel_overrides: set[str]
    _state: dict[str, Any]
    _recording: Any
    _params: Any
    values: dict[str, Any]

    def kernel_params(self) -> dict[str, Field]:
        """Returns the kernel-level parameters found by the cooks so far.

        Every ``device.kernel`` call of a node offers the uniforms the node gave it and its
        specialize options (COUNT aside) as ``"node.<site>.<name>"`` (``site`` is the
        kernel's name, ``inside``, then ``inside#2`` for its second call in the node). Set
        one like any parameter: it then overrides what the node passes, until
        ``clear_kernel_overrides()``.
        """
        return dict(self._kernel_fields)

    def clear_kernel_overrides(self) -> None:
        """Lets every node pass its own uniforms and specialize options again."""
        self._kernel_overrides.clear()
        for owner in {k.split(".")[0] for k in self._kernel_fields}:
            self._state.pop(owner, None)
        self._recording = None

    def _learn_kernel_params(self, found: list[tuple[str, tuple]]) -> None:
        """Adds the kernel-level params the cooked nodes offered; shows what they passed.

        Only literals are offered: a uniform or option the node computed from its own
        parameters (a dynamic value, or one marked by ``_derived``) already has a control,
        the node's, and a kernel-level one would shadow it.
        """
        added = False
        for node_name, call in found:
            site, identity, uniforms, specs, options, spec, bound = call
            uniforms = {k: v for k, v in uniforms.items() if _literal(v)}
            specs = {k: v for k, v in specs.items() if _literal(v)}
            for uname, v in uniforms.items():
                key = f"{node_name}.{site}.{uname}"
                typ = float if isinstance(v, float) else int
                if key not in self._kernel_fields:
                    f = Field(default=typ(v), type=typ, doc=f"uniform {uname} of {identity}")
                    f.name = key.split(".", 1)[1]
                    self._kernel_fields[key] = f
                    added = True
                if key not in self._kernel_overrides:
                    self.values[key] = typ(v)
            for sname, sv in specs.items():
                key = f"{node_name}.{site}.{sname}"
                choices = list(options[sname])
                if spec is not None:
                    given = {k: str(v) for k, v in specs.items()}
                    choices = bindable_choices(spec, sname, given, *bound)
                old = self._kernel_fields.get(key)
                if old is None or list(old.choices or ()) != choices:
                    f = Field(
                        default=str(sv),
                        type=str,
                        choices=choices,
                        doc=f"specialize {sname} of {identity} (the choices that bind the "
                        "columns given)",
                    )
                    f.name = key.split(".", 1)[1]
                    self._kernel_fields[key] = f
                    added = True
                if key not in self._kernel_overrides:
                    self.values[key] = str(sv)
        if added:
            self._params = None


def _can_read(value: Any, element: str, access: str) -> bool | None:
    """Whether a binding of ``element`` words (``access``) takes ``value``: the same
    dtype, or (read by value) a one-lane column ``_cast`` converts. None: not a column
    (a number sizing an output, a Field the field compiler evaluates): no constraint."""
    if isinstance(value, wp.array):
        value = Column(value)
    if not isinstance(value, Column):
        return None
    want = WP_ELEMENTS.get(element)
    if want is None or value.data.dtype == want:
        return want is not None
    if access == "write":
        return False
    return (
        value.lanes == 1
        and element in ("f32", "i32", "u32")
        and _cast.can_cast(value.element(), element)
    )


def bindable_choices(
    spec: Any,
    key: str,
    given: Mapping[str, str],
    bind: Mapping[str, Any],
    columns: Any = None,
) -> list[str]:
    """Returns the choices of specialize option ``key`` whose variant can bind ``bind``.

    A choice binds when, with the other options as ``given`` (their first choice when not
    given): every name bound is a binding of that variant (or sizes an output), every read
    binding it declares has a column (in ``bind``, ``bind["columns"]`` or ``columns``),
    and every column bound has words that binding takes (``gather.TYPE = f32`` cannot
    read vec2 points). The choice given is always kept (the node cooked with it).

    Args:
        spec: the kernel's schema (``KernelRef.spec``: ``bindings``, ``option_names()``).
        key: the specialize option.
        given: the specialize options the node passed.
        bind: what the node bound, by binding name.
        columns: the table of Columns (or Geometry class) filling unbound read bindings.
    """
    names = spec.option_names()
    fallback: dict[str, Any] = {}
    for source in (columns, bind.get("columns")):
        try:
            fallback.update({k: v for k, v in dict(source).items() if k not in fallback})
        except (TypeError, ValueError):
            continue
    sizing = {
        s
        for b in spec.bindings
        for s in (b.count, b.capacity)
        if isinstance(s, str) and s != "domain"
    }
    out = []
    for choice in names[key]:
        opts = {k: given.get(k, v[0]) for k, v in names.items()}
        opts[key] = choice
        active = {
            b.name: b
            for b in spec.bindings
            if when_holds(b.when, opts, f"{spec.yaml_path}: bindings[{b.name}].when")
        }
        ok = all(n in active or n in sizing or n == "columns" for n in bind)
        for name, b in active.items():
            if not ok:
                break
            if name == "domain_count" or b.kind != "buffer":
                continue
            value = bind.get(name)
            if value is None and not b.writes:
                value = fallback.get(name)
                if value is None:
                    ok = False  # a read binding this variant needs is not bound
                    break
            if value is not None:
                ok = _can_read(value, opts.get(b.element, b.element), b.access) is not False
        if ok or choice == given.get(key):
            out.append(choice)
    return out


def _literal(value: Any) -> bool:
    """True for a value a node passed as a literal (not computed from its parameters)."""
    return not is_dynamic(value) and not origin(value)
