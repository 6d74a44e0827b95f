"""compact: appends the index of every live slot whose flag is non-zero.

indices[k] is the slot of the k-th kept element (in slot order on the CPU, where the
dispatch runs in order; in an unspecified order on CUDA), indices_count[0] is the kept
count (the appended counter: it states the true count even past the capacity, and only
the first capacity slots are written), and inverse[i] is where slot i went, or -1 for a
slot that was not kept or lies at or past the live count. indices is -1 past the kept
ones (the output is filled with -1 before the dispatch).
"""

import warp as wp


@wp.kernel
def compact(
    flags: wp.array(dtype=wp.int32),
    indices: wp.array(dtype=wp.int32),
    indices_count: wp.array(dtype=wp.uint32),
    inverse: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = inverse.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(inverse.shape[0])))
    # @end
    if i >= live:
        inverse[i] = -1
        return
    if flags[i] != 0:
        slot = wp.int32(wp.atomic_add(indices_count, 0, wp.uint32(1)))
        if slot < indices.shape[0]:
            indices[slot] = i
        inverse[i] = slot
    else:
        inverse[i] = -1
