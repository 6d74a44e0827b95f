"""loops: links directed edges ``a[i] -> b[i]`` (vertex ids) into chains and rings.

The vertex tables ``out_edge`` (the edge leaving each vertex) and ``in_edge`` (the edge
entering it) are filled between the two stages by ``procgen/scatter`` (FOLD=max, SRC=index,
idx = a, resp. b), so a vertex with several edges keeps the greatest one.

STAGE=clear runs over the vertex table: it writes every slot of the dispatch, the live
count notwithstanding (the inert values): ``out_edge[v] = in_edge[v] = -1``, and
``next[v] = v``, ``head[v] = 0`` for the slots of those outputs.

STAGE=link runs over the edges: ``next[i]`` is the edge leaving ``b[i]`` (the slot itself
when none, or when that edge lies past the live count: the end of an open chain), and
``head[i]`` is 1 when no edge enters ``a[i]`` (edge i starts an open chain), else 0. Past
the live count (the inert values): ``next`` is the slot itself and ``head`` is 0.

Contract chosen here (the 0.1 interface names the stages and the inert values): both stages bind
the same six buffers (the edges, the two vertex tables, the two outputs), seven over a
live count. ``loops_cut``, ``jump`` and ``loops_place`` take it from there.
"""

import warp as wp


@wp.kernel
def loops(
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    out_edge: wp.array(dtype=wp.int32),
    in_edge: wp.array(dtype=wp.int32),
    next: wp.array(dtype=wp.int32),
    head: wp.array(dtype=wp.int32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    # @when STAGE clear
    if i < out_edge.shape[0]:
        out_edge[i] = -1
    if i < in_edge.shape[0]:
        in_edge[i] = -1
    if i < next.shape[0]:
        next[i] = i
    if i < head.shape[0]:
        head[i] = 0
    # @end
    # @when STAGE link
    live = next.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(next.shape[0])))
    # @end
    if i >= live:
        next[i] = i
        head[i] = 0
        return
    nxt = i
    vb = b[i]
    if vb >= 0 and vb < out_edge.shape[0]:
        e = out_edge[vb]
        if e >= 0 and e < live:
            nxt = e
    next[i] = nxt
    starts = 1
    va = a[i]
    if va >= 0 and va < in_edge.shape[0]:
        e = in_edge[va]
        if e >= 0 and e < live:
            starts = 0
    head[i] = starts
    # @end
