"""The kernels of ``track_gen.widths``: the direction of travel, the widths along the lap and
the boundary-crossing test.

Every kernel leaves an env whose ``active`` word is 0 untouched (``regenerate`` keeps the
bytes of the envs it does not remake).
"""

from __future__ import annotations

import warp as wp

from .ops._crossing_funcs import _ring_crossings
from .ops._validity_funcs import _turning
from .ops._validity_kernels import NOT_CLOSED
from .ops.funcs import rand01, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off", "enable_backward": False})

#: direction modes of ``_flip_k``
CCW = wp.constant(0)
CW = wp.constant(1)
RANDOM = wp.constant(2)

#: the crossing pairs of a band whose two boundaries neither cross themselves nor each other,
#: once cut open at point 0 (see ``_boundary_k``): at L0, the cut meets both left segments
#: there and they meet each other (no longer adjacent in the cut ring); the same at R0; and
#: the cut's two copies overlap
CUT_PAIRS = wp.constant(7)

_TWO_PI = wp.constant(6.283185307179586)


@wp.kernel
def _flip_k(
    xy: wp.array(dtype=wp.vec2),
    n: int,
    mode: int,
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    active: wp.array(dtype=wp.int32),
    flip: wp.array(dtype=wp.int32),
):
    # flip[e] = 1 when env e must be reversed to run in its direction: ccw (turning > 0),
    # cw (turning < 0), or either, drawn from the env's "direction" stream (random); a loop
    # of turning number 0 has no direction and is never reversed
    e = wp.tid()
    f = wp.int32(0)
    if active[e] != 0:
        t = _turning(xy, e * n, n)
        want = mode
        if mode == RANDOM:
            want = wp.where(rand01(stream_key(seeds[e], salt), 0) < 0.5, CCW, CW)
        if want == CCW and t < 0:
            f = 1
        if want == CW and t > 0:
            f = 1
    flip[e] = f


@wp.kernel
def _reverse_vec2_k(xy: wp.array(dtype=wp.vec2), n: int, flip: wp.array(dtype=wp.int32)):
    # point i of a flipped env becomes point (n - i) % n: point 0 stays where it is
    e = wp.tid()
    if flip[e] != 0:
        base = e * n
        for k in range(1, (n + 1) // 2):
            a = xy[base + k]
            xy[base + k] = xy[base + n - k]
            xy[base + n - k] = a


@wp.kernel
def _reverse_f_k(v: wp.array(dtype=float), n: int, flip: wp.array(dtype=wp.int32)):
    e = wp.tid()
    if flip[e] != 0:
        base = e * n
        for k in range(1, (n + 1) // 2):
            a = v[base + k]
            v[base + k] = v[base + n - k]
            v[base + n - k] = a


@wp.func
def _wave(key: wp.uint32, first: int, harmonics: int, t: float) -> float:
    """A periodic wave of the lap position t in [0, 1): the sum of ``harmonics`` sines of
    frequencies 1..H, amplitude a_k / k (a_k uniform in [0, 1)) and random phases,
    divided by the sum of the amplitudes (so it stays in [-1, 1])."""
    s = wp.float32(0.0)
    w = wp.float32(0.0)
    for k in range(harmonics):
        a = rand01(key, first + 2 * k) / float(k + 1)
        ph = _TWO_PI * rand01(key, first + 2 * k + 1)
        s += a * wp.sin(_TWO_PI * float(k + 1) * t + ph)
        w += a
    if w > 0.0:
        return s / w
    return 0.0


@wp.kernel
def _widths_k(
    n: int,
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    active: wp.array(dtype=wp.int32),
    left: float,
    right: float,
    variation: float,
    harmonics: int,
    same: int,
    out_left: wp.array(dtype=float),
    out_right: wp.array(dtype=float),
):
    # point i of env e: left * (1 + variation * wave_l(i / n)), the same for right (its own
    # wave, or the left one when ``same``)
    i = wp.tid()
    e = i / n
    if active[e] == 0:
        return
    key = stream_key(seeds[e], salt)
    t = float(i - e * n) / float(n)
    wl = _wave(key, 0, harmonics, t)
    wr = wl
    if same == 0:
        wr = _wave(key, 64, harmonics, t)
    out_left[i] = left * (1.0 + variation * wl)
    out_right[i] = right * (1.0 + variation * wr)


@wp.func
def _left_normal(xy: wp.array(dtype=wp.vec2), base: int, n: int, i: int) -> wp.vec2:
    """The unit left normal at point i: the central tangent p[i+1] - p[i-1] turned +90
    degrees (as ``mesh.road_mesh``); zero for a zero tangent."""
    ip = wp.where(i + 1 == n, 0, i + 1)
    im = wp.where(i == 0, n - 1, i - 1)
    t = xy[base + ip] - xy[base + im]
    ln = wp.length(t)
    if ln > 0.0:
        t = t / ln
    return wp.vec2(-t[1], t[0])


@wp.kernel
def _boundary_k(
    xy: wp.array(dtype=wp.vec2),
    wl: wp.array(dtype=float),
    wr: wp.array(dtype=float),
    n: int,
    active: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
    ring: wp.array(dtype=wp.vec2),
    chain: wp.array(dtype=wp.int32),
    chain_n: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    key: wp.array(dtype=float),
    bucket: wp.array(dtype=wp.int32),
    out: wp.array(dtype=wp.int32),
):
    # the band cut open at point 0, one closed loop of m = 2n + 2 points:
    # L0 .. L(n-1), L0, R0, R(n-1) .. R1, R0 (and back to L0). Its crossing pairs of
    # non-adjacent segments are the CUT_PAIRS of the cut and the segments at L0 and R0,
    # plus one for every pair of boundary segments that meet (a boundary crossing itself
    # or the other one) and every boundary segment the cut crosses.
    # an env the validity stage found not closed (a non-finite point) is skipped: 0
    e = wp.tid()
    if active[e] == 0:
        return
    if (reason[e] & NOT_CLOSED) != 0:
        out[e] = 0
        return
    m = 2 * n + 2
    base = e * n
    rb = e * m
    for i in range(n):
        p = xy[base + i]
        nl = _left_normal(xy, base, n, i)
        ring[rb + i] = p + nl * wl[base + i]
        r = p - nl * wr[base + i]
        if i == 0:
            ring[rb + n + 1] = r
            ring[rb + m - 1] = r
        else:
            ring[rb + 2 * n + 1 - i] = r
    ring[rb + n] = ring[rb]
    # a boundary segment that runs against its centerline segment is folded over (the
    # offset passed the centre of curvature: the normals crossed), even where it does not
    # cross itself (a circle narrower than its width)
    folds = wp.int32(0)
    for i in range(n):
        j = wp.where(i + 1 == n, 0, i + 1)
        d = xy[base + j] - xy[base + i]
        dl = ring[rb + j] - ring[rb + i]
        ri = wp.where(i == 0, rb + m - 1, rb + 2 * n + 1 - i)
        rj = wp.where(j == 0, rb + n + 1, rb + 2 * n + 1 - j)
        dr = ring[rj] - ring[ri]
        if wp.dot(dl, d) <= 0.0 or wp.dot(dr, d) <= 0.0:
            folds += 1
    c = _ring_crossings(ring, rb, m, chain, chain_n, order, key, bucket, rb, e * (m + 1), 0)
    out[e] = c - CUT_PAIRS + folds


@wp.kernel
def _mark_boundary_k(
    extra: wp.array(dtype=wp.int32),
    active: wp.array(dtype=wp.int32),
    bit: int,
    valid: wp.array(dtype=wp.int32),
    reason: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    if active[e] != 0 and extra[e] != 0:
        reason[e] = reason[e] | bit
        valid[e] = 0
