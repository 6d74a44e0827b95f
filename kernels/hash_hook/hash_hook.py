"""hash_hook: joins elements that share a key (a welded vertex, a shared edge) by hashing.

STAGE=hook: every live element i probes the open-addressing table ``slots`` (linear
probing from a hash of ``keys[i]``; -1 marks an empty slot; a node allocates it with
bind ``table``, a power of two above twice the elements). It meets the elements that
claimed a slot before it in arrival order: the first with the same key (and, MATCH=normal,
a normal within ``cos_tol``: ``dot(normal[i], normal[j]) >= cos_tol``) becomes its parent
(``parent[i] = j``, counted in ``hooked``); meeting an empty slot first, it claims the slot
and is its own parent. An element finding the table full is its own parent and is
counted in ``full``. On the CPU the dispatch runs in slot order, so each element's parent
is the least earlier element of its class; on CUDA the claim is an atomic compare and
swap and the winner of a race is unspecified.

A table bound with words of its own (``slots`` in place) is read safely: a word that
names no live element (past the live count, past ``keys``) is passed over like a slot
holding another key, so a table of foreign words ends with its elements counted in
``full``.

STAGE=find: ``parent`` (in place) points every live element at its root, following the
pointers (at most as many steps as there are slots).

Past the live count (the inert values): a slot reads and writes nothing (``parent`` stays
as allocated). Storage buffers: hook with MATCH=normal 6 (keys, normal, slots, parent,
hooked, full), 7 over a live count; find 1, 2 over a live count. MATCH=key leaves the
normals out (5 and 6).

Contract chosen here: the 0.1 interface names the stages, the MATCH option and the buffer counts.
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


@wp.kernel
def hash_hook(
    # @when STAGE hook
    keys: wp.array(dtype=wp.uint32),
    # @when MATCH normal
    normal: wp.array(dtype=wp.vec3f),
    # @end
    slots: wp.array(dtype=wp.int32),
    # @end
    parent: wp.array(dtype=wp.int32),
    # @when STAGE hook
    hooked: wp.array(dtype=wp.uint32),
    full: wp.array(dtype=wp.uint32),
    # @end
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    # @when STAGE hook MATCH=normal
    cos_tol: float,
    # @end
):
    i = wp.tid()
    live = parent.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(live)))
    # @end
    if i >= live:
        return
    # @when STAGE hook
    # a slot word naming no element the kernel can read (a table bound with foreign words)
    # is passed over like a slot of another key; an element finding no place counts in full
    known = wp.min(live, keys.shape[0])
    # @when MATCH normal
    known = wp.min(known, normal.shape[0])
    # @end
    key = keys[i]
    t = slots.shape[0]
    done = wp.int32(0)
    if t > 0:
        h = wp.int32(mix(key) % wp.uint32(t))
        probe = wp.int32(0)
        while probe < t:
            s = (h + probe) % t
            probe = probe + 1
            cur = slots[s]
            if cur == -1:
                old = wp.atomic_cas(slots, s, -1, i)
                if old == -1:
                    parent[i] = i
                    done = 1
                    break
                cur = old
            if cur >= 0 and cur < known:
                same = wp.int32(0)
                if keys[cur] == key:
                    same = 1
                    # @when MATCH normal
                    if wp.dot(normal[i], normal[cur]) < cos_tol:
                        same = 0
                    # @end
                if same == 1:
                    parent[i] = cur
                    wp.atomic_add(hooked, 0, wp.uint32(1))
                    done = 1
                    break
    if done == 0:
        parent[i] = i
        wp.atomic_add(full, 0, wp.uint32(1))
    # @end
    # @when STAGE find
    r = parent[i]
    n = parent.shape[0]
    steps = wp.int32(0)
    while steps < n:
        if r < 0 or r >= n:
            break
        p = parent[r]
        if p == r:
            break
        r = p
        steps = steps + 1
    if r >= 0 and r < n:
        parent[i] = r
    # @end
