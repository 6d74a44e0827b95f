"""The pipeline steps of ``track_gen.widths``: the direction of travel and the widths (after
the post stages, before validity) and the boundary-crossing check (after validity).

``TrackGenerator._setup`` calls ``build_steps`` and ``build_checks``; each adds nothing for a
config that asks for nothing (``direction="ccw"`` from a generator that provides it,
``width=None``), so such a pipeline keeps its launches and its bytes.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from . import _widths_kernels as _wk
from ._steps import _Step
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


def build_steps(gen: Any, cfg: Any) -> None:
    """Appends the direction and width steps to a ``TrackGenerator``'s pipeline (after its
    post stages, before validity). ``direction="ccw"`` adds no step when the generator
    provides ``"ccw"``; ``width=None`` adds none."""
    E, N = cfg.num_envs, cfg.num_points
    direction = resolve_direction(getattr(cfg, "direction", "ccw"))
    width = resolve_width(getattr(cfg, "width", None))
    dev = gen.ctx.device
    res, active, seeds = gen.result, gen._active, gen.seeds
    if not (direction == "ccw" and "ccw" in gen.stage.provides):
        flip = wp.zeros(E, dtype=wp.int32, device=dev)
        attrs = dict(gen._attrs)
        mode, dsalt = _MODES[direction], salt("direction")

        def orient(ctx: Any) -> None:
            ctx.launch(_wk._flip_k, E, [res.xy, N, mode, seeds, dsalt, active, flip])
            ctx.launch(_wk._reverse_vec2_k, E, [res.xy, N, flip])
            for name in sorted(attrs):
                ctx.launch(_wk._reverse_f_k, E, [attrs[name], N, flip])

        gen._steps.append(_Step(f"direction:{direction}", CaptureClass.GRAPH, orient))
    if width is None:
        return
    wl = gen._attrs["width_left"] = gen._attr_array("width_left")
    wr = gen._attrs["width_right"] = gen._attr_array("width_right")
    args = [N, seeds, salt("width"), active, float(width.left), float(width.right)]
    args += [float(width.variation), int(width.harmonics), int(width.same), wl, wr]

    def widths(ctx: Any) -> None:
        ctx.launch(_wk._widths_k, E * N, args)

    gen._steps.append(_Step("widths", CaptureClass.GRAPH, widths))


def build_checks(gen: Any, cfg: Any) -> None:
    """Appends the boundary-crossing check after the validity stage when the config has
    widths and ``WidthParams.check``: it sets ``BOUNDARY_CROSSING`` and clears ``valid`` of
    every active env whose boundaries cross, and counts the valid envs again."""
    width = resolve_width(getattr(cfg, "width", None))
    if width is None or not width.check:
        return
    E, N = cfg.num_envs, cfg.num_points
    res, active = gen.result, gen._active
    scratch = BoundaryScratch(gen.ctx.device, E, N)
    extra = wp.zeros(E, dtype=wp.int32, device=gen.ctx.device)
    wl, wr = res.attributes["width_left"], res.attributes["width_right"]

    def check(ctx: Any) -> None:
        boundary_crossings(ctx, res.xy, wl, wr, E, N, extra, scratch, active, res.reason)
        ctx.launch(
            _wk._mark_boundary_k, E, [extra, active, BOUNDARY_CROSSING, res.valid, res.reason]
        )
        ctx.launch(_k._count_k, 1, [res.valid, E, res.valid_count])

    gen._steps.append(_Step("validity:boundaries", CaptureClass.GRAPH, check))


__all__ = ["build_checks", "build_steps"]
