"""A track generator or a course as a node of a graph (``TrackGenerator.node()``,
``Course.node()``).

The node's parameters are the generator's Params fields (a dynamic field stays dynamic:
moving it replays the graph's recording, no plan) and ``epoch`` (dynamic too). Each cook
calls ``update`` with what moved and ``generate(epoch=...)``, and answers the result as the
runtime's types: ``xy`` a Vec2 Column, ``valid`` an Int column, ``valid_count`` a live
count, so the next node compacts the valid envs on the device with nothing read back.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..columns import Record
from ..errors import GeneratorError
from ..nodes import Node
from ..params import Field, Params
from ._checks import EPOCH_RANGE

#: the node parameter every generator node has
EPOCH = Field(
    0, bounds=EPOCH_RANGE, soft=(0, 1000), dynamic=True, doc="the epoch of the call (replays)"
)


def _fields(pcls: type[Params] | None, values: Params | None, prefix: str = "") -> dict:
    """The fields of ``pcls`` named ``prefix + name``, their defaults the current values."""
    if pcls is None:
        return {}
    return {
        f"{prefix}{k}": dataclasses.replace(f, default=getattr(values, k), name="")
        for k, f in pcls.fields().items()
    }


def _node(
    fn: Callable[..., Any], fields: dict[str, Field], name: str, label: str, epoch: int
) -> Node:
    if "epoch" in fields:
        raise GeneratorError(
            f"{label}.node: expected a Params class without an 'epoch' field (the node's "
            f"own), got one in {sorted(fields)}"
        )
    params = {**fields, "epoch": dataclasses.replace(EPOCH, default=epoch)}
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in params]
    )
    fn.__doc__ = f"Calls {label} with the node's Params fields and epoch; answers its columns."
    return Node(fn, params=params, name=name)


def _moved(gen: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields to update: every dynamic one (its buffer takes the node's value, as an
    expression a replay evaluates), and a static one that differs (a rebuild)."""
    if gen.params is None:
        return {}
    dyn = set(type(gen.params).dynamic_fields())
    return {k: v for k, v in values.items() if k in dyn or v != getattr(gen.params, k)}


def track_node(tg: Any, name: str | None = None) -> Node:
    """Returns a node calling ``tg`` (see the module docstring).

    Raises:
        GeneratorError: a Params class with a field named ``epoch``.
    """
    fields = _fields(type(tg.params) if tg.params is not None else None, tg.params)
    label = f"TrackGenerator({tg.stage.name!r})"

    def run(**values: Any) -> Record:
        epoch = values.pop("epoch")
        moved = _moved(tg, values)
        if moved:
            tg.update(generator_params=moved)
        return tg.generate(epoch=epoch).columns()

    return _node(run, fields, name or f"track_{tg.stage.name}", label, tg.config.epoch)


def course_node(course: Any, name: str | None = None) -> Node:
    """Returns a node calling ``course``: its generators' dynamic Params fields (``track_``
    and ``gates_`` before their names) and ``epoch`` (a static field is the course's own:
    build another course to change it).

    Raises:
        GeneratorError: never for the built-in generators (kept for the signature's sake).
    """
    gens = {"track_": course.track, "gates_": course.gates}
    fields: dict[str, Field] = {}
    for prefix, gen in gens.items():
        all_ = _fields(type(gen.params) if gen.params is not None else None, gen.params, prefix)
        fields.update({k: f for k, f in all_.items() if f.dynamic})

    def run(**values: Any) -> Record:
        epoch = values.pop("epoch")
        for prefix, gen in gens.items():
            mine = {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}
            if mine:
                gen.update(generator_params=mine)
        return course.generate(epoch=epoch).columns()

    return _node(run, fields, name or "course", "Course", course.track.config.epoch)


__all__ = ["EPOCH", "course_node", "track_node"]
