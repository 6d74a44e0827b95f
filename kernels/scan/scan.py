"""scan: exclusive prefix sum, dst[i] = src[0] + ... + src[i-1] over the live slots.

total[0] is the sum of the live slots. Slots at or past the live count hold the total
(the inert value of the seed's table: the total of the last group, 0 for an empty run).
The dispatch is serial: one thread walks the domain in order, which is the fastest form
on Warp's single-threaded CPU backend and gives the same bytes run to run.
"""

import warp as wp

# @when TYPE f32
T = wp.float32
# @end
# @when TYPE i32
T = wp.int32
# @end


@wp.kernel
def scan(
    src: wp.array(dtype=T),
    dst: wp.array(dtype=T),
    total: wp.array(dtype=T),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    n = dst.shape[0]
    live = n
    # @when COUNT device
    live = wp.min(wp.int32(domain_count[0]), n)
    # @end
    acc = T(0)
    for i in range(live):
        v = src[i]
        dst[i] = acc
        acc = acc + v
    for i in range(live, n):
        dst[i] = acc
    total[0] = acc
