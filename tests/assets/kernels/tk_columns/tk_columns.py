import warp as wp


@wp.kernel
def tk_columns(
    ordered: wp.array2d(dtype=wp.float32),
    byname: wp.array2d(dtype=wp.float32),
    dst: wp.array(dtype=wp.float32),
    dst2: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    dst[i] = ordered[0, i] * 10.0 + ordered[1, i]
    dst2[i] = byname[0, i] * 10.0 + byname[1, i]
