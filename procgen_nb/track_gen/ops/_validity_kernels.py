"""The validity kernels: crossings, turning numbers and the whole validity stage.

The reason bits (``REJECTED``...) are those of ``pipeline.REASONS``.
"""

from __future__ import annotations

import warp as wp

from ._crossing_funcs import _ring_crossings, _simple_ring
from ._validity_funcs import _too_close, _turn_step, _turning
from .funcs import ccw

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs); no adjoint
# code (nothing here is differentiated). Measured: Warp's inlining thresholds (as in
# track_gen._metrics_kernels) made the clearance search 0.2 ms faster per 1024 loops of 256
# points but the crossing test as much slower (ops.is_simple on smooth rings 1.72 -> 1.95
# us per ring), so the module keeps Clang's own.
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off", "enable_backward": False})

#: reason bits written by the validity stage
REJECTED = wp.constant(1)
NOT_CLOSED = wp.constant(2)
SELF_INTERSECTING = wp.constant(4)
TURNING = wp.constant(8)
RADIUS = wp.constant(16)
CLEARANCE = wp.constant(32)
ROAD_OVERLAP = wp.constant(64)


@wp.kernel
def _self_intersections_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    first_only: int,
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = _ring_crossings(
        xy, e * n, n, chain, chain_n, order, key, bucket, e * n, e * (n + 1), first_only
    )


@wp.kernel
def _count_flagged_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    reason: wp.array(dtype=wp.int32),
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    out: wp.array(dtype=wp.int32),
):
    # the full count of the envs an early-exit validity stage found crossing (the others
    # hold 0 already); the same search as _validity_k's, so the same counts
    e = wp.tid()
    r = reason[e]
    if (r & SELF_INTERSECTING) != 0 and (r & NOT_CLOSED) == 0:
        out[e] = _ring_crossings(
            xy, e * n, n, chain, chain_n, order, key, bucket, e * n, e * (n + 1), 0
        )


@wp.kernel
def _mark_k(
    hit: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    bit: int,
    valid: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
):
    # a host-decided check: sets ``bit`` in the reason of each active env it rejects
    e = wp.tid()
    if active[e] != 0 and hit[e] != 0:
        reason[e] = reason[e] | bit
        valid[e] = 0


@wp.kernel
def _is_simple_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    ring: wp.array(dtype=wp.vec2),
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = _simple_ring(xy, ring, e * n, n, chain, chain_n, order, key, bucket, e * (n + 1))


@wp.kernel
def _turning_number_k(xy: wp.array(dtype=wp.vec2), n: int, out: wp.array(dtype=wp.int32)):
    e = wp.tid()
    out[e] = _turning(xy, e * n, n)


@wp.kernel
def _validity_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    active: wp.array(dtype=wp.int32),
    gen_valid: wp.array(dtype=wp.int32),
    min_radius: wp.array(dtype=float),
    width: wp.array(dtype=float),
    box: wp.array(dtype=wp.vec4),
    nb: int,
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    first_only: int,
    valid: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
    crossings: wp.array(dtype=wp.int32),
    turning: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] == 0:
        return
    base = e * n
    flags = wp.int32(0)
    if gen_valid[e] == 0:
        flags = flags | REJECTED
    r_min = wp.float64(min_radius[0])
    check_r = r_min > wp.float64(0.0)
    two_r = wp.float64(2.0) * r_min
    total = wp.float32(0.0)
    closed = wp.int32(0)
    if n >= 3:
        closed = wp.int32(1)
    tn = wp.int32(0)
    a = xy[base + n - 2]
    b = xy[base + n - 1]
    u = b - a
    for i in range(n):
        c = xy[base + i]
        if not (wp.isfinite(c[0]) and wp.isfinite(c[1])):
            closed = wp.int32(0)
            break
        v = c - b
        lv = wp.length(v)
        if not (lv > 0.0):
            closed = wp.int32(0)
            break
        total += lv
        tn += _turn_step(u, v)
        if check_r:
            # circumradius of (a, b, c) = |ab| |bc| |ca| / (2 * |cross|)
            prod = wp.float64(wp.length(u)) * wp.float64(lv) * wp.float64(wp.length(c - a))
            if prod < two_r * wp.abs(ccw(a, b, c)):
                flags = flags | RADIUS
        a = b
        b = c
        u = v
    if closed == 0:
        valid[e] = 0
        reason[e] = flags | NOT_CLOSED
        crossings[e] = 0
        turning[e] = 0
        return
    if tn != 1 and tn != -1:
        flags = flags | TURNING
    cnt = _ring_crossings(
        xy, base, n, chain, chain_n, order, key, bucket, base, e * (n + 1), first_only
    )
    if cnt > 0:
        flags = flags | SELF_INTERSECTING
    w = width[0]
    if w > 0.0:
        bad = _too_close(xy, base, n, total / float(n), w, box, e * nb)
        if bad != 0:
            flags = flags | CLEARANCE
    reason[e] = flags
    crossings[e] = cnt
    turning[e] = tn
    if flags == 0:
        valid[e] = 1
    else:
        valid[e] = 0
