"""``TrackGenerator.update``: new Params values, written to their device buffers when the
fields are dynamic (no new recording), or a rebuild of the pipeline when one is static.

A graph node's dynamic number given for a dynamic field is written as its expression, so the
graph's replay writes the value it moves to (``_param_buffers.fill_value``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..dynamic import is_dynamic
from ..errors import GeneratorError, ParamsError
from ..launch import log_entry
from ..params import Params
from ._param_buffers import checked_now, fill_value
from .config import ValidityParams

#: a ``pipeline.TrackGenerator`` (named, not imported: the pipeline imports this module)
_TrackGenerator = Any


def update(
    tg: _TrackGenerator,
    generator_params: Mapping[str, Any] | None,
    validity: Mapping[str, Any] | None,
    z_profile: Mapping[str, Any] | None,
) -> bool:
    """Applies ``TrackGenerator.update`` (see there); True when the pipeline was rebuilt."""
    for label, values in (
        (f"generator_params of {tg.stage.name!r}", generator_params),
        ("update validity", validity),
        ("update z_profile", z_profile),
    ):
        if values is not None and (
            not isinstance(values, Mapping) or not all(isinstance(k, str) for k in values)
        ):
            raise ParamsError(f"{label}: expected a dict of fields, got {values!r}")
    # a graph node's dynamic numbers: checked at their current value, filled as expressions
    given = {"generator": generator_params, "validity": validity, "z_profile": z_profile}
    generator_params, validity, z_profile = _now(tg, generator_params, validity, z_profile)
    cfg = copy.copy(tg.config)
    rebuild = False
    writes: list[tuple[str, str, Any, type[Params]]] = []
    if generator_params:
        if tg.params is None:
            raise GeneratorError(
                f"generator_params of {tg.stage.name!r}: expected none, got "
                f"{dict(generator_params)!r}"
            )
        try:
            new = tg.params.replace(**generator_params)
        except ParamsError as exc:
            raise GeneratorError(f"generator_params of {tg.stage.name!r}: {exc}") from exc
        dyn = set(type(new).dynamic_fields())
        for k in generator_params:
            if k not in dyn:
                rebuild = True
            writes.append(("generator", k, getattr(new, k), type(new)))
        cfg.generator_params = new
    if validity:
        new_v = cfg.validity.replace(**validity)
        for k in validity:
            static = k not in ValidityParams.dynamic_fields()
            if static and getattr(new_v, k) != getattr(cfg.validity, k):
                rebuild = True  # road_overlap: a step more or less
            writes.append(("validity", k, getattr(new_v, k), ValidityParams))
        cfg.validity = new_v
    if z_profile:
        if not tg._post_stages:
            raise GeneratorError("z_profile: expected a generator built with z_profile, got none")
        stage, zparams = tg._post_stages[0]
        try:
            new_z = zparams.replace(**z_profile)
        except ParamsError as exc:
            raise GeneratorError(f"z_profile: {exc}") from exc
        for k in z_profile:
            if k not in type(new_z).dynamic_fields():
                rebuild = True
            writes.append(("z_profile", k, getattr(new_z, k), type(new_z)))
        cfg.z_profile = new_z.to_dict()
    if rebuild:
        tg._setup(cfg)
        return True
    for p in tg._parts:
        update(p, given["generator"], given["validity"], given["z_profile"])
    moved = []
    for key, name, value, pcls in writes:
        value = (given[key] or {}).get(name, value)  # a dynamic number: its expression
        if is_dynamic(value):
            moved.append((key, name, value))
        buf = tg._dyn.get((key, name))
        if buf is not None:
            tg.ctx.fill(buf, fill_value(pcls, name, value, key))
    tg.config = cfg
    tg.params = cfg.generator_params
    if tg._post_stages and z_profile:
        tg._post_stages = [(tg._post_stages[0][0], new_z)]
    if moved:  # a graph replay moves the fields again: Python's copies follow the buffers
        names = [(k, n) for k, n, _ in moved]
        log_entry(("sync", lambda *vals: _follow(tg, names, vals), [v for *_, v in moved]))
    return False


def _now(tg: _TrackGenerator, gp: Any, validity: Any, zp: Any) -> tuple[Any, Any, Any]:
    """The mappings with each dynamic number at its current value (``checked_now``)."""
    if gp and tg.params is not None:
        gp = checked_now(type(tg.params), gp)
    if validity:
        validity = checked_now(ValidityParams, validity)
    if zp and tg._post_stages:
        zp = checked_now(type(tg._post_stages[0][1]), zp)
    return gp, validity, zp


def _follow(tg: _TrackGenerator, names: list[tuple[str, str]], values: tuple) -> None:
    """Sets the Params copies of ``tg`` to the values a graph replay wrote to their buffers
    (host bookkeeping; no device work)."""
    cfg = tg.config
    for (key, name), value in zip(names, values, strict=True):
        if key == "generator":
            tg.params = cfg.generator_params = tg.params.replace(**{name: value})
        elif key == "validity":
            cfg.validity = cfg.validity.replace(**{name: value})
        else:
            stage, zp = tg._post_stages[0]
            tg._post_stages = [(stage, zp.replace(**{name: value}))]
            cfg.z_profile = tg._post_stages[0][1].to_dict()


__all__ = ["update"]
