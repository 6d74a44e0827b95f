import warp as wp


@wp.kernel
def tk_append(
    src: wp.array(dtype=wp.float32),
    items: wp.array(dtype=wp.int32),
    items_count: wp.array(dtype=wp.uint32),
    thresh: float,
    tag: int,
):
    i = wp.tid()
    if src[i] > thresh:
        slot = wp.int32(wp.atomic_add(items_count, 0, wp.uint32(1)))
        if slot < items.shape[0]:
            items[slot] = tag * 1000 + i
