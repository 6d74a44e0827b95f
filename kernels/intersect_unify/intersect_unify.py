"""intersect_unify: welds the ends of the live cuts that are the same point.

End e of the cuts is ``p0[e // 2]`` (e even) or ``p1[e // 2]`` (e odd). Each live cut
inserts its two ends (p0 first) into ``table``, an open-addressing table bound in place
(-1 marks an empty slot; the node allocates a power of two above twice the ends):
linear probing from a hash of the end's coordinates meets either an empty slot, which the end
claims (writing e; an atomic compare and swap) and lists in the appended output
``fresh`` (the slot; ``fresh_count`` is the vertex count, the new count), or a slot
whose end is the same point, which is its vertex. ``id0[k]`` and ``id1[k]`` are the
slots of cut k's ends: two ends are one vertex exactly when their coordinates are equal
as numbers (+0 and -0 are one; an end with a NaN is a vertex of its own); intersect_cuts
computes an end shared by neighbouring cuts to the bit. An end finding
the table full (or a slot holding a word that names no end of a live cut) gets -1.

On the CPU the dispatch runs in slot order, so each vertex is claimed by its first end
and ``fresh`` lists the vertices in the order of their first end; on CUDA the winner of
a race is unspecified (the welding is the same). A vertex past the capacity (bind ``n``)
is not listed and the counter still states the true count.

Past the live count (the inert values): a slot is not read or written (id0 and id1 stay
-1). Storage buffers: 7 (p0, p1, table, id0, id1, fresh, its counter), 8 over a live
count.
"""

import warp as wp


@wp.func
def mix(k: wp.uint32) -> wp.uint32:
    h = k ^ (k >> wp.uint32(16))
    h = h * wp.uint32(0x7FEB352D)
    h = h ^ (h >> wp.uint32(15))
    h = h * wp.uint32(0x2C1B3C6D)
    h = h ^ (h >> wp.uint32(16))
    return h


@wp.func
def end_of(p0: wp.array(dtype=wp.vec3f), p1: wp.array(dtype=wp.vec3f), e: int) -> wp.vec3f:
    if e % 2 == 0:
        return p0[e / 2]
    return p1[e / 2]


@wp.func
def same(p: wp.vec3f, q: wp.vec3f) -> bool:
    return p[0] == q[0] and p[1] == q[1] and p[2] == q[2]


@wp.func
def key(x: float) -> wp.uint32:
    # equal numbers give equal words (+0 and -0 too); a NaN gives 0
    if not (x == x):
        return wp.uint32(0)
    v = wp.int64(wp.clamp(x, -1.0e15, 1.0e15) * 1024.0)
    return wp.uint32(v & wp.int64(0xFFFFFFFF)) ^ wp.uint32(v >> wp.int64(32))


@wp.func
def weld(
    p0: wp.array(dtype=wp.vec3f),
    p1: wp.array(dtype=wp.vec3f),
    table: wp.array(dtype=wp.int32),
    fresh: wp.array(dtype=wp.int32),
    fresh_count: wp.array(dtype=wp.uint32),
    e: int,
    live: int,
) -> int:
    size = table.shape[0]
    if size == 0:
        return -1
    p = end_of(p0, p1, e)
    h = mix(key(p[0]))
    h = mix(h ^ key(p[1]))
    h = mix(h ^ key(p[2]))
    s = wp.int32(h % wp.uint32(size))
    for _probe in range(size):
        cur = wp.atomic_cas(table, s, -1, e)
        if cur == -1:
            k = wp.int32(wp.atomic_add(fresh_count, 0, wp.uint32(1)))
            if k < fresh.shape[0]:
                fresh[k] = s
            return s
        if cur >= 0 and cur < 2 * live:
            if same(end_of(p0, p1, cur), p):
                return s
        s = s + 1
        if s == size:
            s = 0
    return -1


@wp.kernel
def intersect_unify(
    p0: wp.array(dtype=wp.vec3f),
    p1: wp.array(dtype=wp.vec3f),
    table: wp.array(dtype=wp.int32),
    id0: wp.array(dtype=wp.int32),
    id1: wp.array(dtype=wp.int32),
    fresh: wp.array(dtype=wp.int32),
    fresh_count: wp.array(dtype=wp.uint32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    k = wp.tid()
    live = wp.min(wp.min(p0.shape[0], p1.shape[0]), wp.min(id0.shape[0], id1.shape[0]))
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if k >= live or k > 1000000000:
        return
    id0[k] = weld(p0, p1, table, fresh, fresh_count, 2 * k, live)
    id1[k] = weld(p0, p1, table, fresh, fresh_count, 2 * k + 1, live)
