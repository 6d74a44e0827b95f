"""The corner repair of ``bezier``, ``hull`` and ``voronoi`` (their ``repair`` switch).

A generator's control polygon is made drivable before its spline, so that its tracks pass
the default validity instead of being rejected by it (``TrackGenConfig``'s ``DRIVABLE``):

- ``_round_corners_k`` (one thread per env) repeats, at most ``REPAIR_ROUNDS`` times:
  walk the edges in order, merging the two ends of each edge shorter than ``spacing``
  into their midpoint (the new edge from there is tested next; never below 3 points; an
  order, not a shortest-first search, so near-equal edges cannot swap the outcome); then
  pull every vertex whose corner is tight halfway to the midpoint of its neighbours, all
  at once: a corner turning by ``phi`` between edges of lengths ``a`` and ``b`` is tight
  when the fillet tangent to both edges within half the shorter one, of radius
  ``min(a, b) / 2 / tan(phi / 2)``, is under ``corner_radius``, and ``phi`` exceeds
  ``1.25 * 2 pi / n`` (which spares a regular n-gon, whose turns are all ``2 pi / n`` and
  which would only shrink). It stops at the first round with no tight corner. A polygon
  that changed is then scaled about its box's centre back to the box it started in (the
  larger scale that fits it, axes kept), so pulling the corners in does not shrink the
  track.
- ``_smooth_chain_k``: the closed chain of cubic Beziers of ``bezier`` (handles
  ``tension / 6`` of the chord of the neighbours: ``tension = 1`` is the uniform
  Catmull-Rom spline of ``hull`` and ``voronoi``), each handle clamped to a third of its
  own span, so a short span next to a long one has no loop or cusp.

``benchmarks/numpy_repair.py`` has the same rule in NumPy (``round_corners``,
``smooth_chain``).
"""

from __future__ import annotations

import warp as wp

from ._kernels import bezier_chain_point

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})

#: the most merge-and-pull rounds of ``_round_corners_k``
REPAIR_ROUNDS = 20
_ROUNDS = wp.constant(REPAIR_ROUNDS)
_TWO_PI = wp.constant(6.283185307179586)


@wp.kernel
def _round_corners_k(
    active: wp.array(dtype=wp.int32),
    ctrl: wp.array(dtype=wp.vec2),
    ctrl_count: wp.array(dtype=wp.int32),
    kmax: int,
    spacing: float,
    corner_radius: float,
    tmp: wp.array(dtype=wp.vec2),
):
    """Merges and pulls in ``ctrl[e*kmax:][:ctrl_count[e]]`` in place (see the module);
    ``ctrl_count[e]`` gets the points left. ``tmp``: ``[E*kmax]`` scratch."""
    e = wp.tid()
    if active[e] == 0:
        return
    n = wp.min(ctrl_count[e], kmax)
    if n < 3:
        return
    b = e * kmax
    lo = ctrl[b]
    hi = ctrl[b]
    for i in range(1, n):
        lo = wp.min(lo, ctrl[b + i])
        hi = wp.max(hi, ctrl[b + i])
    changed = wp.int32(0)
    sp2 = spacing * spacing
    for _round in range(_ROUNDS):
        # walk the edges in order, merging each shorter than spacing
        at = wp.int32(0)
        for _m in range(2 * kmax):
            if at >= n or n <= 3:
                break
            j = (at + 1) % n
            if wp.length_sq(ctrl[b + j] - ctrl[b + at]) < sp2:
                ctrl[b + at] = (ctrl[b + at] + ctrl[b + j]) * 0.5
                for q in range(j, n - 1):
                    ctrl[b + q] = ctrl[b + q + 1]
                n -= 1
                changed = 1
            else:
                at += 1
        # pull every tight corner halfway to its neighbours' midpoint, all at once
        floor = wp.cos(1.25 * _TWO_PI / float(n))
        sharp = wp.int32(0)
        for i in range(n):
            pm = ctrl[b + (i + n - 1) % n]
            p = ctrl[b + i]
            pn = ctrl[b + (i + 1) % n]
            lu = wp.length(p - pm)
            lv = wp.length(pn - p)
            tmp[b + i] = p
            den = lu * lv
            if den > 0.0:
                cs = wp.dot(p - pm, pn - p) / den
                if cs < floor:
                    r = 0.5 * wp.min(lu, lv) * wp.sqrt(wp.max(1.0 + cs, 0.0) / (1.0 - cs))
                    if r < corner_radius:
                        tmp[b + i] = p + ((pm + pn) * 0.5 - p) * 0.5
                        sharp = 1
        if sharp == 0:
            break
        for i in range(n):
            ctrl[b + i] = tmp[b + i]
        changed = 1
    ctrl_count[e] = n
    if changed == 0:
        return
    lo2 = ctrl[b]
    hi2 = ctrl[b]
    for i in range(1, n):
        lo2 = wp.min(lo2, ctrl[b + i])
        hi2 = wp.max(hi2, ctrl[b + i])
    w0 = hi - lo
    w = hi2 - lo2
    s = wp.float32(1.0e30)
    if w[0] > 0.0:
        s = wp.min(s, w0[0] / w[0])
    if w[1] > 0.0:
        s = wp.min(s, w0[1] / w[1])
    if s >= 1.0e30:
        return
    c0 = (lo + hi) * 0.5
    c = (lo2 + hi2) * 0.5
    for i in range(n):
        ctrl[b + i] = c0 + (ctrl[b + i] - c) * s


@wp.kernel
def _smooth_chain_k(
    corners: wp.array(dtype=wp.vec2),
    corner_count: wp.array(dtype=wp.int32),
    kmax: int,
    samples: int,
    tension: float,
    active: wp.array(dtype=wp.int32),
    raw: int,
    xy: wp.array(dtype=wp.vec2),
    count: wp.array(dtype=wp.int32),
    valid: wp.array(dtype=wp.int32),
):
    """The closed Bezier chain through the corners, handles clamped to a third of their
    span; ``count[e]`` points, NaN after them; ``valid[e] = 0`` under 3 corners."""
    tid = wp.tid()
    if active[tid // raw] != 0:
        bezier_chain_point(
            tid, corners, corner_count, kmax, samples, tension, 1, raw, xy, count, valid
        )
