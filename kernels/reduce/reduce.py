"""reduce (segmented): ``out[s]`` folds ``src`` over segment s with FOLD add, min or max.

The dispatch covers the segments, one thread per segment folding its elements in order
(the same bytes run to run, on every device). Segment s covers ``[starts[s],
starts[s + 1])``; the last live segment ends at the live count of ``src`` (its length, or
with COUNT=device the word ``src_count``). An empty segment holds the fold's identity (0,
the largest, the least value). With COUNT=device the segment count is the word
``domain_count`` (segment_count). Past it (the inert values): a segment is not written
(``out`` stays as allocated, 0).

Contract chosen here: the 0.1 interface names the kernel and its inert values.
"""

import warp as wp

# @when TYPE f32
T = wp.float32
# @end
# @when TYPE i32
T = wp.int32
# @end


@wp.func
def identity() -> T:
    # @when FOLD add
    return T(0)
    # @end
    # @when FOLD min TYPE=f32
    return wp.inf
    # @end
    # @when FOLD max TYPE=f32
    return -wp.inf
    # @end
    # @when FOLD min TYPE=i32
    return T(2147483647)
    # @end
    # @when FOLD max TYPE=i32
    return T(-2147483647 - 1)
    # @end


@wp.kernel
def reduce(
    src: wp.array(dtype=T),
    starts: wp.array(dtype=wp.int32),
    out: wp.array(dtype=T),
    # @when COUNT device
    src_count: wp.array(dtype=wp.uint32),
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    s = wp.tid()
    segs = wp.min(out.shape[0], starts.shape[0])
    n = src.shape[0]
    # @when COUNT device
    segs = wp.int32(wp.min(domain_count[0], wp.uint32(segs)))
    n = wp.int32(wp.min(src_count[0], wp.uint32(n)))
    # @end
    if s >= segs:
        return
    lo = wp.max(starts[s], 0)
    hi = n
    if s + 1 < segs:
        hi = wp.min(starts[s + 1], n)
    acc = identity()
    for i in range(lo, hi):
        # @when FOLD add
        acc = acc + src[i]
        # @end
        # @when FOLD min
        acc = wp.min(acc, src[i])
        # @end
        # @when FOLD max
        acc = wp.max(acc, src[i])
        # @end
    out[s] = acc
