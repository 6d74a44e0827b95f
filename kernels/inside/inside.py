"""inside: flags[i] = 1 when point i lies inside the shape, else 0.

SHAPE disk: within ``radius`` of (center_x, center_y); SHAPE square: within the square of
half-side ``radius`` around the center; SHAPE ring: between ``inner`` and ``radius``.
Past the live count the flag is 0.
"""

import warp as wp


@wp.kernel
def inside(
    points: wp.array(dtype=wp.vec2f),
    flags: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    center_x: float,
    center_y: float,
    radius: float,
    # @when SHAPE ring
    inner: float,
    # @end
):
    i = wp.tid()
    live = flags.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(flags.shape[0])))
    # @end
    if i >= live:
        flags[i] = 0
        return
    d = points[i] - wp.vec2f(center_x, center_y)
    keep = 0
    # @when SHAPE disk
    if wp.length(d) <= radius:
        keep = 1
    # @end
    # @when SHAPE square
    if wp.abs(d[0]) <= radius and wp.abs(d[1]) <= radius:
        keep = 1
    # @end
    # @when SHAPE ring
    r = wp.length(d)
    if r <= radius and r >= inner:
        keep = 1
    # @end
    flags[i] = keep
