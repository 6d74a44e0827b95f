"""The 0.1 ``warp_gate`` helpers of gate plugins (deprecated; removed in 1.0).

Each use warns ``DeprecationWarning``. The gate pipeline's stages replace them:
``order.raw``, ``order.ccw`` (``ops.angle_sort``) and ``order.random_pairs`` are the three
orderings ``order_points`` dispatches to, and an anchors Stage's
``preferred={"normalize": "extent"}`` replaces ``normalize_extent=``. They run the same
kernels as those stages, so a ported plugin keeps its bytes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import warp as wp

from ...errors import GeneratorError, ParamsError
from .. import ops
from .._checks import check_int
from ..exec import salt
from ..gates import _kernels as _k
from ..gates._warn import warn_at_caller
from ..ops._checks import need_array
from ._legacy import ambient, debug_sync

_ORDERINGS = ("ccw", "random_pairs", "raw")


def _deprecated(name: str, replacement: str) -> None:
    warn_at_caller(f"track_gen._src.warp_gate.{name} is deprecated (removed in 1.0): {replacement}")


_WHERE = "track_gen._src.warp_gate."
_STAGING = "the generate out of a GateGeneratorSpec, or _GateStaging(config)"


class _GateStaging:
    """0.1's gate staging buffers: ``position`` (``[E * max_gates]`` vec2, NaN past each
    env's count) and ``count`` (``[E]`` int32). Constructing one warns.

    Args:
        config: a ``GateGenConfig`` (``num_envs``, ``max_gates``, ``device``).
    """

    def __init__(self, config: Any):
        _deprecated("_GateStaging", "an anchors Stage writes anchors.xy / anchors.count")
        E, G = int(config.num_envs), int(config.max_gates)
        dev = str(config.device) if config.device is not None else None
        nan = float("nan")
        self.position = wp.full(E * G, wp.vec2(nan, nan), dtype=wp.vec2, device=dev)
        self.count = wp.zeros(E, dtype=wp.int32, device=dev)


@dataclasses.dataclass
class _OrderScratch:
    """The buffers of ``order_points``: ``seeds`` (``[E]`` int32, zeros), the stream keys
    ``random_pairs`` uses when ``order_points`` gets no ``seeds_wp``."""

    seeds: wp.array


def alloc_order_scratch(config: Any) -> _OrderScratch:
    """Allocates ``order_points``' scratch for ``config`` (once, in ``alloc_scratch``).

    Args:
        config: a ``GateGenConfig`` (``num_envs``, ``device``).

    Returns:
        The scratch to pass to ``order_points``.
    """
    _deprecated("alloc_order_scratch", "the pipeline's order stages need no scratch")
    dev = str(config.device) if config.device is not None else None
    return _OrderScratch(seeds=wp.zeros(int(config.num_envs), dtype=wp.int32, device=dev))


def order_points(
    position: wp.array,
    count: wp.array,
    config: Any,
    scratch: _OrderScratch,
    seeds_wp: wp.array | None = None,
    ctx: Any = None,
) -> None:
    """Orders each env's gates in place by ``config.gate_ordering``.

    ``"raw"`` leaves them; ``"ccw"`` sorts them counter-clockwise around their centroid;
    ``"random_pairs"`` shuffles them (stream ``order.random_pairs`` of ``seeds_wp``, or of
    ``scratch.seeds`` when None).

    Args:
        position: ``[E * config.max_gates]`` vec2. count: ``[E]`` int32.
        config: the resolved ``GateGenConfig``. scratch: from ``alloc_order_scratch``.
        seeds_wp: ``[E]`` int32 base seeds. ctx: the launch context (ambient when None).

    Raises:
        GeneratorError: an ordering other than those three.
        ParamsError: arrays that are None, of the wrong dtype or too short, or no seeds
            (neither ``seeds_wp`` nor a scratch from ``alloc_order_scratch``).
    """
    _deprecated("order_points", "drop the call: the order.<name> stages follow a gate Stage")
    ordering = config.gate_ordering
    if ordering not in _ORDERINGS:
        raise GeneratorError(
            f"order_points config.gate_ordering: expected one of {list(_ORDERINGS)}, "
            f"got {ordering!r}"
        )
    ctx = ambient(ctx)
    G = check_int(f"{_WHERE}order_points config.max_gates", config.max_gates, 1)
    if ordering == "ccw":
        ops.angle_sort(ctx, position, count, G)
    elif ordering == "random_pairs":
        need_array("order_points", "count", count, wp.int32, 1, _STAGING, _WHERE)
        E = count.shape[0]
        need_array("order_points", "position", position, wp.vec2, E * G, _STAGING, _WHERE)
        if seeds_wp is None:
            if not isinstance(scratch, _OrderScratch):
                raise ParamsError(
                    f"{_WHERE}order_points scratch: expected the scratch of "
                    f"alloc_order_scratch(config) or seeds_wp, got {scratch!r}"
                )
            seeds = scratch.seeds
        else:
            seeds = seeds_wp
        need_array("order_points", "seeds", seeds, wp.int32, E, "[E] int32 seeds", _WHERE)
        args = [seeds, salt("order.random_pairs"), position, count, G]
        ctx.launch(_k._random_pairs_k, count.shape[0], args)
    debug_sync(ctx)


def finish_ordered_gates(
    out: Any, config: Any, normalize_extent: bool = True, ctx: Any = None
) -> None:
    """Writes NaN past each env's count and, with ``normalize_extent``, centres each env's
    gates and scales them so the larger side of their bounding box spans
    ``[-config.scale, config.scale]``.

    Args:
        out: the ``out`` of ``generate`` (``position``, ``count``).
        config: the resolved ``GateGenConfig``.
        normalize_extent: fit the layout to the extent.
        ctx: the launch context (ambient when None).

    Raises:
        ParamsError: ``out``'s arrays of the wrong dtype or too short for ``config``.
    """
    _deprecated("finish_ordered_gates", "declare preferred={'normalize': 'extent'}")
    ctx = ambient(ctx)
    G = check_int(f"{_WHERE}finish_ordered_gates config.max_gates", config.max_gates, 1)
    need_array("finish_ordered_gates", "out.count", out.count, wp.int32, 1, _STAGING, _WHERE)
    E = int(out.count.shape[0])
    need_array(
        "finish_ordered_gates", "out.position", out.position, wp.vec2, E * G, _STAGING, _WHERE
    )
    ctx.launch(_k._nan_pad_k, E * G, [out.position, out.count, G])
    if normalize_extent:
        ctx.launch(_k._normalize_extent_k, E, [out.position, out.count, G, float(config.scale)])
    debug_sync(ctx)


__all__ = ["alloc_order_scratch", "finish_ordered_gates", "order_points"]
