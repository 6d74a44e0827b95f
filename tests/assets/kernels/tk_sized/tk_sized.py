import warp as wp


@wp.kernel
def tk_sized(out: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    if i < out.shape[0]:
        out[i] = wp.uint32(i * 3)
