"""jump: one round of pointer jumping over a successor array (list ranking, chain minimum).

Each live slot i with pointer ``p = parent[i]`` jumps to its pointer's pointer:
``parent_out[i] = parent[p]``. A slot whose pointer is itself or lies outside the live
slots is an end: it keeps itself (``parent_out[i] = i``), its value and its span. A slot
pointing at an end keeps pointing at it. MODE=rank sums ``value_out[i] = value[i] +
value[p]`` over the slots before the end (the end's own value is not added in: give each
slot the weight of the link leaving it; with 1 per link, after ceil(log2(n)) rounds value
is the number of links to the end and ``parent_out`` the end); MODE=min takes
``value_out[i] = min(value[i], value[p])`` (start with the slot ids and it is the least
slot reachable, the end included: on a ring, the ring's least slot). ``span_out`` sums the spans
the same way (saturating at 2**30), so a slot on a ring shows a span past the capacity
once enough rounds ran. ``moved[0]`` counts the live slots whose pointer changed: a round
that moves none has converged.

Past the live count (the inert values): ``parent_out`` is the slot itself, ``value_out``
and ``span_out`` are 0. The round reads its inputs and writes separate outputs, so rounds
ping-pong between two sets of columns; a node runs ceil(log2(capacity)) rounds, a number
it knows without reading the count back.

Contract chosen here: the 0.1 interface names the kernel (rank, min) and its inert values; the
seven buffers are the three read columns, their three successors and the moved counter.
"""

import warp as wp


@wp.kernel
def jump(
    parent: wp.array(dtype=wp.int32),
    value: wp.array(dtype=wp.int32),
    span: wp.array(dtype=wp.int32),
    parent_out: wp.array(dtype=wp.int32),
    value_out: wp.array(dtype=wp.int32),
    span_out: wp.array(dtype=wp.int32),
    moved: wp.array(dtype=wp.uint32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = parent_out.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(parent_out.shape[0])))
    # @end
    # a pointer is followed only into slots every input holds (bound outputs may be longer)
    live = wp.min(live, wp.min(parent.shape[0], wp.min(value.shape[0], span.shape[0])))
    if i >= live:
        parent_out[i] = i
        value_out[i] = 0
        span_out[i] = 0
        return
    p = parent[i]
    if p < 0 or p >= live or p == i:
        parent_out[i] = i
        value_out[i] = value[i]
        span_out[i] = span[i]
        return
    q = parent[p]
    if q < 0 or q >= live or q == p:
        # p is an end: the pointer stays, the end's own value is not summed in
        parent_out[i] = p
        value_out[i] = value[i]
        # @when MODE min
        value_out[i] = wp.min(value[i], value[p])
        # @end
        span_out[i] = span[i]
        return
    parent_out[i] = q
    wp.atomic_add(moved, 0, wp.uint32(1))
    # @when MODE rank
    value_out[i] = value[i] + value[p]
    # @end
    # @when MODE min
    value_out[i] = wp.min(value[i], value[p])
    # @end
    span_out[i] = wp.min(span[i] + span[p], 1073741824)
