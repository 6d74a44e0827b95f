"""A track generator or a course as a node of a graph (``TrackGenerator.node()``,
``Course.node()``).

The node's parameters are the generator's Params fields, its validity's and z profile's
(a dynamic field stays dynamic: moving it replays the graph's recording, no plan) and
``epoch`` (dynamic too). Each cook
calls ``update`` with what moved and ``generate(epoch=...)``, and answers the result as the
runtime's types: ``xy`` a Vec2 Column, ``valid`` an Int column, ``valid_count`` a live
count, so the next node compacts the valid envs on the device with nothing read back.
The node answers its own device copy of them (``_own``): two nodes of one generator, or a
call outside the graph, never write over a node's output. ``node.generator`` is the
generator or course the node calls.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..columns import Column, LiveCount, Record
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


#: one Params class a node offers: (name prefix, the generator, its ``update`` keyword,
#: a callable answering the current Params or None)
_Group = tuple[str, Any, str, Callable[[], "Params | None"]]


def _groups(tg: Any, prefix: str = "") -> list[_Group]:
    """The Params classes of a track generator's pipeline: its generator's (``prefix``),
    its validity's (``prefix + "validity_"``) and its z profile's (``prefix + "z_"``)."""
    return [
        (prefix, tg, "generator_params", lambda: tg.params),
        (f"{prefix}validity_", tg, "validity", lambda: tg.config.validity),
        (f"{prefix}z_", tg, "z_profile", lambda: tg.z_profile_params),
    ]


def _offer(groups: list[_Group], label: str) -> tuple[dict[str, Field], dict[str, tuple[int, str]]]:
    """The node's fields (every field of every group, named with its prefix) and, for each
    name, (the group's index, the field's own name).

    Raises:
        GeneratorError: two fields of the same name.
    """
    fields: dict[str, Field] = {}
    owner: dict[str, tuple[int, str]] = {}
    for i, (prefix, _, _, current) in enumerate(groups):
        now = current()
        for k, f in _fields(type(now) if now is not None else None, now, prefix).items():
            if k in fields:
                raise GeneratorError(
                    f"{label}.node: expected distinct parameter names, got {k!r} twice"
                )
            fields[k], owner[k] = f, (i, k[len(prefix) :])
    return fields, owner


def _moves(
    groups: list[_Group], owner: Mapping[str, tuple[int, str]], values: Mapping[str, Any]
) -> dict[int, dict[str, Any]]:
    """The fields to update of each group (by index): see ``_moved``."""
    changes: dict[int, dict[str, Any]] = {}
    for k, v in values.items():
        i, field = owner[k]
        changes.setdefault(i, {})[field] = v
    moved = {i: _moved(groups[i][3](), vals) for i, vals in changes.items()}
    return {i: vals for i, vals in moved.items() if vals}


def _apply(groups: list[_Group], moves: Mapping[int, Mapping[str, Any]]) -> None:
    """Calls each generator's ``update`` once with its groups' moves."""
    per: dict[int, tuple[Any, dict[str, Any]]] = {}
    for i, vals in moves.items():
        _, gen, key, _ = groups[i]
        per.setdefault(id(gen), (gen, {}))[1][key] = dict(vals)
    for gen, kw in per.values():
        gen.update(**kw)


def track_node(tg: Any, name: str | None = None) -> Node:
    """Returns a node calling ``tg`` (see the module docstring): the generator's Params
    fields by name, ``validity_<field>`` (``ValidityParams``), ``z_<field>`` (the z
    profile's, when the generator has one) and ``epoch``.

    Raises:
        GeneratorError: a Params field named ``epoch`` or named like another one.
    """
    groups = _groups(tg)
    label = f"TrackGenerator({tg.stage.name!r})"
    fields, owner = _offer(groups, label)

    def run(**values: Any) -> Record:
        epoch = values.pop("epoch")
        _apply(groups, _moves(groups, owner, values))
        return _own(tg.generate(epoch=epoch).columns(), tg.ctx)

    nd = _node(run, fields, name or f"track_{tg.stage.name}", label, tg.config.epoch)
    nd.generator = tg  # what the node calls: a view rebuilds one env of it alone
    return nd


def course_node(course: Any, restart: Callable[[], None], name: str | None = None) -> Node:
    """Returns a node calling ``course``: every Params field of its track generator
    (``track_<field>``, ``track_validity_<field>``, ``track_z_<field>``) and of its gate
    generator (``gates_<field>``), and ``epoch``.

    A dynamic field is written to its generator's buffer (a replay moves it: no plan). A
    static one that moved updates its generator (a rebuild), then ``restart()`` (handed in
    by the course) makes the course again over the generators' new configs; the dynamic
    fields are then written as always, so the node's new recording moves them too.

    Raises:
        GeneratorError: a Params field named ``epoch`` or named like another one.
    """
    track = _groups(_Now(course, "track"), "track_")
    gates = [("gates_", _Now(course, "gates"), "generator_params", lambda: course.gates.params)]
    groups = track + gates
    fields, owner = _offer(groups, "Course")

    def run(**values: Any) -> Record:
        epoch = values.pop("epoch")
        moves = _moves(groups, owner, values)
        static, dynamic = {}, {}
        for i, vals in moves.items():
            dyn = set(type(groups[i][3]()).dynamic_fields())
            static[i] = {k: v for k, v in vals.items() if k not in dyn}
            dynamic[i] = {k: v for k, v in vals.items() if k in dyn}
        static = {i: v for i, v in static.items() if v}
        if static:
            # the generator the other reads is rebuilt first (the gates of a course whose
            # centerline runs through them, else the centerline)
            first = range(len(track), len(groups)) if course.gates_first else range(len(track))
            order = sorted(static, key=lambda i: i not in first)
            try:
                _apply(groups, {i: static[i] for i in order})
            finally:
                restart()  # the course's buffers and steps over the generators' new ones
        _apply(groups, {i: v for i, v in dynamic.items() if v})
        return _own(course.generate(epoch=epoch).columns(), course.ctx)

    nd = _node(run, fields, name or "course", "Course", course.track.config.epoch)
    nd.generator = course  # what the node calls: a view rebuilds one env of it alone
    return nd


def _own(cols: Record, ctx: Any) -> Record:
    """The node's own copy of a call's columns (device copies, recorded with the call).

    A generator writes the same arrays every call: a second node of the same generator, or
    a call outside the graph, would write over what this node answered. The copies are
    made new at each plan and written again by each replay, so the node's output holds its
    own call's words whoever calls the generator afterwards; nothing is read back.
    """
    out = Record()
    for key, value in cols.items():
        if isinstance(value, Column):
            data = ctx.empty(value.data.shape, value.data.dtype)
            ctx.copy(data, value.data)
            out[key] = Column(data, value.type, table=value.table)
        elif isinstance(value, LiveCount):
            words = ctx.empty(1, value.words.dtype)
            ctx.copy(words, value.words)
            out[key] = LiveCount(words, value.capacity)
        else:
            out[key] = value
    return out


class _Now:
    """A course's generator as it is now (a restart makes new ones): ``_Now(course,
    "track")`` answers ``course.track``'s attributes."""

    def __init__(self, course: Any, which: str):
        self._course = course
        self._which = which

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._course, self._which), name)


__all__ = ["EPOCH", "course_node", "track_node"]
