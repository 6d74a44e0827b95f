"""What a generator plugin imports: ``Stage``, ``GeneratorSpec``, ``Params``, ``registry``.

A generator is either a ``Stage`` subclass (recommended: dynamic fields, per-point
attributes, ``provides``, per-env size) or a ``GeneratorSpec`` (six fields, run through an
adapter stage). Both are registered in ``registry`` under the ``generator=`` name that
selects them; a third party's name is dotted (``"acme.wobbly"``). Plugins installed as
separate distributions are found through the entry-point group ``procgen_nb.track_gen``:
each entry point names a Stage class, a ``GeneratorSpec``, or a ``register(registry)``
function.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.metadata
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..errors import DuplicateSpecError, GeneratorError
from ..params import Field, Params

ENTRY_POINT_GROUP = "procgen_nb.track_gen"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)*$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)+$")


class CaptureClass(enum.Enum):
    """How a Stage's ``enqueue`` can be recorded.

    GRAPH: a fixed list of device work, recorded once and replayed.
    BOUNDED: device loops with a fixed upper bound (``ctx.bounded_loop``), recorded unrolled
        (every iteration replays); converged envs freeze on the device and skip the work.
    HOST: reads the device or branches in Python (inside ``ctx.host()``); runs eagerly on
        every call, and refuses to be recorded (``NotCapturableError``).
    """

    GRAPH = "graph"
    BOUNDED = "bounded"
    HOST = "host"


class _ParamsAlias:
    """The deprecated ``.params`` alias of a built-in Stage class (read ``.Params``)."""

    def __get__(self, obj: Any, owner: type) -> Any:
        warnings.warn(
            f"{owner.__name__}.params is deprecated: the built-in generators are Stage "
            "classes; read .Params",
            DeprecationWarning,
            stacklevel=2,
        )
        return owner.Params


class Stage:
    """A step of the track pipeline: a generator, or a stage after resampling.

    Subclass it and set the class attributes, then implement ``build``.

    Attributes:
        name: the ``generator=`` string (dotted for third parties).
        Params: the stage's ``Params`` class (None: no parameters). Dynamic fields are read
            through ``b.param(name)`` and change without a new recording.
        writes: the outputs ``build`` may ask for with ``b.write``: ``"xy"`` (the raw loop,
            ``[E*b.raw]`` vec2), ``"valid"`` (``[E]`` int32, 0 rejects an env), ``"count"``
            (``[E]`` int32 per-env size, at most ``b.raw``) and attribute names.
        attributes: per-point float32 attributes this stage writes (name -> doc); a
            generator's are resampled along with xy.
        provides: facts downstream stages may rely on; the pipeline knows ``"uniform"``
            (raw points already evenly spaced: resampling is skipped when ``raw == N``)
            and ``"ccw"`` (counter-clockwise; the conformance kit checks it).
        capture: a ``CaptureClass``.
        phase: ``"generate"`` (writes the raw loop) or ``"post"`` (runs after resampling and
            reads the final loop through ``b.read("xy")``).
    """

    name: ClassVar[str] = ""
    Params: ClassVar[type[Params] | None] = None
    writes: ClassVar[tuple[str, ...]] = ("xy", "valid")
    attributes: ClassVar[Mapping[str, str]] = {}
    provides: ClassVar[frozenset[str]] = frozenset()
    capture: ClassVar[CaptureClass] = CaptureClass.GRAPH
    phase: ClassVar[str] = "generate"

    def raw_points(self, config: Any, params: Params | None) -> int:
        """Returns the raw loop's size per env (the most points ``count`` may name).

        The default is ``config.num_points``.
        """
        return int(config.num_points)

    def build(self, b: Any, params: Params | None) -> Callable[[Any], None]:
        """Allocates buffers through ``b`` and returns ``enqueue(ctx)``.

        Args:
            b: the ``StageBuilder`` (``b.scratch``, ``b.write``, ``b.seed``, ``b.salt``...).
            params: the resolved, validated Params instance (None without a Params class).

        Returns:
            ``enqueue(ctx)``: emits the stage's device work through ``ctx``; it must not
            allocate, read back (outside ``ctx.host()`` in a HOST stage) or sync.
        """
        raise GeneratorError(
            f"{type(self).__name__}.build: expected an override in the Stage subclass, got none"
        )


class _BuiltinStage(Stage):
    """Base of the built-in generators: adds the deprecated ``.params`` alias."""

    params = _ParamsAlias()


@dataclasses.dataclass
class GeneratorSpec:
    """A generator written as two functions (the 0.1-compatible form).

    Attributes:
        name: the ``generator=`` string (dotted for third parties).
        alloc_scratch: ``(config) -> scratch``, called once.
        generate: ``(seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx=None)``.
        capturable: False makes it a HOST generator (runs eagerly each call).
        accepts_ctx: True when ``generate`` takes ``ctx=`` and emits all work through it.
        params: an optional Params class with static fields only.
    """

    name: str
    alloc_scratch: Callable[[Any], Any]
    generate: Callable[..., None]
    capturable: bool = True
    accepts_ctx: bool = False
    params: type[Params] | None = None


@dataclasses.dataclass
class GateGeneratorSpec:
    """The 0.1 gate generator form (deprecated; the gate pipeline binds it in a later release).

    Attributes have the meaning of ``GeneratorSpec``'s, with ``generate(seeds_wp, config,
    out, scratch, ctx=None)``, ``max_gates(config) -> int`` and ``supported_orderings``.
    """

    name: str
    alloc_scratch: Callable[[Any], Any]
    generate: Callable[..., None]
    max_gates: Callable[[Any], int]
    supported_orderings: frozenset[str] = frozenset({"ccw"})
    capturable: bool = True
    accepts_ctx: bool = False
    params: type[Params] | None = None


def _kind_of(spec: Any) -> str:
    if isinstance(spec, GeneratorSpec):
        return "generator"
    if isinstance(spec, GateGeneratorSpec):
        return "gate_generator"
    if (isinstance(spec, type) and issubclass(spec, Stage)) or isinstance(spec, Stage):
        return {"generate": "generator", "anchors": "gate_generator"}.get(spec.phase, "stage")
    raise GeneratorError(
        f"registry.add spec: expected a Stage subclass, a GeneratorSpec or a GateGeneratorSpec, "
        f"got {spec!r}"
    )


class Registry:
    """Generators and stages by kind and name.

    Kinds: ``"generator"``, ``"stage"`` (post-resample stages) and ``"gate_generator"``.
    Built-ins are registered on first use, by the loaders ``track_gen._builtins`` adds;
    plugins through the entry-point group ``procgen_nb.track_gen``.
    """

    KINDS = ("generator", "gate_generator", "stage")

    def __init__(self) -> None:
        self._specs: dict[str, dict[str, Any]] = {k: {} for k in self.KINDS}
        self._lock = threading.RLock()
        self._loaders_run: list[Callable[[Registry], None]] = []
        self._loaded_count = 0
        self._loading = 0
        self._loaded_eps: set[tuple[str, str]] = set()
        self._ep_errors: dict[str, str] = {}

    # -- adding -----------------------------------------------------------------------
    def add(self, spec: Any, replace: bool = False, *, _builtin: bool = False) -> Any:
        """Registers ``spec`` under its name and returns it.

        Args:
            spec: a Stage subclass, a GeneratorSpec or a GateGeneratorSpec.
            replace: overwrite an existing spec of the same kind and name.

        Raises:
            DuplicateSpecError: the name is taken and ``replace`` is False.
            GeneratorError: a name that is not dotted (third parties) or malformed, or a
                GeneratorSpec whose Params class has a dynamic field.
        """
        kind = _kind_of(spec)
        name = getattr(spec, "name", "")
        if not isinstance(name, str) or not _NAME.match(name):
            raise GeneratorError(
                f"registry.add name: expected a dotted identifier like 'acme.wobbly', got {name!r}"
            )
        if not _builtin and not _DOTTED.match(name):
            raise GeneratorError(
                f"registry.add name: expected a dotted third-party name like "
                f"'<vendor>.{name}', got {name!r}"
            )
        if not isinstance(spec, GeneratorSpec | GateGeneratorSpec):
            stage_params = getattr(spec, "Params", None)
            if stage_params is not None and not (
                isinstance(stage_params, type) and issubclass(stage_params, Params)
            ):
                raise GeneratorError(
                    f"{name} Params: expected a Params subclass or None, got {stage_params!r}"
                )
        pcls = spec.params if isinstance(spec, GeneratorSpec | GateGeneratorSpec) else None
        if pcls is not None:
            if not (isinstance(pcls, type) and issubclass(pcls, Params)):
                raise GeneratorError(
                    f"{name} params: expected a Params subclass or None, got {pcls!r}"
                )
            dyn = pcls.dynamic_fields()
            if dyn:
                raise GeneratorError(
                    f"{name} params: expected static fields only in a GeneratorSpec's Params "
                    f"(a dynamic field needs a Stage and b.param), got dynamic {dyn}"
                )
        with self._lock:
            table = self._specs[kind]
            if name in table and not replace and table[name] is not spec:
                raise DuplicateSpecError(
                    f"registry.add {kind} {name!r}: expected a new name or replace=True, "
                    f"got a duplicate of {_describe(table[name])}"
                )
            table[name] = spec
        return spec

    def remove(self, kind: str, name: str) -> None:
        """Removes a spec (no error when absent)."""
        self._check_kind(kind)
        with self._lock:
            self._specs[kind].pop(name, None)

    # -- looking up ---------------------------------------------------------------------
    def get(self, kind: str, name: str) -> Any:
        """Returns the spec of ``kind`` named ``name``, loading built-ins and plugins first.

        Raises:
            GeneratorError: an unknown kind or name (the message lists what is available).
        """
        self._check_kind(kind)
        self._ensure_loaded()
        spec = self._specs[kind].get(name)
        if spec is None:
            self.load_entry_points()
            spec = self._specs[kind].get(name)
        if spec is None:
            hint = ""
            if name in self._ep_errors:
                hint = f" (its entry point failed: {self._ep_errors[name]})"
            raise GeneratorError(
                f"{kind}: expected one of {self.available(kind)}, got {name!r}{hint}"
            )
        return spec

    def available(self, kind: str) -> list[str]:
        """Returns the sorted names of ``kind``, built-ins and installed plugins included."""
        self._check_kind(kind)
        self._ensure_loaded()
        self.load_entry_points()
        return sorted(self._specs[kind])

    def load_entry_points(self) -> list[str]:
        """Loads every not-yet-loaded entry point of ``procgen_nb.track_gen``.

        Returns the names loaded now. A plugin that fails to import is skipped and its
        error is reported when its name is asked for.
        """
        loaded = []
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            key = (ep.name, ep.value)
            if key in self._loaded_eps:
                continue
            self._loaded_eps.add(key)
            try:
                obj = ep.load()
                if isinstance(obj, GeneratorSpec | GateGeneratorSpec) or (
                    isinstance(obj, type) and issubclass(obj, Stage)
                ):
                    self.add(obj, replace=True)
                elif callable(obj):
                    obj(self)
                else:
                    raise GeneratorError(
                        f"entry point {ep.name}: expected a Stage, a GeneratorSpec or a "
                        f"register(registry) function, got {obj!r}"
                    )
                loaded.append(ep.name)
            except Exception as exc:  # a broken plugin must not break the others
                self._ep_errors[ep.name] = f"{type(exc).__name__}: {exc}"
        return loaded

    def _ensure_loaded(self) -> None:
        """Runs every built-in loader (``_add_builtin_loader``) this registry has not run yet."""
        if self._loaded_count == len(_builtin_loaders):
            return
        with self._lock:
            for loader in list(_builtin_loaders):
                if loader in self._loaders_run:
                    continue
                self._loaders_run.append(loader)  # first: a loader's own lookups skip it
                self._loading += 1
                try:
                    loader(self)
                except BaseException:
                    self._loaders_run.remove(loader)
                    raise
                finally:
                    self._loading -= 1
            if not self._loading:  # other threads take the fast path once all have run
                self._loaded_count = len(self._loaders_run)

    def _check_kind(self, kind: str) -> None:
        if kind not in self.KINDS:
            raise GeneratorError(f"registry kind: expected one of {list(self.KINDS)}, got {kind!r}")


#: functions that add built-ins to a registry, run on its first lookup (``track_gen._builtins``
#: adds the built-in generators, stages and gate generators; this module imports none of them)
_builtin_loaders: list[Callable[[Registry], None]] = []


def _add_builtin_loader(loader: Callable[[Registry], None]) -> None:
    """Makes every registry run ``loader(registry)`` before its next lookup (once each)."""
    if loader not in _builtin_loaders:
        _builtin_loaders.append(loader)


def _describe(spec: Any) -> str:
    if isinstance(spec, GeneratorSpec | GateGeneratorSpec):
        return f"{type(spec).__name__} from {getattr(spec.generate, '__module__', '?')}"
    mod = getattr(spec, "__module__", None) or type(spec).__module__
    return f"{getattr(spec, '__name__', type(spec).__name__)} from {mod}"


#: The process-wide registry.
registry = Registry()

__all__ = [
    "CaptureClass",
    "DuplicateSpecError",
    "Field",
    "GateGeneratorSpec",
    "GeneratorSpec",
    "Params",
    "Registry",
    "Stage",
    "registry",
]
