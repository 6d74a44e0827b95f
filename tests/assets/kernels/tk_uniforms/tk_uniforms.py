import warp as wp


@wp.kernel
def tk_uniforms(
    dst: wp.array(dtype=wp.float32),
    a: float,
    off_x: float,
    off_y: float,
    time: float,
    frame: int,
    count: int,
    flag: int,
    dt: float,
):
    dst[0] = a
    dst[1] = off_x
    dst[2] = off_y
    dst[3] = time
    dst[4] = float(frame)
    dst[5] = float(count)
    dst[6] = float(flag)
    dst[7] = dt
