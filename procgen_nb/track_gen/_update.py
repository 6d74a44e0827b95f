"""``TrackGenerator.update``: new Params values, written to their device buffers when the
fields are dynamic (no new recording), or a rebuild of the pipeline when one is static.

Every value is checked before anything changes, and a rebuild that fails part way (a
stage refusing its Params while it allocates) puts the generator back as it was
(``rebuild``): a refused update leaves params, buffers and bytes as they were."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import GeneratorError, ParamsError
from ..params import Params
from ._param_buffers import param_value
from .config import ValidityParams

if TYPE_CHECKING:
    from .pipeline import TrackGenerator


def rebuild(obj: Any, cfg: Any) -> None:
    """Runs ``obj._setup(cfg)``; on any error puts every attribute of ``obj`` back.

    ``_setup`` assigns new buffers, steps and parts (it writes into none of the old ones),
    so the attributes as they were before it are the whole old state.

    Args:
        obj: a TrackGenerator or GateGenerator.
        cfg: the new config.

    Raises:
        Whatever ``_setup`` raised, after the old state is back.
    """
    saved = dict(vars(obj))
    try:
        obj._setup(cfg)
    except BaseException:
        vars(obj).clear()
        vars(obj).update(saved)
        raise


def update(
    tg: TrackGenerator,
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
    cfg = copy.copy(tg.config)
    needs_rebuild = False
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
                needs_rebuild = True
            writes.append(("generator", k, getattr(new, k), type(new)))
        cfg.generator_params = new
    if validity:
        new_v = cfg.validity.replace(**validity)
        for k in validity:
            static = k not in ValidityParams.dynamic_fields()
            if static and getattr(new_v, k) != getattr(cfg.validity, k):
                needs_rebuild = True  # road_overlap: a step more or less
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
                needs_rebuild = True
            writes.append(("z_profile", k, getattr(new_z, k), type(new_z)))
        cfg.z_profile = new_z.to_dict()
    if needs_rebuild:
        rebuild(tg, cfg)
        return True
    for p in tg._parts:
        update(p, generator_params, validity, z_profile)
    for key, name, value, pcls in writes:
        buf = tg._dyn.get((key, name))
        if buf is not None:
            tg.ctx.fill(buf, param_value(pcls, name, value))
    tg.config = cfg
    tg.params = cfg.generator_params
    if tg._post_stages and z_profile:
        tg._post_stages = [(tg._post_stages[0][0], new_z)]
    return False


__all__ = ["rebuild", "update"]
