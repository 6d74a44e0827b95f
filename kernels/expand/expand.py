"""expand: element e becomes ``counts[e]`` output slots, ``offsets[e]`` onwards.

``offsets`` is the exclusive scan of ``counts`` (``procgen/scan``). Output slot
``k = offsets[e] + t`` (``0 <= t < counts[e]``) gets ``owner[k] = e`` and
``local_index[k] = t``; the appended counter ``owner_count`` holds the sum of the counts (a
negative count counts as 0), the new count: a count above the outputs' capacity (bind
``n``) is an overflow, the first capacity slots are written and the counter states the
true sum. Past the sum of the counts (the inert values): ``owner`` and ``local_index``
are -1 (both are filled with -1 before the dispatch).

ELEMENTS=plain: the dispatch covers the elements (a number, or a live count read through
``domain_count`` with COUNT=device), one thread per element writing its slots.

ELEMENTS=device: the dispatch covers the output slots, whatever the domain is (a number
or a live count; the capacity ``n`` is the natural one), and the element count is the word
``element_count``: ``counts`` and ``offsets`` hold that many live elements (the inert
values). Each output slot finds its owner by binary search over ``offsets``; slot 0 adds
the sum to the counter. ``domain_count`` is not read in this form, so it binds 6 buffers
over either domain.

Storage buffers: 5 plain (counts, offsets, owner, its counter, local_index), 6 over a live
count.
"""

import warp as wp


@wp.kernel
def expand(
    counts: wp.array(dtype=wp.int32),
    offsets: wp.array(dtype=wp.int32),
    owner: wp.array(dtype=wp.int32),
    owner_count: wp.array(dtype=wp.uint32),
    local_index: wp.array(dtype=wp.int32),
    # @when COUNT device
    # @when ELEMENTS plain
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    # @end
    # @when ELEMENTS device
    element_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    cap = wp.min(owner.shape[0], local_index.shape[0])
    # @when ELEMENTS plain
    live = wp.min(counts.shape[0], offsets.shape[0])
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if i >= live:
        return
    c = wp.max(counts[i], 0)
    base = offsets[i]
    wp.atomic_add(owner_count, 0, wp.uint32(c))
    # only the slots inside [0, cap) are visited: t from max(0, -base) to min(c, cap - base)
    b64 = wp.int64(base)
    t0 = wp.int32(wp.min(wp.max(wp.int64(0), -b64), wp.int64(c)))
    t1 = wp.int32(wp.min(wp.int64(c), wp.int64(cap) - b64))
    for t in range(t0, t1):
        k = base + t
        owner[k] = i
        local_index[k] = t
    # @end
    # @when ELEMENTS device
    ne = wp.int32(wp.min(element_count[0], wp.uint32(wp.min(counts.shape[0], offsets.shape[0]))))
    total = wp.int32(0)
    if ne > 0:
        total = offsets[ne - 1] + wp.max(counts[ne - 1], 0)
    if i == 0:
        wp.atomic_add(owner_count, 0, wp.uint32(total))
    if i >= total or i >= cap:
        return
    lo = wp.int32(0)
    hi = ne - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= i:
            lo = mid
        else:
            hi = mid - 1
    owner[i] = lo
    local_index[i] = i - offsets[lo]
    # @end
