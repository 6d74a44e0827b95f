"""bindings.yaml: the schema of a kernel asset, loaded and validated.

Top-level keys: ``kernel`` (the entry function, default the folder name), ``doc``,
``dispatch`` (``domain``: one thread per slot; ``serial``: one thread walks the domain),
``bindings`` (a list) and ``specialize`` (a list of ``{name, options}``). A binding has
``name``, ``kind`` (buffer, columns, texture), ``access`` (read, write, read_write),
``element`` (f32, i32, u32, vec2, vec3, vec4, or the name of a specialize key whose
options are elements), and optionally ``when``, ``order`` (columns), ``count`` and
``capacity`` (an integer, ``domain``, a uniform or a bind name), ``appended``, ``live``,
``init`` (the value an output is filled with before the dispatch), ``length`` and ``doc``.

A ``columns`` binding ``NAME`` takes a table of Columns packed on the device into one
``[rows, n]`` f32 buffer (one row per lane), in the order its ``order`` states (the table
must hold exactly those columns) or in sorted-name order where it states none. A kernel
that reads its columns by slot number states ``order``; one that reads them by name needs
none: its source calls ``NAME_col_<column>(NAME, i)``, and each variant is generated with
those Warp functions for the columns actually bound (``asset._preprocess.accessors``; one
variant per layout). An output with ``live: true`` carries the count its dispatch ran over
(the domain's live count); an output without it carries none.

``length`` states the fewest elements a Column bound to the binding must hold, checked
before every launch: ``domain`` (one per slot the dispatch covers: the number, or the
capacity of a live count), an integer, or ``any`` (the kernel bounds every read of it by
its own length: an index-like input such as a gather source or a hash table). A read
buffer binding defaults to ``domain``; an output bound to a Column defaults to its
``count`` when that is ``domain`` or an integer, and to ``any`` otherwise.

The file is read without YAML aliases (an alias or a merge key is refused: a few hundred
bytes of aliases can expand to gigabytes), without duplicate keys, and at most
``MAX_BYTES`` long. Two bindings may share a name only when their ``when`` never hold
together (one per variant).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from pathlib import Path
from typing import Any

import yaml

from ..elements import ELEMENTS as _ELEMENTS
from ..elements import F32_MAX, WORD_RANGES
from ..errors import BindingsFileError

#: the largest bindings.yaml the loader reads
MAX_BYTES = 256 * 1024

ELEMENTS = tuple(_ELEMENTS)
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
    "length",
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
    length: int | str | None = None
    doc: str = ""

    @property
    def writes(self) -> bool:
        """True for a binding the kernel writes."""
        return self.access in ("write", "read_write")

    def length_rule(self) -> int | str:
        """The ``length`` in force: the stated one, or the default (``domain`` or ``any``)."""
        if self.length is not None:
            return self.length
        if self.kind != "buffer":
            return "any"
        if not self.writes:
            return "domain"
        if self.count == "domain" or isinstance(self.count, int):
            return self.count
        return "any"

    def min_length(self, domain: int) -> int | None:
        """The fewest elements a Column bound here must hold over ``domain`` slots, or None."""
        rule = self.length_rule()
        if rule == "any":
            return None
        return domain if rule == "domain" else int(rule)


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
    if isinstance(v, int) and not 0 <= v <= MAX_COUNT:
        raise _fail(path, key, v, f"an integer >= 0 and <= {MAX_COUNT} (an int32 count)")
    if isinstance(v, str) and not _IDENT.match(v):
        raise _fail(path, key, v, "'domain' or a uniform or bind name")
    return v


#: the values an ``init`` may hold per element type (vector lanes are f32)
_INT_RANGE = {k: WORD_RANGES[k] for k in ("i32", "u32")}
#: the largest ``count``/``capacity`` (a count is an int32 on the device)
MAX_COUNT = 2**31 - 1


def _init_value(path: Path, key: str, v: Any, element: str, spec_keys: dict) -> float | int | None:
    """An ``init`` checked against every element type the binding can have: an integer in
    range for i32/u32 (a float with a fraction refused), a finite float within f32 for
    f32 and vectors."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _fail(path, key, v, "a number")
    for el in spec_keys.get(element, (element,)):
        if el in _INT_RANGE:
            lo, hi = _INT_RANGE[el]
            if isinstance(v, float) and (not math.isfinite(v) or not v.is_integer()):
                raise _fail(path, key, v, f"a whole number for a {el} binding")
            if not lo <= v <= hi:
                raise _fail(path, key, v, f"a whole number from {lo} to {hi} for a {el} binding")
        elif (isinstance(v, float) and not math.isfinite(v)) or abs(v) > F32_MAX:
            raise _fail(path, key, v, f"a finite number within float32's range for a {el} binding")
    return v


def _length_value(path: Path, key: str, v: Any) -> int | str | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | str) or v in ("",):
        raise _fail(path, key, v, "'domain', 'any' or an integer >= 0")
    if isinstance(v, int) and v < 0:
        raise _fail(path, key, v, "an integer >= 0")
    if isinstance(v, str) and v not in ("domain", "any"):
        raise _fail(path, key, v, "'domain', 'any' or an integer >= 0")
    return v


class _Loader(yaml.SafeLoader):
    """A safe loader that refuses aliases, merge keys and duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasRefused(f"an alias *{event.anchor} at {event.start_mark}")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _AliasRefused(f"a merge key << at {key_node.start_mark}")
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # refused by the base constructor
            if key in seen:
                raise _AliasRefused(
                    f"the key {key!r} twice in one mapping at {key_node.start_mark}"
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _AliasRefused(Exception):
    pass


def _read_yaml(path: Path) -> Any:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise BindingsFileError(f"{path}: expected at most {MAX_BYTES} bytes, got {size}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise BindingsFileError(f"{path}: expected UTF-8 text, got {e}") from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except RecursionError:
        raise BindingsFileError(
            f"{path}: expected YAML nested a few levels deep, got nesting past Python's "
            "recursion limit"
        ) from None
    except _AliasRefused as e:
        raise BindingsFileError(
            f"{path}: expected YAML without aliases, merge keys or repeated keys, got {e}"
        ) from None
    except yaml.YAMLError as e:
        raise BindingsFileError(f"{path}: expected valid YAML, got a parse error: {e}") from None


def _alternatives(when: str | None, spec_keys: dict) -> list[dict[str, set[str]]]:
    """A ``when`` as its alternatives, each the options it allows per key it names (an
    alternative that can never hold is left out); no ``when`` is one alternative of none."""
    if not when:
        return [{}]
    out = []
    for alt in when.split(";"):
        if not alt.strip():
            continue
        parts = alt.replace("=", " ").split()
        allowed: dict[str, set[str]] = {}
        for k, v in zip(parts[::2], parts[1::2]):
            allowed[k] = allowed.get(k, set(spec_keys[k])) & set(v.split("|"))
        if all(allowed.values()):
            out.append(allowed)
    return out


def _meet(a: dict[str, set[str]], b: dict[str, set[str]], spec_keys: dict) -> dict | None:
    """A variant's options in which both alternatives hold (for the keys they name), or None."""
    for k in a.keys() & b.keys():
        if a[k].isdisjoint(b[k]):
            return None
    both = {}
    for k in sorted(a.keys() | b.keys()):
        opts = a[k] & b[k] if k in a and k in b else a.get(k) or b[k]
        both[k] = next(o for o in spec_keys[k] if o in opts)
    return both


def _check_names(path: Path, bindings: tuple[Binding, ...], spec_keys: dict) -> None:
    """Refuses two bindings of one name whose ``when`` can hold in the same variant.

    Two alternatives hold together exactly when, for every key both name, the options they
    allow meet: a check per pair of alternatives (quadratic in the file), never one per
    combination of the keys' options (exponential in the keys).
    """
    by_name: dict[str, list[Binding]] = {}
    for b in bindings:
        by_name.setdefault(b.name, []).append(b)
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        alts = [_alternatives(b.when, spec_keys) for b in group]
        for i, j in itertools.combinations(range(len(group)), 2):
            for x in alts[i]:
                for y in alts[j]:
                    both = _meet(x, y, spec_keys)
                    if both is None:
                        continue
                    tag = ",".join(f"{k}={v}" for k, v in both.items()) or "every variant"
                    raise _fail(
                        path,
                        f"bindings[{name}]",
                        name,
                        f"distinct binding names in each variant (two bindings {name!r} hold "
                        f"in {tag})",
                    )


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
    init = _init_value(path, f"{where}.init", raw.get("init"), element, spec_keys)
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
        length=_length_value(path, f"{where}.length", raw.get("length")),
        doc=str(raw.get("doc", "")),
    )
    if b.length is not None and b.kind != "buffer":
        raise _fail(path, f"{where}.length", b.length, "no length on a columns or texture binding")
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
    raw = _read_yaml(path)
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
    _check_names(path, bindings, spec_keys)
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
