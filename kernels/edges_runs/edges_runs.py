"""edges_runs: the edges of a mesh from its sorted half-edges, one edge per run of equal keys.

Input: the half-edges sorted by ``(ka, kb)`` (each a face's side, its lesser and greater
vertex), over the domain (a live count: the half-edges of the live faces).

STAGE=heads: ``flag[i]`` is 1 where a run starts (``i == 0`` or the key differs from slot
``i - 1``), else 0; ``runs[0]`` counts the runs (the edges; a count for the table stage).
Past the live count (the inert values): ``flag`` is 0.

STAGE=table: ``edge`` comes in holding the inclusive scan of ``flag`` and goes out holding
the run of each half-edge (``edge[i] - 1``: the mesh edge it is a side of). For a run r
starting at slot i, ``a[r] = ka[i]``, ``b[r] = kb[i]`` and ``fcount[r]`` is the run's length
(how many faces share the edge). Past the live count (the inert values): ``a`` and ``b``
are -1 and ``fcount`` 0 (slots past the run count stay so, as the outputs are filled
before the dispatch), and ``edge`` is -1.

Storage buffers: the plain variants bind all eight (both stages, as the schema
declares them), the COUNT=device variants only their own stage's
(``when: "COUNT=plain; COUNT=device STAGE=table"``): 5 for heads, 8 for table. The plain
table stage writes ``runs`` too.
"""

import warp as wp


@wp.func
def heads_stage(
    i: wp.int32,
    live: wp.int32,
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
) -> wp.int32:
    """Writes flag[i]; returns 1 where a run starts."""
    if i >= live:
        flag[i] = 0
        return 0
    f = 1
    if i > 0:
        if ka[i] == ka[i - 1] and kb[i] == kb[i - 1]:
            f = 0
    flag[i] = f
    return f


@wp.func
def table_stage(
    i: wp.int32,
    live: wp.int32,
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
    edge: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    fcount: wp.array(dtype=wp.int32),
) -> wp.int32:
    """Writes the run of slot i and, at a run's head, its edge; returns 1 at a head."""
    n = wp.min(live, wp.min(flag.shape[0], edge.shape[0]))
    if i >= n:
        if i < edge.shape[0]:
            edge[i] = -1
        if i < a.shape[0]:
            a[i] = -1
        if i < b.shape[0]:
            b[i] = -1
        if i < fcount.shape[0]:
            fcount[i] = 0
        return 0
    r = edge[i] - 1
    edge[i] = r
    if flag[i] == 0:
        return 0
    j = i + 1
    while j < n:
        if flag[j] != 0:
            break
        j = j + 1
    if r >= 0 and r < wp.min(a.shape[0], wp.min(b.shape[0], fcount.shape[0])):
        a[r] = ka[i]
        b[r] = kb[i]
        fcount[r] = j - i
    return 1


# @when COUNT plain
@wp.kernel
def edges_runs(
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
    runs: wp.array(dtype=wp.uint32),
    edge: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    fcount: wp.array(dtype=wp.int32),
):
    i = wp.tid()
    live = wp.min(ka.shape[0], kb.shape[0])
    # @when STAGE heads
    started = heads_stage(i, live, ka, kb, flag)
    # @end
    # @when STAGE table
    started = table_stage(i, live, ka, kb, flag, edge, a, b, fcount)
    # @end
    if started == 1:
        wp.atomic_add(runs, 0, wp.uint32(1))


# @end
# @when COUNT device STAGE=heads
@wp.kernel
def edges_runs(
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
    runs: wp.array(dtype=wp.uint32),
    domain_count: wp.array(dtype=wp.uint32),
):
    i = wp.tid()
    live = wp.int32(wp.min(domain_count[0], wp.uint32(wp.min(ka.shape[0], kb.shape[0]))))
    if heads_stage(i, live, ka, kb, flag) == 1:
        wp.atomic_add(runs, 0, wp.uint32(1))


# @end
# @when COUNT device STAGE=table
@wp.kernel
def edges_runs(
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
    edge: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    fcount: wp.array(dtype=wp.int32),
    domain_count: wp.array(dtype=wp.uint32),
):
    i = wp.tid()
    live = wp.int32(wp.min(domain_count[0], wp.uint32(wp.min(ka.shape[0], kb.shape[0]))))
    table_stage(i, live, ka, kb, flag, edge, a, b, fcount)


# @end
