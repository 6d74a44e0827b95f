"""The ``repulsive`` generator: how a host-driven loop became recordable, and its 0.1-style
``GeneratorSpec`` pair (``repulsive_alloc_scratch`` / ``generate_repulsive_warp``;
deprecated, silent, removed in 1.0).

This docstring is the full account the seed's "Opting out of capture" section refers to.
The implementation is ``track_gen.generators.repulsive.Repulsive`` (a ``BOUNDED`` Stage)
and the kernels of ``track_gen.generators._repulsive_kernels``; the pair below launches the
same kernels in the same order, so it gives the same bytes.

What it computes
----------------

A small random star polygon grows into a winding, non-self-intersecting loop. Edge
springs pull every edge toward a rest length (the initial edge's length times ``growth``,
so the loop wants to be ``growth`` times longer than it is), Laplacian smoothing keeps it
even, a soft disc of radius ``confine * scale`` keeps it near the origin, and the discrete
tangent-point energy keeps distant parts of the loop apart, so the extra length has to
buckle into bends rather than cross itself. For vertices ``i`` and ``j`` that are not
neighbours, with ``d = (x_i - x_j) / h`` and ``T`` the unit tangents::

    E_ij = (|T_i x d|^2 + |T_j x d|^2) / |d|^4          (|d|^2 clamped below at 1e-6)

Finally the loop is fitted into ``[-scale, scale]^2``: its bounding box is centred on the
origin and its larger half-side scaled to ``0.95 * scale``.

1. Initial polygon (``_rep_init_k``, stream ``repulsive.init``): ``start_points`` points at
   angles ``2 pi i / n0 + 2 pi rand01(key, n0)`` and radii
   ``0.3 scale (1 + jitter (2 rand01(key, i) - 1))``. Rest lengths (``_rep_rest_k``):
   ``growth`` times each initial edge.
2. Per level (``_rep_subdivide_k`` between levels): every edge gets its midpoint, so the
   point count doubles, and each rest length is split in two halves.
3. Per iteration of a level: ``_rep_tangent_k`` (central-difference tangents),
   ``_rep_step_k`` (the descent direction of every vertex, written to a second buffer)
   and ``_rep_commit_k`` (copies it back, measures the largest move, freezes the env).
4. ``_rep_fit_k``: the fit into the extent.

Coarse-to-fine schedule, precomputed on the host
------------------------------------------------

The 0.1 generator drove its loop from Python and left it early on a readback of the
positions, which made it impossible to record. Now its stage transitions (the levels),
its resample cadence (one subdivision per level boundary) and its stall-check cadence (a
convergence test after every step, on the device) form a fixed schedule computed on the
host from the configuration alone, once, in ``build`` (``Repulsive.schedule(params,
scale)``): the loop's target perimeter is ``growth * 2 pi * 0.3 scale``, and level ``L``
(``0 <= L < levels``) has ``n = start_points << L`` points, ``iterations`` steps at level 0
and ``max(1, iterations >> L)`` after (finer levels only refine), and an edge scale
``h = perimeter / n`` (also reported as ``target``) that sets the distance unit of the
energy, the step size and the convergence tolerance. The raw loop has the last level's
size, ``start_points << (levels - 1)`` points per env (a level of ``n`` points uses the
first ``n`` slots of the env's stride). Nothing of the schedule depends on the generated
data, so the sequence of launches is fixed and records once.

Per-env freeze on the device
----------------------------

The readback-driven early exit became a flag per env, ``frozen[e]``, kept on the device.
``_rep_commit_k`` sets it when no vertex of the env moved more than ``tolerance * h`` in
that step; ``_rep_tangent_k``, ``_rep_step_k`` and ``_rep_commit_k`` return at once for a
frozen env, so a converged env stops changing while the others go on. ``_rep_init_k`` and
``_rep_subdivide_k`` clear the flag (a new level starts unconverged). Inactive envs
(``active[e] == 0``, an env ``regenerate`` keeps) skip every kernel.

Bounded growth loop
-------------------

Each level's iterations run as ``ctx.bounded_loop(iterations, body)``, which makes the
Stage ``CaptureClass.BOUNDED``: the loop has a fixed upper bound, is recorded unrolled
(every iteration replays), and a converged env costs one early return per kernel rather
than an exit from the loop. The step is bounded too: a vertex moves at most
``h * min(step, 0.3 sqrt(dmin))``, where ``dmin`` is its smallest squared scaled distance
to a non-neighbouring vertex, so it never jumps past the part of the loop nearest to it.

Analytic adjoints: a per-vertex gather, no atomics
--------------------------------------------------

The gradient is written by hand, not taken by ``wp.Tape``: differentiating the pair
energy with Warp's adjoints scatters each pair's contribution into both vertices with
``atomic_add``, and on CUDA the order of those float additions varies run to run, so the
result would be reproducible only statistically. ``_rep_step_k`` instead runs one thread
per vertex ``i`` that *gathers* the derivative of every pair term ``E_ij`` with respect to
``d`` (so to ``x_i``, up to the factor ``1 / h``) over ``j`` in index order, tangents
held fixed::

    c_i = T_i x d,  c_j = T_j x d,  P = perp(T)
    g_i = sum_j (2 c_i P_i + 2 c_j P_j) / |d|^4 - 4 (c_i^2 + c_j^2) d / |d|^6

plus the spring term ``e0 (l0 - t0) / (l0 h) - e1 (l1 - t1) / (l1 h)`` of its two edges;
the direction is ``-(repulsion g_i + spring) + smoothing (midpoint of neighbours - x_i) / h``,
minus the disc's pull outside ``confine * scale``, normalised to at most 1. Each thread
writes only its own vertex of the second buffer, reading positions from the first (a
Jacobi step), and the commit is a serial loop per env. The float operations and their
order are therefore fixed, and the bytes are identical run to run on the CPU and on CUDA
(each device against itself; the CPU and CUDA math libraries need not agree). The kernels
are built with ``-ffp-contract=off`` on the CPU, as every track_gen kernel.

The 0.1-style pair
------------------

``generate_repulsive_warp`` launches the Stage's kernels (they already take every Params
field and schedule entry as a scalar argument, so separate scalar kernels would duplicate
them wholesale; the helper packs the all-envs mask and the buffers from its scratch),
with the schedule of ``Repulsive.schedule``, and runs each level's iterations through
``ctx.bounded_loop`` as the Stage does. It needs no host readback, so a ``GeneratorSpec``
made from the pair is capturable.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..exec import salt
from ..generators import Repulsive
from ..generators import _repulsive_kernels as _rk
from .warp_generate import BuiltinScratch, _alloc_builtin, _begin_builtin, _finish_builtin


def repulsive_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_repulsive_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the knobs of
            ``RepulsiveParams`` as attributes); its ``generator_params`` (a
            ``RepulsiveParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the Stage's buffers ``next``, ``tangent``, ``frozen``,
        ``rest``; the raw loop, ``raw = start_points << (levels - 1)``).

    Raises:
        GeneratorError: a field out of its bounds, or a config without ``num_envs`` /
            ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        return {
            "next": wp.zeros(E * raw, dtype=wp.vec2, device=dev),
            "tangent": wp.zeros(E * raw, dtype=wp.vec2, device=dev),
            "frozen": wp.zeros(E, dtype=wp.int32, device=dev),
            "rest": wp.zeros(E * raw, dtype=float, device=dev),
        }

    return _alloc_builtin(Repulsive, config, make)


def generate_repulsive_warp(
    seeds_wp: wp.array,
    config: Any,
    out_centerline: wp.array,
    out_valid_wp: wp.array,
    scratch: BuiltinScratch,
    ctx: Any = None,
) -> None:
    """The ``repulsive`` generator as a 0.1-style function (see the module docstring).

    Args:
        seeds_wp: ``[E]`` int32 base seeds (read-only).
        config: the config given to ``repulsive_alloc_scratch``; the Params used are the
            ones it resolved (``scratch.params``).
        out_centerline: ``[E * N]`` vec2 (the ``GeneratorSpec`` contract): the raw loop
            resampled by arc length to ``N = config.num_points`` points, as the pipeline
            resamples the Stage's (when the raw size is ``N``, the raw loop itself); or
            ``[E * scratch.raw]`` vec2: the Stage's raw loop itself.
        out_valid_wp: ``[E]`` int32, filled with 1 (``repulsive`` rejects nothing; the
            pipeline's validity stage judges the loop).
        scratch: from ``repulsive_alloc_scratch(config)``.
        ctx: the launch context to emit through (``LaunchContext`` on ``config.device``
            when None).

    Raises:
        GeneratorError: a scratch from another function, a config of another size, or
            arrays of the wrong dtype or size.
    """
    ctx, pos, resample = _begin_builtin(
        "repulsive", seeds_wp, config, out_centerline, out_valid_wp, scratch, ctx
    )
    p, b = scratch.params, scratch.buffers
    E, raw, active = scratch.num_envs, scratch.raw, scratch.active
    nxt, tan, frozen, rest = b["next"], b["tangent"], b["frozen"], b["rest"]
    scale = float(config.scale)
    n0 = p.start_points
    init = [seeds_wp, active, salt("repulsive.init"), n0, p.jitter, 0.3 * scale, raw, pos]
    ctx.launch(_rk._rep_init_k, E * n0, [*init, frozen])
    ctx.launch(_rk._rep_rest_k, E * n0, [pos, n0, raw, active, p.growth, rest])
    for li, lv in enumerate(Repulsive.schedule(p, scale)):
        n, h = lv["n"], lv["h"]
        if li:
            ctx.launch(_rk._rep_subdivide_k, E, [pos, rest, n // 2, raw, active, frozen])
        step = [pos, tan, n, raw, active, frozen, h, rest, p.step, p.repulsion, p.smoothing]
        step += [p.confine * scale, nxt]
        commit = [pos, nxt, n, raw, active, frozen, p.tolerance * h]

        def body(_i: int, n: int = n, step: list = step, commit: list = commit) -> None:
            ctx.launch(_rk._rep_tangent_k, E * n, [pos, n, raw, active, frozen, tan])
            ctx.launch(_rk._rep_step_k, E * n, step)
            ctx.launch(_rk._rep_commit_k, E, commit)

        ctx.bounded_loop(lv["iterations"], body)
    ctx.launch(_rk._rep_fit_k, E, [pos, raw, raw, active, scale])
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ = ["generate_repulsive_warp", "repulsive_alloc_scratch"]
