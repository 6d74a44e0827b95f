"""scatter (fold pass): folds each live slot's value into the place its index names.

For every live slot i with ``0 <= idx[i] < len(dst)``: ``dst[idx[i]] = fold(dst[idx[i]],
v)`` with FOLD add, min or max, atomically, where v is ``src[i]`` (SRC=buffer) or the slot
number i itself (SRC=index: with FOLD=max, the greatest slot naming each place, which is how
``procgen/loops`` fills its vertex tables). ``dst`` is read and written in place (bound to
a column, the op writes a copy); places no index names keep their value. Past the live
count (the inert values): an index reaches no place. An index outside ``dst`` reaches
none either.

Contract chosen here: the 0.1 interface names the kernel (fold pass) and its inert value.
"""

import warp as wp

# @when TYPE f32
T = wp.float32
# @end
# @when TYPE i32
T = wp.int32
# @end


@wp.kernel
def scatter(
    idx: wp.array(dtype=wp.int32),
    # @when SRC buffer
    src: wp.array(dtype=T),
    # @end
    dst: wp.array(dtype=T),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = idx.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if i >= live:
        return
    j = idx[i]
    if j < 0 or j >= dst.shape[0]:
        return
    # @when SRC buffer
    v = src[i]
    # @end
    # @when SRC index
    v = T(i)
    # @end
    # @when FOLD add
    wp.atomic_add(dst, j, v)
    # @end
    # @when FOLD min
    wp.atomic_min(dst, j, v)
    # @end
    # @when FOLD max
    wp.atomic_max(dst, j, v)
    # @end
