"""scan: exclusive prefix sums, over the live slots or segment by segment.

SEGMENTS=plain (one group). The domain is the elements. For every live slot i,
``dst[i] = src[0] + ... + src[i-1]`` and ``ends[i] = dst[i] + src[i]`` (the inclusive
sum); ``total[0]`` is the sum of the live slots. Slots at or past the live count hold the
total in ``dst`` and ``ends`` (the inert value: the total of the last
group, 0 for an empty run).

SEGMENTS=device (one group per segment). The domain is the segments: the segment count
is a plain number, or, with COUNT=device, the word ``domain_count`` (segment_count).
Segment s covers ``[starts[s], starts[s+1])`` and the last live segment ends at the end of
``src`` (clamped to ``dst``); ``dst`` restarts at 0 in every segment and ``total[s]`` is
the sum of segment s. A segment past segment_count is not scanned or written: its
elements and its total stay as allocated (0).

Contract chosen here (the 0.1 interface names the kernel and its inert values): the fourth buffer
of the plain variant is the inclusive sum ``ends``, the one of the segmented variant the
segment starts, so both bind 4 buffers and 5 over a live count. The dispatch is serial:
one thread walks the elements in order, which is the fastest form on Warp's
single-threaded CPU backend and gives the same bytes run to run.
"""

import warp as wp

# @when TYPE f32
T = wp.float32
# @end
# @when TYPE i32
T = wp.int32
# @end


@wp.kernel
def scan(
    src: wp.array(dtype=T),
    # @when SEGMENTS device
    starts: wp.array(dtype=wp.int32),
    # @end
    dst: wp.array(dtype=T),
    # @when SEGMENTS plain
    ends: wp.array(dtype=T),
    # @end
    total: wp.array(dtype=T),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    # @when SEGMENTS plain
    n = wp.min(dst.shape[0], ends.shape[0])
    live = wp.min(n, src.shape[0])
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    live = wp.max(live, 0)  # a count word past 2**31 reads as no live slot
    acc = T(0)
    for i in range(live):
        v = src[i]
        dst[i] = acc
        acc = acc + v
        ends[i] = acc
    for i in range(live, n):
        dst[i] = acc
        ends[i] = acc
    if total.shape[0] > 0:
        total[0] = acc
    # @end
    # @when SEGMENTS device
    nseg = wp.min(total.shape[0], starts.shape[0])
    segs = nseg
    # @when COUNT device
    segs = wp.int32(wp.min(domain_count[0], wp.uint32(nseg)))
    # @end
    n = wp.min(src.shape[0], dst.shape[0])
    for s in range(segs):
        lo = wp.max(starts[s], 0)
        hi = n
        if s + 1 < segs:
            hi = wp.min(starts[s + 1], n)
        acc = T(0)
        for i in range(lo, hi):
            v = src[i]
            dst[i] = acc
            acc = acc + v
        total[s] = acc
    # @end
