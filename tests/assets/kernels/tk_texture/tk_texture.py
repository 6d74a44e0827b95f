import warp as wp


@wp.kernel
def tk_texture(
    tex: wp.array(dtype=wp.float32),
    dst: wp.array(dtype=wp.float32),
    tex_width: int,
    tex_height: int,
):
    i = wp.tid()
    x = i % tex_width
    y = i / tex_width
    dst[i] = tex[y * tex_width + x] + float(tex_width) * 100.0 + float(tex_height) * 1000.0
