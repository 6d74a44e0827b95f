import warp as wp


@wp.kernel
def tk_inplace(v: wp.array(dtype=wp.int32), w: wp.array(dtype=wp.float32)):
    i = wp.tid()
    v[i] = v[i] * 2
    w[i] = w[i] + 0.5
