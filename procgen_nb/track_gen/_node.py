"""A track generator or a course as a node of a graph (``TrackGenerator.node()``,
``Course.node()``).

The node's parameters are the generator's Params fields, its validity's and z profile's
(a dynamic field stays dynamic: moving it replays the graph's recording, no plan) and
``epoch`` (dynamic too). Each cook
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


def _moved(current: Params | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields to update: every dynamic one (its buffer takes the node's value, as an
    expression a replay evaluates), and a static one that differs (a rebuild)."""
    if current is None:
        return {}
    dyn = set(type(current).dynamic_fields())
    return {k: v for k, v in values.items() if k in dyn or v != getattr(current, k)}


def _groups(tg: Any) -> list[tuple[str, str, Callable[[], Params | None]]]:
    """(prefix, update keyword, current Params) of each Params class of a generator's
    pipeline: its generator's (no prefix), its validity's and its z profile's."""
    return [
        ("", "generator_params", lambda: tg.params),
        ("validity_", "validity", lambda: tg.config.validity),
        ("z_", "z_profile", lambda: tg.z_profile_params),
    ]


def track_node(tg: Any, name: str | None = None) -> Node:
    """Returns a node calling ``tg`` (see the module docstring): the generator's Params
    fields by name, ``validity_<field>`` (``ValidityParams``), ``z_<field>`` (the z
    profile's, when the generator has one) and ``epoch``.

    Raises:
        GeneratorError: a Params field named ``epoch`` or named like another one.
    """
    groups = _groups(tg)
    fields: dict[str, Field] = {}
    owner: dict[str, tuple[str, str]] = {}
    for prefix, key, current in groups:
        now = current()
        for k, f in _fields(type(now) if now is not None else None, now, prefix).items():
            if k in fields:
                raise GeneratorError(
                    f"TrackGenerator({tg.stage.name!r}).node: expected distinct parameter "
                    f"names, got {k!r} twice"
                )
            fields[k], owner[k] = f, (key, k[len(prefix) :])
    label = f"TrackGenerator({tg.stage.name!r})"

    def run(**values: Any) -> Record:
        epoch = values.pop("epoch")
        changes: dict[str, dict[str, Any]] = {}
        for k, v in values.items():
            key, field = owner[k]
            changes.setdefault(key, {})[field] = v
        now = {key: current() for _, key, current in groups}
        moved = {key: _moved(now[key], vals) for key, vals in changes.items()}
        if any(moved.values()):
            tg.update(**{key: vals for key, vals in moved.items() if vals})
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
                gen.update(generator_params=mine)  # dynamic fields only: no rebuild
        return course.generate(epoch=epoch).columns()

    return _node(run, fields, name or "course", "Course", course.track.config.epoch)


__all__ = ["EPOCH", "course_node", "track_node"]
