"""Warp functions (``wp.func``) shared by the ops, the pipeline and the generators.

- ``ccw(a, b, c)``: twice the signed area of the triangle ``a, b, c`` (> 0 counter-clockwise),
  evaluated in float64 from float32 inputs so its sign is exact for ordinary coordinates.
- ``hash_u32(x)``: a 32-bit integer hash (lowbias32 by C. Wellons: two multiply-xorshift
  rounds, full avalanche).
- ``stream_key(seed, salt)``: the key of one random stream of one env: its base seed mixed
  with the stream's salt (``b.salt("<stream>")``).
- ``rand01(key, index)``: the ``index``-th float of a stream, uniform in [0, 1).
- ``rand_range(key, index, lo, hi)`` and ``rand_int(key, index, lo, hi)`` (inclusive).
- ``segments_intersect(p1, p2, p3, p4)``: True when the closed segments meet (touching
  and collinear overlap count).
- ``catmull_rom(p0, p1, p2, p3, t)`` and ``catmull_rom_f``: uniform Catmull-Rom spline.
"""

from __future__ import annotations

import warp as wp

from ...device import _init_warp

_init_warp()

_M1 = wp.constant(wp.uint32(0x7FEB352D))
_M2 = wp.constant(wp.uint32(0x846CA68B))
_GOLDEN = wp.constant(wp.uint32(0x9E3779B9))
_S16 = wp.constant(wp.uint32(16))
_S15 = wp.constant(wp.uint32(15))
_S8 = wp.constant(wp.uint32(8))


@wp.func
def hash_u32(x: wp.uint32) -> wp.uint32:
    """Returns the lowbias32 hash of ``x``."""
    h = x ^ (x >> _S16)
    h = h * _M1
    h = h ^ (h >> _S15)
    h = h * _M2
    h = h ^ (h >> _S16)
    return h


@wp.func
def stream_key(seed: wp.int32, salt: wp.int32) -> wp.uint32:
    """Returns the key of the stream ``salt`` of an env whose base seed is ``seed``."""
    return hash_u32(wp.uint32(seed) ^ hash_u32(wp.uint32(salt) + _GOLDEN))


@wp.func
def rand01(key: wp.uint32, index: wp.int32) -> float:
    """Returns the ``index``-th value of stream ``key``, uniform in [0, 1)."""
    u = hash_u32(key ^ hash_u32(wp.uint32(index) * _GOLDEN + wp.uint32(1)))
    return float(u >> _S8) * (1.0 / 16777216.0)


@wp.func
def rand_range(key: wp.uint32, index: wp.int32, lo: float, hi: float) -> float:
    """Returns the ``index``-th value of stream ``key``, uniform in [lo, hi)."""
    return lo + (hi - lo) * rand01(key, index)


@wp.func
def rand_int(key: wp.uint32, index: wp.int32, lo: wp.int32, hi: wp.int32) -> wp.int32:
    """Returns the ``index``-th integer of stream ``key``, uniform in [lo, hi] (inclusive)."""
    if hi <= lo:
        return lo
    span = hi - lo + 1
    k = wp.int32(rand01(key, index) * float(span))
    return lo + wp.min(k, span - 1)


@wp.func
def ccw(a: wp.vec2, b: wp.vec2, c: wp.vec2) -> wp.float64:
    """Returns twice the signed area of triangle a, b, c (float64; > 0 when counter-clockwise)."""
    ax = wp.float64(a[0])
    ay = wp.float64(a[1])
    return (wp.float64(b[0]) - ax) * (wp.float64(c[1]) - ay) - (wp.float64(b[1]) - ay) * (
        wp.float64(c[0]) - ax
    )


@wp.func
def _on_segment(a: wp.vec2, b: wp.vec2, c: wp.vec2) -> bool:
    return (
        wp.min(a[0], b[0]) <= c[0]
        and c[0] <= wp.max(a[0], b[0])
        and wp.min(a[1], b[1]) <= c[1]
        and c[1] <= wp.max(a[1], b[1])
    )


@wp.func
def segments_intersect(p1: wp.vec2, p2: wp.vec2, p3: wp.vec2, p4: wp.vec2) -> bool:
    """Returns True when the closed segments p1-p2 and p3-p4 share a point."""
    z = wp.float64(0.0)
    d1 = ccw(p3, p4, p1)
    d2 = ccw(p3, p4, p2)
    d3 = ccw(p1, p2, p3)
    d4 = ccw(p1, p2, p4)
    if ((d1 > z and d2 < z) or (d1 < z and d2 > z)) and (
        (d3 > z and d4 < z) or (d3 < z and d4 > z)
    ):
        return True
    if d1 == z and _on_segment(p3, p4, p1):
        return True
    if d2 == z and _on_segment(p3, p4, p2):
        return True
    if d3 == z and _on_segment(p1, p2, p3):
        return True
    if d4 == z and _on_segment(p1, p2, p4):
        return True
    return False


@wp.func
def catmull_rom(p0: wp.vec2, p1: wp.vec2, p2: wp.vec2, p3: wp.vec2, t: float) -> wp.vec2:
    """Returns the uniform Catmull-Rom point between p1 (t=0) and p2 (t=1)."""
    t2 = t * t
    t3 = t2 * t
    return 0.5 * (
        (2.0 * p1)
        + (p2 - p0) * t
        + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2
        + (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3
    )


@wp.func
def catmull_rom_f(p0: float, p1: float, p2: float, p3: float, t: float) -> float:
    """Returns the uniform Catmull-Rom value between p1 (t=0) and p2 (t=1)."""
    t2 = t * t
    t3 = t2 * t
    return 0.5 * (
        (2.0 * p1)
        + (p2 - p0) * t
        + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2
        + (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3
    )
