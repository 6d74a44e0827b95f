"""loops_cut: picks the head edge of every chain and ring, and cuts the links there.

Input: ``prev[i]``, the edge entering the start of edge i (-1 for none; a node gathers it
as ``in_edge[a[i]]``), ``start`` (loops link's ``head``: 1 where an open chain starts), and
jump MODE=min run to convergence over ``prev`` with the slot ids as values: ``rep`` (the
least slot upstream) and ``root`` (where the pointers ended).

An edge is on an open chain when its root is a chain start (``start[root[i]] == 1``), and
on a ring otherwise. ``head[i]`` is 1 for the first edge of a chain (``start[i]``) and for
the least edge of a ring (``rep[i] == i``). ``cut[i]`` is the predecessor pointer with the
ring cut open before its head: the slot itself for a head, else ``prev[i]`` (the slot
itself when that is not a live edge). Past the live count (the inert values): ``head`` is
0 and ``cut`` is the slot itself.

Contract chosen here: the 0.1 interface names the kernel and its inert values; the six buffers are
the four read columns and the two outputs. Edges are taken to form simple chains and
rings (at most one edge in and one out per vertex).
"""

import warp as wp


@wp.kernel
def loops_cut(
    prev: wp.array(dtype=wp.int32),
    start: wp.array(dtype=wp.int32),
    rep: wp.array(dtype=wp.int32),
    root: wp.array(dtype=wp.int32),
    head: wp.array(dtype=wp.int32),
    cut: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = head.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(head.shape[0])))
    # @end
    # a pointer is followed only into slots every input holds (bound outputs may be longer)
    live = wp.min(
        live, wp.min(wp.min(prev.shape[0], start.shape[0]), wp.min(rep.shape[0], root.shape[0]))
    )
    if i >= live:
        head[i] = 0
        cut[i] = i
        return
    r = root[i]
    chain = 0
    if r >= 0 and r < live:
        if start[r] != 0:
            chain = 1
    h = 0
    if chain == 1:
        if start[i] != 0:
            h = 1
    else:
        if rep[i] == i:
            h = 1
    head[i] = h
    c = i
    if h == 0:
        p = prev[i]
        if p >= 0 and p < live:
            c = p
    cut[i] = c
