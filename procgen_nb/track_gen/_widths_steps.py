"""The pipeline steps of ``track_gen.widths``: the direction of travel and the widths (after
the post stages, before validity) and the boundary-crossing check (after validity).

``TrackGenerator._setup`` appends the steps ``build_steps`` and ``build_checks`` return; each
returns none for a config that asks for nothing (``direction="ccw"`` from a generator that
provides it, ``width=None``), so such a pipeline keeps its launches and its bytes. Their
arrays come from the generator's ``_arrays`` (a worker thread's part: views of its parent's).
"""

from __future__ import annotations

from typing import Any

import warp as wp

from . import _widths_kernels as _wk
from ._arrays import _Arrays
from ._pipeline_base import _Step
from .exec import salt
from .ops import _kernels as _k
from .plugin import CaptureClass
from .widths import (
    BOUNDARY_CROSSING,
    BoundaryScratch,
    boundary_crossings,
    resolve_direction,
    resolve_width,
)

_MODES = {"ccw": 0, "cw": 1, "random": 2}


def build_steps(
    cfg: Any,
    provides: Any,
    res: Any,
    active: wp.array,
    seeds: wp.array,
    attrs: dict[str, wp.array],
    arrays: _Arrays,
) -> list[_Step]:
    """The direction and width steps of a ``TrackGenerator``'s pipeline (after its post
    stages, before validity): none for ``direction="ccw"`` when the generator ``provides``
    ``"ccw"``, and none for ``width=None``. The width attributes are added to ``attrs``
    (the result's attributes).

    Args:
        cfg: the resolved ``TrackGenConfig``. provides: the generator stage's ``provides``.
        res: the ``TrackResult``. active, seeds: the call's ``[E]`` active mask and seeds.
        attrs: the result's attribute arrays by name. arrays: the generator's ``_Arrays``.
    """
    E, N = cfg.num_envs, cfg.num_points
    direction = resolve_direction(getattr(cfg, "direction", "ccw"))
    width = resolve_width(getattr(cfg, "width", None))
    steps = []
    if not (direction == "ccw" and "ccw" in provides):
        flip = arrays.zeros("direction.flip", E, wp.int32)
        before = dict(attrs)
        mode, dsalt = _MODES[direction], salt("direction")

        def orient(ctx: Any) -> None:
            ctx.launch(_wk._flip_k, E, [res.xy, N, mode, seeds, dsalt, active, flip])
            ctx.launch(_wk._reverse_vec2_k, E, [res.xy, N, flip])
            for name in sorted(before):
                ctx.launch(_wk._reverse_f_k, E, [before[name], N, flip])

        steps.append(_Step(f"direction:{direction}", CaptureClass.GRAPH, orient))
    if width is None:
        return steps
    wl = attrs["width_left"] = arrays.zeros(("attr", "width_left"), E * N, wp.float32)
    wr = attrs["width_right"] = arrays.zeros(("attr", "width_right"), E * N, wp.float32)
    args = [N, seeds, salt("width"), active, float(width.left), float(width.right)]
    args += [float(width.variation), int(width.harmonics), int(width.same), wl, wr]

    def widths(ctx: Any) -> None:
        ctx.launch(_wk._widths_k, E * N, args)

    steps.append(_Step("widths", CaptureClass.GRAPH, widths))
    return steps


def build_checks(cfg: Any, res: Any, active: wp.array, arrays: _Arrays) -> list[_Step]:
    """The boundary-crossing check after the validity stage, when the config has widths
    and ``WidthParams.check`` (none otherwise): it sets ``BOUNDARY_CROSSING`` and clears
    ``valid`` of every active env whose boundaries cross, and counts the valid envs again.

    Args:
        cfg: the resolved ``TrackGenConfig``. res: the ``TrackResult``. active: the call's
            ``[E]`` active mask. arrays: the generator's ``_Arrays``.
    """
    width = resolve_width(getattr(cfg, "width", None))
    if width is None or not width.check:
        return []
    E, N = cfg.num_envs, cfg.num_points

    def zeros(name: str, n: int, dtype: Any) -> wp.array:
        return arrays.zeros(("boundary", name), n, dtype)

    scratch = BoundaryScratch(arrays.device, E, N, zeros)
    extra = arrays.zeros("boundary.extra", E, wp.int32)
    wl, wr = res.attributes["width_left"], res.attributes["width_right"]

    def check(ctx: Any) -> None:
        boundary_crossings(ctx, res.xy, wl, wr, E, N, extra, scratch, active, res.reason)
        ctx.launch(
            _wk._mark_boundary_k, E, [extra, active, BOUNDARY_CROSSING, res.valid, res.reason]
        )
        ctx.launch(_k._count_k, 1, [res.valid, E, res.valid_count])

    return [_Step("validity:boundaries", CaptureClass.GRAPH, check)]


__all__ = ["build_checks", "build_steps"]
