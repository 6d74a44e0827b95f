import warp as wp


@wp.kernel
def tk_byname(
    cols: wp.array2d(dtype=wp.float32),
    dst: wp.array(dtype=wp.float32),
    dpos: wp.array(dtype=wp.vec2f),
):
    # no order: the columns are read by name, wherever the packing put them
    i = wp.tid()
    # @when MODE sum
    dst[i] = cols_col_speed(cols, i) + 100.0 * cols_col_mass(cols, i)  # noqa: F821
    # @end
    # @when MODE product
    dst[i] = cols_col_speed(cols, i) * cols_col_mass(cols, i)  # noqa: F821
    # @end
    dpos[i] = cols_col_pos(cols, i) * cols_col_speed(cols, i)  # noqa: F821
