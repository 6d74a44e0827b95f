"""The ``repulsive`` generator: how a host-driven loop became recordable, and its 0.1-style
``GeneratorSpec`` pair (``repulsive_alloc_scratch`` / ``generate_repulsive_warp``;
deprecated, silent, removed in 1.0).

This docstring is the full account of why it needs no opt-out of capture (a generator with a
host-driven loop would opt out of hard rules 2 and 3 of ``docs/generator-contract.md``).
The implementation is ``track_gen.generators.repulsive.Repulsive`` (a ``BOUNDED`` Stage)
and the kernels of ``track_gen.generators._repulsive_kernels``; the pair below emits the
Stage's launches through the same function (``repulsive._enqueue``), so it gives the same
bytes.

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
2. Per level (``_rep_subdivide_k`` between levels): the point count doubles by the 4-point
   interpolating scheme (``x_i`` stays, the new point between ``x_i`` and ``x_{i+1}`` is
   ``9/16 (x_i + x_{i+1}) - 1/16 (x_{i-1} + x_{i+2})``), and each rest length splits in
   two halves.
3. Per iteration of a level: ``_rep_step_k``, one thread per env, runs the whole step:
   central-difference tangents, the gradient over the pairs, the move of every vertex, the
   largest move and the freeze.
4. Refinement: ``refine`` more 4-point subdivisions of the relaxed loop (no descent:
   smooth, through the relaxed points, O(n) each).
5. ``_rep_fit_k``: the fit into the extent.

Coarse-to-fine schedule, precomputed on the host
------------------------------------------------

The 0.1 generator drove its loop from Python and left it early on a readback of the
positions, which made it impossible to record. Now its stage transitions (the levels),
its resample cadence (one subdivision per level boundary) and its stall-check cadence (a
convergence test after every step, on the device) form a fixed schedule computed on the
host from the configuration alone, once (``Repulsive.schedule(params, scale)``): the
loop's target perimeter is ``growth * 2 pi * 0.3 scale``, and level ``L``
(``0 <= L < levels``) has ``n = start_points << L`` points, ``iterations`` steps at level 0
and ``max(1, iterations >> L)`` after (finer levels only refine), and an edge scale
``h = perimeter / n`` (also reported as ``target``) that sets the distance unit of the
energy, the step size and the convergence tolerance. The raw loop has the refined size,
``start_points << (levels - 1 + refine)`` points per env (a level of ``n`` points uses the
first ``n`` slots of the env's stride). Nothing of the schedule depends on the generated
data, so the sequence of launches is fixed and records once.

The defaults relax two levels (16 and 32 points: 16 and 8 steps of at most ``0.45 h``)
and refine the relaxed loop three times to 256 points. The former defaults relaxed a third
level (64 points) after midpoint subdivisions, with 24, 12 and 6 steps of at most
``0.3 h``; those 6 steps cost more than the other two levels together. On the same 1024
seeds (N=256) the former loops had a tangent-point energy of 29.08 / 25.94 / 44.61 (mean /
median / p90; the initial polygons: 112.55 / 107.47 / 162.74) and the present ones have
26.61 / 23.69 / 40.69, with the same valid fraction under the closed, simple and turning
checks (0.992) and a higher one under the default drivable checks (0.964 against 0.217:
the 64-point loop resampled to 256 points kept its corners, which the turn-radius check
rejects); ``benchmarks/compare_generators.py`` prints these figures.

Per-env freeze on the device
----------------------------

The readback-driven early exit became a flag per env, ``frozen[e]``, kept on the device.
``_rep_step_k`` sets it when no vertex of the env moved more than ``tolerance * h`` in
that step and returns at once for a frozen env, so a converged env stops changing while
the others go on. ``_rep_init_k`` and ``_rep_subdivide_k`` clear the flag (a new level
starts unconverged). Inactive envs (``active[e] == 0``, an env ``regenerate`` keeps) skip
every kernel.

Bounded growth loop
-------------------

Each level's iterations run as ``ctx.bounded_loop(iterations, body)``, one launch per
step, which makes the Stage ``CaptureClass.BOUNDED``: the loop has a fixed upper bound, is
recorded unrolled (every iteration replays), and a converged env costs one early return
rather than an exit from the loop. The step is bounded too: a vertex moves at most
``h * min(step, 0.3 sqrt(dmin))``, where ``dmin`` is its smallest squared scaled distance
to a non-neighbouring vertex, so it never jumps past the part of the loop nearest to it.

Analytic adjoints: per-env pair sums, no atomics
------------------------------------------------

The gradient is written by hand, not taken by ``wp.Tape``: differentiating the pair
energy with Warp's adjoints scatters each pair's contribution into both vertices with
``atomic_add``, and on CUDA the order of those float additions varies run to run, so the
result would be reproducible only statistically. ``_rep_step_k`` instead runs one thread
per env that visits each pair ``i < j`` once, in index order, and takes the derivative of
``E_ij`` with respect to ``d`` (so to ``x_i``, up to the factor ``1 / h``), tangents held
fixed::

    c_i = T_i x d,  c_j = T_j x d,  P = perp(T)
    dE_ij/dd = (2 c_i P_i + 2 c_j P_j) / |d|^4 - 4 (c_i^2 + c_j^2) d / |d|^6

It adds the term to ``g_i`` and subtracts it from ``g_j`` (``j`` sees ``-d``), in world
units with one reciprocal per pair and the ``h`` powers applied once per vertex. To the
sum it adds the spring term ``e0 (l0 - t0) / (l0 h) - e1 (l1 - t1) / (l1 h)`` of the
vertex's two edges; the direction is ``-(repulsion g_i + spring) + smoothing (midpoint of
neighbours - x_i) / h``, minus the disc's pull outside ``confine * scale``, normalised to
at most 1. Every move is computed from the positions before the step (a Jacobi step, done
in place: the thread keeps the old ``x_{i-1}`` and ``x_0`` in registers), and only the
env's own thread writes the env's buffers. The float operations and their order are
therefore fixed, and the bytes are identical run to run on the CPU and on CUDA (each
device against itself; the CPU and CUDA math libraries need not agree). The kernels are
built with ``-ffp-contract=off`` on the CPU, as every track_gen kernel.

The 0.1-style pair
------------------

``generate_repulsive_warp`` emits the Stage's launches through ``repulsive._enqueue`` (the
helper packs the all-envs mask and the buffers from its scratch), with the schedule of
``Repulsive.schedule`` and each level's iterations through ``ctx.bounded_loop``, as the
Stage does. It needs no host readback, so a ``GeneratorSpec`` made from the pair is
capturable.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from ..exec import salt
from ..generators import Repulsive
from ..generators.repulsive import _enqueue
from .warp_generate import BuiltinScratch, _alloc_builtin, _begin_builtin, _finish_builtin


def repulsive_alloc_scratch(config: Any) -> BuiltinScratch:
    """Allocates ``generate_repulsive_warp``'s buffers for ``config`` (call it once).

    Args:
        config: a ``TrackGenConfig`` (or a subclass carrying the knobs of
            ``RepulsiveParams`` as attributes); its ``generator_params`` (a
            ``RepulsiveParams``, a dict or None for the defaults) is resolved here.

    Returns:
        A ``BuiltinScratch`` (the Stage's buffers ``grad``, ``tangent``, ``dmin``,
        ``rest``, ``frozen``; the raw loop, ``raw = start_points << (levels - 1 + refine)``).

    Raises:
        GeneratorError: a field out of its bounds, or a config without ``num_envs`` /
            ``num_points`` / ``scale``.
    """

    def make(E: int, raw: int, p: Any, dev: str | None) -> dict[str, wp.array]:
        return {
            "grad": wp.zeros(E * raw, dtype=wp.vec2, device=dev),
            "tangent": wp.zeros(E * raw, dtype=wp.vec2, device=dev),
            "dmin": wp.zeros(E * raw, dtype=float, device=dev),
            "rest": wp.zeros(E * raw, dtype=float, device=dev),
            "frozen": wp.zeros(E, dtype=wp.int32, device=dev),
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
    bufs = {**scratch.buffers, "xy": pos}
    E, raw, active = scratch.num_envs, scratch.raw, scratch.active
    salt_init = salt("repulsive.init")
    _enqueue(ctx, scratch.params, float(config.scale), E, raw, seeds_wp, active, salt_init, bufs)
    _finish_builtin(ctx, scratch, out_centerline, resample)


__all__ = ["generate_repulsive_warp", "repulsive_alloc_scratch"]
