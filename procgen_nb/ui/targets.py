"""``as_target``: what ``explore`` cooks for what it is given.

A generator name, a Stage class or a ``GeneratorSpec`` becomes a ``TrackTarget`` (a Stage
or spec not registered yet is registered under its name), a graph a ``GraphTarget``, a
built ``TrackGenerator`` a ``GraphTarget`` over a graph of its node (``tg.node()``: its
Params fields and ``epoch`` are the controls), a function with ``params=`` a
``FunctionTarget``.
"""

from __future__ import annotations

from typing import Any

from ..errors import ParamsError, ProcgenError
from ..params import Params
from .course_target import COURSE_FIELDS, CourseTarget, course_target, gate_spec
from .graph_target import GraphTarget
from .target import FunctionTarget, Target
from .track_target import TrackTarget, _generator_params


def as_target(target: Any, params: type[Params] | Params | None = None, **options: Any) -> Target:
    """Returns the ``Target`` for what ``explore`` was given.

    Args:
        target: a ``Target``; a generator name (a ``TrackTarget``) or a gate generator name
            (a ``CourseTarget``); a Stage class or ``GeneratorSpec`` (an object with
            ``name`` and a ``Params``/``params`` class); an anchors Stage or a
            ``GateGeneratorSpec``; a built ``TrackGenerator`` (a graph of its node), a
            built ``Course`` or ``GateGenerator``; a graph (with
            ``params()`` and ``cook()``); or a function of a Params instance (with
            ``params=``).
        params: the Params class (or instance) a function target takes.
        **options: passed to the target: ``num_envs``, ``num_points``, ``seed`` for a
            generator; those and ``generator``, ``track_width``, ``max_gates``, ``epoch``
            for a gate generator; ``outputs`` for a graph; ``name`` for a function.

    Returns:
        The target.

    Raises:
        ParamsError: for anything else, or an option the target does not take, naming
            what is accepted.
        ProcgenError: for a generator name when ``procgen_nb.track_gen`` is missing.
    """
    if isinstance(target, Target):
        _check_options("a Target", options, ())
        return target
    if isinstance(target, str):
        return _by_name(target, options)
    if callable(getattr(target, "cook", None)) and callable(getattr(target, "params", None)):
        _check_options("a graph", options, ("outputs",))
        return GraphTarget(target, **options)
    if _is_track_generator(target):
        _check_options("a track generator", options, ())
        return GraphTarget(_generator_graph(target))
    if _is_course_or_gates(target):
        _check_options("a course", options, ())
        return course_target(target)
    if _is_gate_spec(target):
        _check_options("a gate generator", options, _COURSE_OPTIONS)
        return CourseTarget(target, **options)
    name = getattr(target, "name", None)
    if isinstance(name, str) and (
        _generator_params(target) is not None or hasattr(target, "generate") or _is_stage(target)
    ):
        _check_options("a generator", options, _TRACK_OPTIONS)
        _ensure_registered(target, name)
        return TrackTarget(name, _generator_params(target), spec=target, **options)
    if callable(target) and params is not None:
        _check_options("a function", options, ("name",))
        return FunctionTarget(target, params, **options)
    raise ParamsError(
        "explore: expected a generator or gate generator name, a Stage, a GeneratorSpec, a "
        "course, a graph, or a function with params=<Params class>, got "
        f"{target!r}"
    )


def _by_name(name: str, options: dict[str, Any]) -> Target:
    from ..errors import GeneratorError

    try:
        params = _registered_params(name)
    except GeneratorError as track_error:
        try:
            gate_spec(name)
        except (GeneratorError, ProcgenError):
            raise track_error from None
        _check_options("a gate generator", options, _COURSE_OPTIONS)
        return CourseTarget(name, **options)
    _check_options("a generator", options, _TRACK_OPTIONS)
    return TrackTarget(name, params, **options)


def _is_track_generator(obj: Any) -> bool:
    try:
        from ..track_gen import TrackGenerator
    except ImportError:
        return False
    return isinstance(obj, TrackGenerator)


def _generator_graph(tg: Any) -> Any:
    """A graph of one node, ``tracks``: the generator's node (see ``TrackGenerator.node``)."""
    from ..graph import Graph

    g = Graph(f"track {tg.stage.name}")
    g.add("tracks", tg.node())
    return g


def _is_course_or_gates(obj: Any) -> bool:
    try:
        from ..track_gen.gates import Course, GateGenerator
    except ImportError:
        return False
    return isinstance(obj, Course | GateGenerator)


def _is_gate_spec(obj: Any) -> bool:
    try:
        from ..track_gen.gates.stage import is_gate_stage
        from ..track_gen.plugin import GateGeneratorSpec
    except ImportError:
        return False
    return isinstance(obj, GateGeneratorSpec) or is_gate_stage(obj)


_COURSE_OPTIONS = ("generator", *COURSE_FIELDS)
_TRACK_OPTIONS = ("num_envs", "num_points", "seed")


def _check_options(kind: str, options: dict[str, Any], accepted: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ParamsError(
            f"explore options for {kind}: expected names among {list(accepted)}, got {unknown}"
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
