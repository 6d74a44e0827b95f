"""hash_gather: for every live query, the points listed in its hash cell, as pairs.

A spatial hash (built by the node: points sorted by cell into ``order``, with ``start`` the
first slot of each cell, ``start[c + 1]`` its end) is read for each query's cell
``qcell[q]`` (-1 or a cell outside ``start``: nothing). Every point p listed there makes a
pair: ``items[k] = p`` and ``query[k] = q``, k taken from the appended counter
``items_count``, which ends holding the number of pairs listed (the new count). The node
states the bound (bind ``total``: a pair list has no smaller bound than points times
queries); a count above it is an overflow: the first ``total`` pairs are written and the
counter states the true count. Items past the count are left as allocated (0) (the
inert values). To search the 3x3 (or 27) cells around a query, a node runs the queries
once per neighbour offset (one ``qcell`` per query and offset).

With COUNT=device the queries are a live count (``domain_count``) and the points one too
(``point_count``): a listed point id at or past it is skipped. Storage buffers: 6 plain
(qcell, start, order, items, its counter, query), 8 over a live count.

Contract chosen here: the 0.1 interface names the kernel, its count and its buffer counts; on the
CPU the pairs come in query order, on CUDA in an unspecified order.
"""

import warp as wp


@wp.kernel
def hash_gather(
    qcell: wp.array(dtype=wp.int32),
    start: wp.array(dtype=wp.int32),
    order: wp.array(dtype=wp.int32),
    items: wp.array(dtype=wp.int32),
    items_count: wp.array(dtype=wp.uint32),
    query: wp.array(dtype=wp.int32),
    # @when COUNT device
    point_count: wp.array(dtype=wp.uint32),
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    q = wp.tid()
    live = qcell.shape[0]
    points = order.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    points = wp.int32(wp.min(point_count[0], wp.uint32(points)))
    # @end
    if q >= live:
        return
    c = qcell[q]
    if c < 0 or c >= start.shape[0] - 1:  # (c + 1 would wrap for the largest i32)
        return
    lo = wp.max(start[c], 0)
    hi = wp.min(start[c + 1], order.shape[0])
    cap = wp.min(items.shape[0], query.shape[0])
    for s in range(lo, hi):
        p = order[s]
        if p >= 0 and p < points:
            k = wp.int32(wp.atomic_add(items_count, 0, wp.uint32(1)))
            if k < cap:
                items[k] = p
                query[k] = q
