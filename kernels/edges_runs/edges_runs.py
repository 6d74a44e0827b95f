"""edges_runs: the edges of a mesh from its sorted half-edges, one edge per run of equal keys.

Input: the half-edges sorted by ``(ka, kb)`` (each a face's side, its lesser and greater
vertex), over the domain (a live count: the half-edges of the live faces).

STAGE=heads: ``flag[i]`` is 1 where a run starts (``i == 0`` or the key differs from slot
``i - 1``), else 0; ``runs[0]`` counts the runs (the edges; a count for the table stage).
Past the live count (the seed's table): ``flag`` is 0.

STAGE=table: ``edge`` comes in holding the inclusive scan of ``flag`` and goes out holding
the run of each half-edge (``edge[i] - 1``: the mesh edge it is a side of). For a run r
starting at slot i, ``a[r] = ka[i]``, ``b[r] = kb[i]`` and ``fcount[r]`` is the run's length
(how many faces share the edge). Past the live count (the seed's table): ``a`` and ``b``
are -1 and ``fcount`` 0 (slots past the run count stay so, as the outputs are filled
before the dispatch), and ``edge`` is -1.

Storage buffers: the plain variants bind all eight (both stages, as the schema
declares them), the COUNT=device variants only their own stage's
(``when: "COUNT=plain; COUNT=device STAGE=table"``): 5 for heads, 8 for table. The plain
table stage writes ``runs`` too.
"""

import warp as wp


@wp.kernel
def edges_runs(
    ka: wp.array(dtype=wp.int32),
    kb: wp.array(dtype=wp.int32),
    flag: wp.array(dtype=wp.int32),
    # @when COUNT plain
    runs: wp.array(dtype=wp.uint32),
    edge: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    fcount: wp.array(dtype=wp.int32),
    # @end
    # @when COUNT device
    # @when STAGE heads
    runs: wp.array(dtype=wp.uint32),
    # @end
    # @when STAGE table
    edge: wp.array(dtype=wp.int32),
    a: wp.array(dtype=wp.int32),
    b: wp.array(dtype=wp.int32),
    fcount: wp.array(dtype=wp.int32),
    # @end
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = wp.min(ka.shape[0], kb.shape[0])
    # @when COUNT device
    live = wp.min(wp.int32(domain_count[0]), live)
    # @end
    # @when STAGE heads
    if i >= live:
        flag[i] = 0
        return
    f = 1
    if i > 0:
        if ka[i] == ka[i - 1] and kb[i] == kb[i - 1]:
            f = 0
    flag[i] = f
    if f == 1:
        wp.atomic_add(runs, 0, wp.uint32(1))
    # @end
    # @when STAGE table
    if i >= live:
        if i < edge.shape[0]:
            edge[i] = -1
        if i < a.shape[0]:
            a[i] = -1
            b[i] = -1
            fcount[i] = 0
        return
    r = edge[i] - 1
    edge[i] = r
    if flag[i] != 0:
        j = i + 1
        while j < live:
            if flag[j] != 0:
                break
            j = j + 1
        if r >= 0 and r < a.shape[0]:
            a[r] = ka[i]
            b[r] = kb[i]
            fcount[r] = j - i
        # @when COUNT plain
        wp.atomic_add(runs, 0, wp.uint32(1))
        # @end
    # @end
