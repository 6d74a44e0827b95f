"""What ``explore`` can cook: a function, a track generator (by name, Stage or spec), a graph.

A target states the Params class its form edits (``params_class``), the values it starts
from (``initial``), cooks one set of values into a ``Frame`` (``cook``), and writes the
Python that re-creates a set of values in a script (``code``). ``as_target`` picks the
target for what the user passed.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from .._traffic import collect
from ..errors import ParamsError, ProcgenError
from ..params import Field, Params, params_class
from .frame import Frame, ReportRow, frame_from, read_outputs, report_rows

#: called by a cook with (fraction done in [0, 1], what it is doing).
Progress = Callable[[float, str], None]


def _no_progress(fraction: float, text: str) -> None:
    """Ignores progress."""


def _literal(values: Mapping[str, Any], indent: str = "    ") -> str:
    if not values:
        return "{}"
    inner = "".join(f"{indent}    {k!r}: {v!r},\n" for k, v in values.items())
    return "{\n" + inner + indent + "}"


class Target(abc.ABC):
    """Base of the targets: a Params class to edit and a cook of one set of values.

    Attributes:
        name: what the view's title shows.
        params_class: the Params class the form edits.
        initial: the values the view starts from.
        group: whether the form groups ``"<group>.<name>"`` fields under headings.
    """

    name: str = ""
    params_class: type[Params]
    group: bool = False

    @property
    def initial(self) -> Params:
        """The values the view starts from (the defaults unless a target says otherwise)."""
        return self.params_class()

    @abc.abstractmethod
    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        """Cooks ``params`` and returns the frame to draw."""

    @abc.abstractmethod
    def code(self, params: Params) -> str:
        """Returns Python source that re-creates ``params`` and the cook in a script."""


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, Any]:
    t0 = time.perf_counter()
    with collect() as tr:
        out = fn()
    return out, (time.perf_counter() - t0) * 1e3, tr


class FunctionTarget(Target):
    """A Python function of a Params instance returning tracks (and gates, counts).

    Args:
        fn: ``fn(params) -> result``; the result holds ``xy`` (``[E, N, 2]`` or flat),
            ``valid``, optionally ``gates`` and ``counts``, as a mapping or attributes.
        params: the Params class (or an instance to start from) ``fn`` takes.
        name: the title (the function's name when None).

    Raises:
        ParamsError: when ``params`` is not a Params class or instance.
    """

    def __init__(self, fn: Callable[[Params], Any], params: type[Params] | Params, name: str = ""):
        if isinstance(params, Params):
            self.params_class, self._initial = type(params), params
        elif isinstance(params, type) and issubclass(params, Params):
            self.params_class, self._initial = params, params()
        else:
            raise ParamsError(f"explore(fn, params=...): expected a Params class, got {params!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    @property
    def initial(self) -> Params:
        return self._initial

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        progress(0.1, f"calling {self.name}")
        result, ms, tr = _timed(lambda: self.fn(params))
        progress(0.9, "reading back")
        report = report_rows(_report_of(result)) or (
            ReportRow(self.name, ms, tr.launches, tr.readbacks, tr.builds, tr.uploads, tr.waits),
        )
        return frame_from(result, report=report, elapsed_ms=ms, traffic=tr)

    def code(self, params: Params) -> str:
        cls, fn = self.params_class, self.fn
        lines = []
        for obj in (cls, fn):
            mod = getattr(obj, "__module__", "__main__")
            if mod != "__main__":
                lines.append(f"from {mod} import {obj.__qualname__.split('.')[0]}")
        lines += [
            "",
            f"params = {cls.__qualname__}(**{_literal(params.to_dict(), '')})",
            f"result = {fn.__qualname__}(params)",
        ]
        return "\n".join(lines).lstrip("\n") + "\n"


def _report_of(result: Any) -> Any:
    if isinstance(result, Mapping):
        return result.get("report")
    return getattr(result, "report", None)


#: the fields every track generator takes besides its own Params.
SHARED_FIELDS: dict[str, Field] = {
    "num_envs": Field(16, bounds=(1, 65536), soft=(1, 64), doc="environments generated at once"),
    "num_points": Field(
        128, bounds=(8, 65536), soft=(16, 512), step=8, doc="centerline points per env"
    ),
    "seed": Field(0, bounds=(0, 2**31 - 1), doc="seed of env 0 (env e uses seed + e)"),
    "epoch": Field(0, bounds=(0, 2**31 - 1), doc="mixed into every env's seed; new tracks"),
}


def _generator_params(obj: Any) -> type[Params] | None:
    if isinstance(getattr(obj, "Params", None), type):
        return obj.Params
    p = getattr(obj, "params", None)
    return p if isinstance(p, type) and issubclass(p, Params) else None


def _track_gen() -> Any:
    try:
        from ..track_gen import presets
    except ImportError as exc:
        raise ProcgenError(
            f"explore: expected procgen_nb.track_gen (presets.track) to cook a generator, "
            f"got ImportError: {exc}"
        ) from exc
    return presets


def _validity_fields() -> dict[str, Field]:
    try:
        from ..track_gen.config import ValidityParams
    except ImportError:
        return {}
    return dict(ValidityParams.fields())


def _reasons() -> dict[int, str]:
    try:
        from ..track_gen.pipeline import REASONS
    except ImportError:
        return {}
    return dict(REASONS)


class TrackTarget(Target):
    """A registered track generator: its Params, the validity thresholds and the shared
    fields (``num_envs``, ``num_points``, ``seed``, ``epoch``).

    A change of a dynamic field or a validity threshold updates the generator in place
    (``TrackGenerator.update``: no new recording); any other change builds it again.

    Args:
        generator: the generator's registered name.
        gen_params: its Params class (None: it takes no generator_params).
        num_envs, num_points, seed: the starting values of the shared fields.

    Raises:
        ProcgenError: when ``procgen_nb.track_gen`` is not importable (at the first cook).
    """

    def __init__(
        self,
        generator: str,
        gen_params: type[Params] | None,
        *,
        num_envs: int = 16,
        num_points: int = 128,
        seed: int = 0,
    ):
        self.name = generator
        self.generator = generator
        own = dict(gen_params.fields()) if gen_params is not None else {}
        self._own = list(own)
        validity = {k: f for k, f in _validity_fields().items() if k not in own}
        self._validity = list(validity)
        shared = {k: f for k, f in SHARED_FIELDS.items() if k not in own and k not in validity}
        self._shared = list(shared)
        fields = {k: dataclasses.replace(f) for k, f in {**own, **validity, **shared}.items()}
        self.params_class = params_class(f"{_camel(generator)}ExploreParams", fields, generator)
        self._start = {"num_envs": num_envs, "num_points": num_points, "seed": seed}
        self._key: Any = None
        self._gen: Any = None

    @property
    def initial(self) -> Params:
        return self.params_class(**{k: v for k, v in self._start.items() if k in self._shared})

    def _split(self, params: Params) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        d = params.to_dict()
        return (
            {k: d[k] for k in self._own},
            {k: d[k] for k in self._validity},
            {k: d[k] for k in self._shared},
        )

    def _prepare(self, own: dict, validity: dict, shared: dict, progress: Progress) -> str:
        presets = _track_gen()
        build = {k: v for k, v in shared.items() if k != "epoch"}
        key = tuple(build.items())
        if self._gen is not None and key == self._key:
            gen = self._gen
            changed_own = {k: v for k, v in own.items() if getattr(gen.params, k) != v}
            changed_val = {
                k: v for k, v in validity.items() if getattr(gen.config.validity, k) != v
            }
            if not changed_own and not changed_val:
                return "reused"
            progress(0.05, "updating the generator")
            rebuilt = gen.update(generator_params=changed_own or None, validity=changed_val or None)
            return "rebuilt" if rebuilt else "updated"
        progress(0.05, "building the generator (the first build compiles kernels)")
        self._gen, self._key = None, None
        self._gen = presets.track(
            generator=self.generator,
            generator_params=own or None,
            validity=validity or None,
            **shared,
        )
        self._key = key
        return "built"

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        own, validity, shared = self._split(params)
        rows = []
        t0 = time.perf_counter()
        with collect() as total:
            how, ms, tr = _timed(lambda: self._prepare(own, validity, shared, progress))
            rows.append(_row(f"{self.generator}: {how}", ms, tr, reused=how == "reused"))
            progress(0.6, "generating")
            epoch = shared.get("epoch")
            result, ms, tr = _timed(lambda: self._gen.generate(epoch=epoch))
            rows.append(_row("generate", ms, tr))
            progress(0.85, "reading back")
            data, ms, tr = _timed(lambda: result.numpy() if hasattr(result, "numpy") else result)
            rows.append(_row("read back for the view", ms, tr))
        elapsed = (time.perf_counter() - t0) * 1e3
        frame = frame_from(
            data,
            num_envs=shared.get("num_envs"),
            report=tuple(rows),
            elapsed_ms=elapsed,
            traffic=total,
        )
        reason = data.get("reason") if isinstance(data, Mapping) else None
        if reason is not None:
            for bit, text in _reasons().items():
                frame.counts[f"invalid: {text.split(' (')[0]}"] = int(((reason & bit) != 0).sum())
        return frame

    def code(self, params: Params) -> str:
        own, validity, shared = self._split(params)
        args = "".join(f"    {k}={v!r},\n" for k, v in shared.items())
        val = f"    validity={_literal(validity, '    ')},\n" if validity else ""
        return (
            "from procgen_nb.track_gen import presets\n"
            "\n"
            f"generator_params = {_literal(own, '')}\n"
            "generator = presets.track(\n"
            f"    generator={self.generator!r},\n"
            "    generator_params=generator_params,\n"
            f"{val}"
            f"{args}"
            ")\n"
            "result = generator.generate()\n"
        )


def _row(name: str, ms: float, tr: Any, reused: bool | None = None) -> ReportRow:
    return ReportRow(name, ms, tr.launches, tr.readbacks, tr.builds, tr.uploads, tr.waits, reused)


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.replace(".", "_").split("_") if p)


class GraphTarget(Target):
    """A graph: its ``"node.param"`` fields, cooked with ``graph.cook(params=...)``.

    Args:
        graph: a ``procgen_nb.Graph`` (``params()``, ``values``, ``cook()``).
        outputs: the one node whose output is drawn and counted; every node's when None
            (vector columns as point clouds, the first output holding ``xy``/``centerline``
            or ``gates`` as tracks, numbers and live counts as counts).
    """

    group = True

    def __init__(self, graph: Any, outputs: str | None = None):
        self.graph = graph
        self.name = getattr(graph, "name", "") or "graph"
        self._output = outputs
        fields = {k: dataclasses.replace(f, name=k) for k, f in graph.params().items()}
        self.params_class = params_class("GraphParams", fields, self.name)

    @property
    def initial(self) -> Params:
        known = self.params_class.fields()
        values = getattr(self.graph, "values", {}) or {}
        return self.params_class(**{k: v for k, v in values.items() if k in known})

    def cook(self, params: Params, progress: Progress = _no_progress) -> Frame:
        progress(0.1, "cooking the graph")
        result, ms, tr = _timed(lambda: self.graph.cook(params=params.to_dict()))
        progress(0.85, "reading back")
        outputs = dict(getattr(result, "outputs", {}) or {})
        if self._output is not None:
            if self._output not in outputs:
                raise ParamsError(
                    f"explore(graph, outputs=...): expected one of {sorted(outputs)}, "
                    f"got {self._output!r}"
                )
            outputs = {self._output: outputs[self._output]}
        tracks, points, counts = read_outputs(outputs)
        report = getattr(result, "report", None)
        frame = frame_from(
            tracks if tracks is not None else {},
            points=points,
            report=report_rows(report),
            report_text=report.to_text() if hasattr(report, "to_text") else "",
            elapsed_ms=ms,
            traffic=tr,
        )
        frame.counts.update({k: v for k, v in counts.items() if k not in frame.counts})
        return frame

    def code(self, params: Params) -> str:
        return (
            "# graph: the procgen_nb.Graph you explored\n"
            f"params = {_literal(params.to_dict(), '')}\n"
            "result = graph.cook(params=params)\n"
        )


def as_target(target: Any, params: type[Params] | Params | None = None, **options: Any) -> Target:
    """Returns the ``Target`` for what ``explore`` was given.

    Args:
        target: a ``Target``; a generator name; a Stage class or ``GeneratorSpec`` (an
            object with ``name`` and a ``Params``/``params`` class); a graph (with
            ``params()`` and ``cook()``); or a function of a Params instance (with
            ``params=``).
        params: the Params class (or instance) a function target takes.
        **options: passed to the target (``num_envs``, ``num_points``, ``seed`` for a
            generator; ``outputs`` for a graph).

    Returns:
        The target.

    Raises:
        ParamsError: for anything else, naming what is accepted.
        ProcgenError: for a generator name when ``procgen_nb.track_gen`` is missing.
    """
    if isinstance(target, Target):
        return target
    if isinstance(target, str):
        return TrackTarget(target, _registered_params(target), **options)
    if callable(getattr(target, "cook", None)) and callable(getattr(target, "params", None)):
        return GraphTarget(target, **options)
    name = getattr(target, "name", None)
    if isinstance(name, str) and (
        _generator_params(target) is not None or hasattr(target, "generate") or _is_stage(target)
    ):
        _ensure_registered(target, name)
        return TrackTarget(name, _generator_params(target), **options)
    if callable(target) and params is not None:
        return FunctionTarget(target, params, **options)
    raise ParamsError(
        "explore: expected a generator name, a Stage, a GeneratorSpec, a graph, or a function "
        f"with params=<Params class>, got {target!r}"
    )


def _registered_params(name: str) -> type[Params] | None:
    try:
        from ..track_gen.plugin import registry
    except ImportError as exc:
        raise ProcgenError(
            f"explore({name!r}): expected procgen_nb.track_gen to look the generator up, "
            f"got ImportError: {exc}"
        ) from exc
    return _generator_params(registry.get("generator", name))


def _is_stage(obj: Any) -> bool:
    try:
        from ..track_gen.plugin import Stage
    except ImportError:
        return False
    return isinstance(obj, type) and issubclass(obj, Stage)


def _ensure_registered(spec: Any, name: str) -> None:
    """Registers a Stage class or GeneratorSpec not registered yet; refuses a name clash."""
    try:
        from ..errors import GeneratorError
        from ..track_gen.plugin import registry
    except ImportError as exc:
        raise ProcgenError(
            f"explore({name!r}): expected procgen_nb.track_gen to cook a generator, "
            f"got ImportError: {exc}"
        ) from exc
    try:
        have = registry.get("generator", name)
    except GeneratorError:
        registry.add(spec)
        return
    if have is not spec:
        raise ParamsError(
            f"explore: expected the generator registered as {name!r} or a new name, got "
            f"another {type(spec).__name__} named {name!r}"
        )
