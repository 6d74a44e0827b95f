"""Declared parameters: typed fields with defaults, bounds, soft bounds, choices and docs.

One declaration serves a node's parameters, a generator's ``Params`` class and the
widgets made from them::

    class PolarParams(Params):
        lobes: int = Field(5, bounds=(3, 12), doc="number of lobes")
        jitter: float = Field(0.2, bounds=(0.0, 1.0), soft=(0.0, 0.5), doc="radius jitter",
                              dynamic=True)

``bounds`` are enforced; ``soft`` is the range a slider shows (the bounds when omitted).
A ``dynamic`` field is a value a curriculum changes between calls without a new recording.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .errors import ParamsError

_MISSING = object()
_TYPES = (float, int, bool, str)


@dataclasses.dataclass
class Field:
    """The declaration of one parameter.

    Args:
        default: the value when none is given.
        bounds: (lo, hi) enforced, inclusive; either end may be None.
        soft: (lo, hi) the range a slider shows; defaults to ``bounds``.
        choices: the accepted values (a dropdown).
        doc: one line shown as the control's tooltip.
        unit: the unit shown beside the control ("m", "rad", ...).
        dynamic: True for a value that changes between calls without a new recording.
        type: float, int, bool, str or a tuple type like ``tuple[float, float]``; taken from
            the class annotation when omitted.
        step: the slider step (a hundredth of the soft range when omitted).
    """

    default: Any = _MISSING
    bounds: tuple[Any, Any] | None = None
    soft: tuple[Any, Any] | None = None
    choices: Sequence[Any] | None = None
    doc: str = ""
    unit: str | None = None
    dynamic: bool = False
    type: Any = None
    step: float | None = None
    name: str = ""

    @property
    def lanes(self) -> int:
        """Number of lanes of a vector field (1 for a scalar)."""
        return len(typing.get_args(self.type)) if _is_tuple(self.type) else 1

    @property
    def scalar_type(self) -> type:
        """The type of one lane."""
        return typing.get_args(self.type)[0] if _is_tuple(self.type) else self.type

    @property
    def slider_range(self) -> tuple[Any, Any] | None:
        """The range a slider shows: ``soft``, else ``bounds`` when both ends are set."""
        rng = self.soft or self.bounds
        if rng is None or rng[0] is None or rng[1] is None:
            return None
        return rng

    def check(self, value: Any, owner: str = "") -> Any:
        """Returns ``value`` converted to the field's type; refuses one out of range.

        Raises:
            ParamsError: naming the owner, the field, the value and what is accepted.
        """
        where = f"{owner}.{self.name}" if owner else self.name
        if _is_tuple(self.type):
            if isinstance(value, str) or not isinstance(value, Sequence | tuple | list):
                raise ParamsError(f"{where}: expected {self.lanes} numbers, got {value!r}")
            if len(value) != self.lanes:
                raise ParamsError(f"{where}: expected {self.lanes} numbers, got {value!r}")
            return tuple(self._check_scalar(v, self.scalar_type, where) for v in value)
        return self._check_scalar(value, self.type, where)

    def _check_scalar(self, value: Any, typ: type, where: str) -> Any:
        if typ is bool:
            if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
                value = bool(value)
            else:
                raise ParamsError(f"{where}: expected a bool, got {value!r}")
        elif typ is int:
            if isinstance(value, bool) or not _is_integral(value):
                raise ParamsError(f"{where}: expected an integer, got {value!r}")
            value = int(value)
        elif typ is float:
            if isinstance(value, bool) or not _is_number(value):
                raise ParamsError(f"{where}: expected a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ParamsError(f"{where}: expected a finite number, got {value!r}")
        elif typ is str:
            if not isinstance(value, str):
                raise ParamsError(f"{where}: expected a string, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ParamsError(f"{where}: expected one of {list(self.choices)}, got {value!r}")
        if self.bounds is not None and typ in (int, float):
            lo, hi = self.bounds
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                # a half-open range says its one end (">= 0.0"), not "[0.0, None]"
                accepted = (
                    f"a value >= {lo}"
                    if hi is None
                    else f"a value <= {hi}"
                    if lo is None
                    else f"a value in [{lo}, {hi}]"
                )
                raise ParamsError(f"{where}: expected {accepted}, got {value!r}")
        return value

    def describe(self) -> dict[str, Any]:
        """Returns the field's schema as JSON-serializable data."""
        return {
            "name": self.name,
            "type": _type_name(self.type),
            "default": list(self.default) if isinstance(self.default, tuple) else self.default,
            "bounds": list(self.bounds) if self.bounds else None,
            "soft": list(self.slider_range) if self.slider_range else None,
            "choices": list(self.choices) if self.choices is not None else None,
            "doc": self.doc,
            "unit": self.unit,
            "dynamic": self.dynamic,
        }


def _is_tuple(t: Any) -> bool:
    return typing.get_origin(t) is tuple


def _is_integral(v: Any) -> bool:
    try:
        import numpy as np

        if isinstance(v, np.integer):
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def _is_number(v: Any) -> bool:
    import numbers

    return isinstance(v, numbers.Real)


def _type_name(t: Any) -> str:
    if _is_tuple(t):
        return f"tuple[{', '.join(a.__name__ for a in typing.get_args(t))}]"
    return t.__name__


def _infer_type(f: Field, annotation: Any) -> Any:
    if f.type is not None:
        return f.type
    if isinstance(annotation, str):
        annotation = {"float": float, "int": int, "bool": bool, "str": str}.get(annotation, None)
        if annotation is None and isinstance(f.default, tuple):
            annotation = tuple[(type(f.default[0]),) * len(f.default)]
    if annotation in _TYPES or _is_tuple(annotation):
        return annotation
    d = f.default
    if isinstance(d, bool):
        return bool
    if isinstance(d, int):
        return int
    if isinstance(d, float):
        return float
    if isinstance(d, str):
        return str
    if isinstance(d, tuple) and d:
        return tuple[(float if any(isinstance(x, float) for x in d) else int,) * len(d)]
    raise ParamsError(f"field {f.name!r}: expected a type (float, int, bool, str), got {d!r}")


class Params:
    """Base of a Params class: declare fields as class attributes (``Field`` or plain defaults).

    ``Params(**values)`` validates each value; unknown names are refused. Instances are
    immutable; ``replace(**changes)`` returns a new validated instance.
    """

    __fields__: ClassVar[dict[str, Field]] = {}
    #: the name of what the class parametrises (a generator, a node); used in messages.
    owner: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "__fields__", {}))
        try:
            annotations = typing.get_type_hints(cls)
        except Exception:
            annotations = dict(getattr(cls, "__annotations__", {}))
        own = cls.__dict__.get("__annotations__", {})
        declared = [n for n, v in cls.__dict__.items() if isinstance(v, Field)]
        for name in dict.fromkeys([*own, *declared]):
            if name.startswith("_") or name == "owner":
                continue
            if typing.get_origin(annotations.get(name)) is ClassVar:
                continue
            raw = cls.__dict__.get(name, _MISSING)
            f = dataclasses.replace(raw) if isinstance(raw, Field) else Field(default=raw)
            f.name = name
            if f.default is _MISSING:
                raise ParamsError(f"{cls.__name__}.{name}: expected a default value, got none")
            f.type = _infer_type(f, annotations.get(name))
            f.default = f.check(f.default, cls.__name__)
            fields[name] = f
        cls.__fields__ = fields
        for name in fields:
            if name in cls.__dict__:
                delattr(cls, name)

    def __init__(self, **values: Any):
        cls = type(self)
        unknown = sorted(set(values) - set(cls.__fields__))
        if unknown:
            raise ParamsError(
                f"{cls._owner_name()}: expected fields among {sorted(cls.__fields__)}, "
                f"got unknown {unknown}"
            )
        data = {}
        for name, f in cls.__fields__.items():
            data[name] = f.check(values[name], cls._owner_name()) if name in values else f.default
        object.__setattr__(self, "_values", data)

    @classmethod
    def _owner_name(cls) -> str:
        return cls.owner or cls.__name__

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use replace({name}=...)")

    def __eq__(self, other: object) -> bool:
        # the class name, not the class: each explore view of a generator makes its own
        # Params class, and two of them holding the same values are the same values
        return (
            isinstance(other, Params)
            and type(other).__name__ == type(self).__name__
            and other._values == self._values  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self._values.items()))))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{type(self).__name__}({inner})"

    # -- API ----------------------------------------------------------------------------
    @classmethod
    def fields(cls) -> dict[str, Field]:
        """Returns the declared fields by name, in declaration order."""
        return dict(cls.__fields__)

    @classmethod
    def check_field(cls, name: str, value: Any) -> Any:
        """Returns ``value`` converted as the field ``name`` accepts it (its type and range),
        as ``cls(name=value)`` would hold it, without making an instance.

        Raises:
            ParamsError: an unknown ``name``, or a value the field refuses (naming the
                owner, the field, the value and what is accepted).
        """
        f = cls.__fields__.get(name)
        if f is None:
            raise ParamsError(
                f"{cls._owner_name()}: expected fields among {sorted(cls.__fields__)}, "
                f"got unknown {[name]}"
            )
        return f.check(value, cls._owner_name())

    @classmethod
    def dynamic_fields(cls) -> list[str]:
        """Returns the names of the dynamic fields."""
        return [n for n, f in cls.__fields__.items() if f.dynamic]

    def replace(self, **changes: Any) -> Params:
        """Returns a copy with ``changes`` applied and validated."""
        return type(self)(**{**self._values, **changes})

    def to_dict(self) -> dict[str, Any]:
        """Returns the values by field name."""
        return dict(self._values)

    @classmethod
    def resolve(cls, value: Params | Mapping[str, Any] | None) -> Params:
        """Returns an instance from an instance, a mapping of values, or None (defaults)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Params):
            raise ParamsError(
                f"{cls._owner_name()}: expected {cls.__name__} or a dict, got {type(value).__name__}"
            )
        if not isinstance(value, Mapping):
            raise ParamsError(
                f"{cls._owner_name()}: expected {cls.__name__} or a dict of fields, got {value!r}"
            )
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ParamsError(
                f"{cls._owner_name()}: expected field names (str) as keys, got {bad[0]!r} "
                f"among {sorted(cls.__fields__)}"
            )
        return cls(**dict(value))

    @classmethod
    def from_legacy(cls, config: Any) -> Params:
        """Reads fields of the same name from a legacy config object (defaults where absent)."""
        return cls(**{n: getattr(config, n) for n in cls.__fields__ if hasattr(config, n)})

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """Returns the schema: the class name, its owner and every field's description."""
        return {
            "name": cls.__name__,
            "owner": cls.owner,
            "fields": [f.describe() for f in cls.__fields__.values()],
        }


def params_class(name: str, fields: Mapping[str, Field], owner: str = "") -> type[Params]:
    """Returns a Params class made from a mapping of fields (used for node parameters)."""
    ns: dict[str, Any] = {"owner": owner, "__annotations__": {}}
    for n, f in fields.items():
        ns[n] = f
        ns["__annotations__"][n] = f.type if f.type is not None else Any
    return type(name, (Params,), ns)
