"""loops_place: the ring (or chain) of every edge and its position from the ring's head.

Input: loops_cut's ``head``, ``ring_of`` (the exclusive scan of ``head``: a head's ring
index, rings numbered in slot order of their heads), and jump MODE=rank run to
convergence over loops_cut's ``cut`` with value 1 for every edge but the heads: ``root``
(the head each edge reaches) and ``rank`` (the links from the head to the edge).

``ring[i] = ring_of[root[i]]`` when the root is a live head (else -1) and ``pos[i] =
rank[i]``. Past the live count (the inert values): ``ring`` is -1 and ``pos`` is 0.

Contract chosen here: the 0.1 interface names the kernel and its inert values; the six buffers are
the four read columns and the two outputs.
"""

import warp as wp


@wp.kernel
def loops_place(
    head: wp.array(dtype=wp.int32),
    ring_of: wp.array(dtype=wp.int32),
    root: wp.array(dtype=wp.int32),
    rank: wp.array(dtype=wp.int32),
    ring: wp.array(dtype=wp.int32),
    pos: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = ring.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(ring.shape[0])))
    # @end
    # a pointer is followed only into slots every input holds (bound outputs may be longer)
    live = wp.min(
        live, wp.min(wp.min(head.shape[0], ring_of.shape[0]), wp.min(root.shape[0], rank.shape[0]))
    )
    if i >= live:
        ring[i] = -1
        pos[i] = 0
        return
    r = root[i]
    rid = -1
    if r >= 0 and r < live:
        if head[r] != 0:
            rid = ring_of[r]
    ring[i] = rid
    pos[i] = rank[i]
