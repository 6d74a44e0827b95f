"""bindings.yaml: the schema of a kernel asset, loaded and validated.

Top-level keys: ``kernel`` (the entry function, default the folder name), ``doc``,
``dispatch`` (``domain``: one thread per slot; ``serial``: one thread walks the domain),
``bindings`` (a list) and ``specialize`` (a list of ``{name, options}``). A binding has
``name``, ``kind`` (buffer, columns, texture), ``access`` (read, write, read_write),
``element`` (f32, i32, u32, vec2, vec3, vec4, or the name of a specialize key whose
options are elements), and optionally ``when``, ``order`` (columns), ``count`` and
``capacity`` (an integer, ``domain``, a uniform or a bind name), ``appended``, ``live``,
``init`` (the value an output is filled with before the dispatch) and ``doc``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import BindingsFileError

ELEMENTS = ("f32", "i32", "u32", "vec2", "vec3", "vec4")
KINDS = ("buffer", "columns", "texture")
ACCESS = ("read", "write", "read_write")
DISPATCH = ("domain", "serial")
_TOP = ("kernel", "doc", "dispatch", "bindings", "specialize")
_BINDING = (
    "name",
    "kind",
    "access",
    "element",
    "when",
    "order",
    "count",
    "capacity",
    "appended",
    "live",
    "init",
    "doc",
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclasses.dataclass(frozen=True)
class Binding:
    """One binding of a kernel's schema."""

    name: str
    kind: str
    access: str
    element: str
    when: str | None = None
    order: tuple[str, ...] | None = None
    count: int | str | None = None
    capacity: int | str | None = None
    appended: bool = False
    live: bool = False
    init: float | int | None = None
    doc: str = ""

    @property
    def writes(self) -> bool:
        """True for a binding the kernel writes."""
        return self.access in ("write", "read_write")


@dataclasses.dataclass(frozen=True)
class Specialize:
    """A specialize key and its options (the first is the default)."""

    name: str
    options: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """A kernel asset's validated schema."""

    name: str
    entry: str
    doc: str
    dispatch: str
    bindings: tuple[Binding, ...]
    specialize: tuple[Specialize, ...]
    source_path: Path
    yaml_path: Path

    def option_names(self) -> dict[str, tuple[str, ...]]:
        """Returns specialize key -> options."""
        return {s.name: s.options for s in self.specialize}


def _fail(path: Path, key: str, value: Any, expected: str) -> BindingsFileError:
    return BindingsFileError(f"{path}: {key}: expected {expected}, got {value!r}")


def _count_value(path: Path, key: str, v: Any) -> int | str | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise _fail(path, key, v, "an integer >= 0, 'domain', or a uniform or bind name")
    if isinstance(v, int) and v < 0:
        raise _fail(path, key, v, "an integer >= 0")
    if isinstance(v, str) and not _IDENT.match(v):
        raise _fail(path, key, v, "'domain' or a uniform or bind name")
    return v


def _binding(path: Path, i: int, raw: Any, spec_keys: dict[str, tuple[str, ...]]) -> Binding:
    where = f"bindings[{i}]"
    if not isinstance(raw, dict):
        raise _fail(path, where, raw, "a mapping with name, kind, access, element")
    unknown = sorted(set(raw) - set(_BINDING))
    if unknown:
        raise _fail(
            path, f"{where}.{unknown[0]}", raw[unknown[0]], f"one of the keys {list(_BINDING)}"
        )
    for key in ("name", "kind", "access", "element"):
        if key not in raw:
            raise _fail(path, f"{where}.{key}", None, "a value (the key is required)")
    name = raw["name"]
    if not isinstance(name, str) or not _IDENT.match(name):
        raise _fail(path, f"{where}.name", name, "an identifier")
    where = f"bindings[{name}]"
    if raw["kind"] not in KINDS:
        raise _fail(path, f"{where}.kind", raw["kind"], f"one of {list(KINDS)}")
    if raw["access"] not in ACCESS:
        raise _fail(path, f"{where}.access", raw["access"], f"one of {list(ACCESS)}")
    element = raw["element"]
    if element not in ELEMENTS:
        opts = spec_keys.get(element)
        if opts is None or any(o not in ELEMENTS for o in opts):
            raise _fail(
                path,
                f"{where}.element",
                element,
                f"one of {list(ELEMENTS)} or a specialize key whose options are elements",
            )
    when = raw.get("when")
    if when is not None and not isinstance(when, str):
        raise _fail(path, f"{where}.when", when, "a string like 'COUNT=device'")
    if when:
        for alt in when.split(";"):
            parts = alt.replace("=", " ").split()
            if len(parts) % 2:
                raise _fail(path, f"{where}.when", when, "'KEY=value' terms")
            for k, v in zip(parts[::2], parts[1::2]):
                if k not in spec_keys:
                    raise _fail(path, f"{where}.when", when, f"keys among {sorted(spec_keys)}")
                bad = [x for x in v.split("|") if x not in spec_keys[k]]
                if bad:
                    raise _fail(
                        path, f"{where}.when", when, f"{k} options among {list(spec_keys[k])}"
                    )
    order = raw.get("order")
    if order is not None:
        if raw["kind"] != "columns" or not isinstance(order, str) or not order.split():
            raise _fail(
                path, f"{where}.order", order, "a space-separated column list on a columns binding"
            )
        order = tuple(order.split())
    for flag in ("appended", "live"):
        if not isinstance(raw.get(flag, False), bool):
            raise _fail(path, f"{where}.{flag}", raw[flag], "true or false")
    init = raw.get("init")
    if init is not None and (isinstance(init, bool) or not isinstance(init, int | float)):
        raise _fail(path, f"{where}.init", init, "a number")
    b = Binding(
        name=name,
        kind=raw["kind"],
        access=raw["access"],
        element=element,
        when=when,
        order=order,
        count=_count_value(path, f"{where}.count", raw.get("count")),
        capacity=_count_value(path, f"{where}.capacity", raw.get("capacity")),
        appended=raw.get("appended", False),
        live=raw.get("live", False),
        init=init,
        doc=str(raw.get("doc", "")),
    )
    if (b.appended or b.live or b.count is not None or b.capacity is not None) and not b.writes:
        raise _fail(path, f"{where}.access", b.access, "write or read_write for an output")
    return b


def load_spec(folder: Path, name: str) -> KernelSpec:
    """Loads and validates ``folder/bindings.yaml`` (and checks ``folder/<name>.py`` exists).

    Raises:
        BindingsFileError: naming the file, the key and the value refused.
    """
    path = folder / "bindings.yaml"
    src = folder / f"{name}.py"
    if not path.is_file():
        raise BindingsFileError(f"{path}: expected a bindings.yaml file, got none")
    if not src.is_file():
        raise BindingsFileError(f"{src}: expected the kernel's Warp source, got none")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise BindingsFileError(f"{path}: expected valid YAML, got a parse error: {e}") from None
    if not isinstance(raw, dict):
        raise _fail(path, "<top>", raw, "a mapping with bindings and specialize")
    unknown = sorted(set(raw) - set(_TOP))
    if unknown:
        raise _fail(path, unknown[0], raw[unknown[0]], f"one of the keys {list(_TOP)}")
    specs: list[Specialize] = []
    for i, s in enumerate(raw.get("specialize") or []):
        if not isinstance(s, dict) or set(s) - {"name", "options", "doc"} or "name" not in s:
            raise _fail(path, f"specialize[{i}]", s, "a mapping {name, options}")
        opts = s.get("options")
        if (
            not isinstance(opts, list)
            or not opts
            or not all(isinstance(o, str | int) for o in opts)
        ):
            raise _fail(path, f"specialize[{s['name']}].options", opts, "a non-empty list of names")
        if not _IDENT.match(str(s["name"])):
            raise _fail(path, f"specialize[{i}].name", s["name"], "an identifier")
        specs.append(Specialize(str(s["name"]), tuple(str(o) for o in opts)))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise _fail(path, "specialize", names, "distinct names")
    spec_keys = {s.name: s.options for s in specs}
    raw_b = raw.get("bindings")
    if not isinstance(raw_b, list):
        raise _fail(path, "bindings", raw_b, "a list of bindings")
    bindings = tuple(_binding(path, i, b, spec_keys) for i, b in enumerate(raw_b))
    dispatch = raw.get("dispatch", "domain")
    if dispatch not in DISPATCH:
        raise _fail(path, "dispatch", dispatch, f"one of {list(DISPATCH)}")
    entry = raw.get("kernel", name)
    if not isinstance(entry, str) or not _IDENT.match(entry):
        raise _fail(path, "kernel", entry, "the name of the kernel function")
    return KernelSpec(
        name=name,
        entry=entry,
        doc=str(raw.get("doc", "")),
        dispatch=dispatch,
        bindings=bindings,
        specialize=tuple(specs),
        source_path=src,
        yaml_path=path,
    )
