"""``kernel_form``: controls for a kernel's own parameters, its specialize options and uniforms.

A kernel asset declares specialize options in its ``bindings.yaml`` (each a choice, shown
as toggle buttons or a dropdown) and uniforms in its Warp source (scalar params, shown as
number boxes; ``<name>_x``/``_y``/``_z``/``_w`` together as one vector control, the way
``device.kernel`` spreads a Vec). ``form.kernel_args()`` returns the ``specialize`` and
``uniforms`` arguments of ``ops.device.kernel`` for the values shown::

    form = kernel_form(INSIDE, specialize={"SHAPE": "ring"}, uniforms={"radius": 0.6})
    ops.device.kernel(kernel=INSIDE, bind=..., domain=..., **form.kernel_args())

Options whose choices are ``plain``/``device`` (``COUNT``, ...) are left out: ``device.kernel``
picks them from the domain.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from ..elements import XYZW
from ..errors import ParamsError
from ..params import Field, params_class
from .form import ParamsForm

_AUTO = frozenset({"plain", "device"})
_LANES = XYZW


def _user_options(kernel: Any) -> dict[str, tuple[str, ...]]:
    return {k: v for k, v in kernel.spec.option_names().items() if set(v) != _AUTO}


def _group_uniforms(names: dict[str, type]) -> dict[str, tuple[type, list[str]]]:
    """Returns uniform -> (lane type, source names): ``center_x``, ``center_y`` -> ``center``."""
    out: dict[str, tuple[type, list[str]]] = {}
    for name, typ in names.items():
        base, _, lane = name.rpartition("_")
        if base and lane in _LANES:
            lanes = [f"{base}_{c}" for c in _LANES]
            present = [n for n in lanes if n in names]
            if present == lanes[: len(present)] and len(present) >= 2:
                out.setdefault(base, (typ, present))
                continue
        out[name] = (typ, [name])
    return out


def _uniform_meta(kernel: Any) -> dict[str, dict[str, Any]]:
    """Optional ``bounds``/``soft``/``doc``/``unit``/``default`` of uniforms, where the
    kernel's bindings.yaml gives them (read from its spec; {} when it gives none)."""
    spec = getattr(kernel, "spec", None)
    for attr in ("uniform_meta", "uniforms"):
        raw = getattr(spec, attr, None)
        if isinstance(raw, Mapping):
            out = {}
            for name, m in raw.items():
                if isinstance(m, Mapping):
                    out[str(name)] = {
                        k: _pair(v) if k in ("bounds", "soft") else v for k, v in m.items()
                    }
            if out:
                return out
    return {}


def _pair(v: Any) -> Any:
    return tuple(v) if isinstance(v, list | tuple) and len(v) == 2 else v


class KernelForm(ParamsForm):
    """A ``ParamsForm`` over ``"specialize.<KEY>"`` and ``"uniforms.<name>"`` fields.

    Attributes:
        kernel: the ``KernelRef`` the form edits.
    """

    def __init__(self, kernel: Any, current: Any, uniforms: dict[str, tuple[type, list[str]]]):
        self.kernel = kernel
        self._uniforms = uniforms
        super().__init__(current, title=kernel.identity, group=True)

    def kernel_args(self) -> dict[str, dict[str, Any]]:
        """Returns ``{"specialize": ..., "uniforms": ...}`` for ``ops.device.kernel``.

        Only the uniforms the chosen variant declares are given (``device.kernel`` refuses
        a name the shader does not declare).
        """
        values = self.value.to_dict()
        spec = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("specialize.")}
        declared = self.kernel.variant(spec).uniforms
        uniforms = {}
        for name, (_, sources) in self._uniforms.items():
            if all(s in declared for s in sources):
                uniforms[name] = values[f"uniforms.{name}"]
        return {"specialize": spec, "uniforms": uniforms}


def kernel_form(
    kernel: Any,
    *,
    specialize: Mapping[str, str] | None = None,
    uniforms: Mapping[str, Any] | None = None,
) -> KernelForm:
    """Returns a form for a kernel's specialize options and uniforms.

    Args:
        kernel: a ``KernelRef`` (``asset.resolve("<prefix>/<name>", "computeShader")``).
        specialize: starting options (the first option of each where absent).
        uniforms: starting uniform values (0 where absent; a vector as a tuple).

    Returns:
        The form; ``form.kernel_args()`` is what ``ops.device.kernel`` takes.

    Raises:
        ParamsError: for something that is not a kernel, an option or a uniform the kernel
            does not declare.
    """
    if not hasattr(kernel, "spec") or not hasattr(kernel, "variant"):
        raise ParamsError(f"kernel_form: expected a resolved kernel (KernelRef), got {kernel!r}")
    options = _user_options(kernel)
    start = dict(specialize or {})
    unknown = sorted(set(start) - set(options))
    if unknown:
        raise ParamsError(
            f"kernel_form {kernel.identity} specialize: expected keys among {sorted(options)}, "
            f"got {unknown}"
        )
    declared: dict[str, type] = {}
    for combo in itertools.product(*options.values()):
        declared.update(kernel.variant(dict(zip(options, combo, strict=True))).uniforms)
    grouped = _group_uniforms(declared)
    given = dict(uniforms or {})
    unknown = sorted(set(given) - set(grouped))
    if unknown:
        raise ParamsError(
            f"kernel_form {kernel.identity} uniforms: expected names among {sorted(grouped)}, "
            f"got {unknown}"
        )
    fields: dict[str, Field] = {}
    for key, opts in options.items():
        fields[f"specialize.{key}"] = Field(
            opts[0], choices=list(opts), type=str, doc=f"specialize option {key}"
        )
    meta = _uniform_meta(kernel)
    for name, (typ, sources) in grouped.items():
        lane = float if typ is bool else typ
        if len(sources) > 1:
            default: Any = tuple(lane(0) for _ in sources)
            ftype: Any = tuple[(lane,) * len(sources)]
        else:
            default, ftype = (False, bool) if typ is bool else (lane(0), lane)
        m = meta.get(name, {})
        extra = {k: m[k] for k in ("bounds", "soft", "unit") if m.get(k) is not None}
        if "default" in m and typ is not bool:
            default = m["default"]
        elif extra.get("bounds") and len(sources) == 1 and typ is not bool:
            lo, hi = extra["bounds"]
            if lo is not None and default < lo or hi is not None and default > hi:
                default = lane(lo if lo is not None else hi)
        fields[f"uniforms.{name}"] = Field(
            default, type=ftype, doc=str(m.get("doc") or f"uniform {name}"), **extra
        )
    cls = params_class(
        f"{kernel.identity.replace('/', '_')}_kernel_params", fields, kernel.identity
    )
    values = {f"specialize.{k}": v for k, v in start.items()}
    values.update({f"uniforms.{k}": v for k, v in given.items()})
    return KernelForm(kernel, cls(**values), grouped)
