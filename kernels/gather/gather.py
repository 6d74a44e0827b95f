"""gather: dst[i] = src[idx[i]] for every live slot i.

Over a live count, slots at or past the live count write the inert value zero. An index
outside src (negative or past its end) reads zero. TYPE picks the element (f32, i32, u32,
vec2, vec3, vec4).
"""

import warp as wp

# @when TYPE f32
T = wp.float32


@wp.func
def zero_value() -> wp.float32:
    return wp.float32(0.0)


# @end
# @when TYPE i32
T = wp.int32


@wp.func
def zero_value() -> wp.int32:
    return wp.int32(0)


# @end
# @when TYPE u32
T = wp.uint32


@wp.func
def zero_value() -> wp.uint32:
    return wp.uint32(0)


# @end
# @when TYPE vec2
T = wp.vec2f


@wp.func
def zero_value() -> wp.vec2f:
    return wp.vec2f(0.0, 0.0)


# @end
# @when TYPE vec3
T = wp.vec3f


@wp.func
def zero_value() -> wp.vec3f:
    return wp.vec3f(0.0, 0.0, 0.0)


# @end
# @when TYPE vec4
T = wp.vec4f


@wp.func
def zero_value() -> wp.vec4f:
    return wp.vec4f(0.0, 0.0, 0.0, 0.0)


# @end


@wp.kernel
def gather(
    src: wp.array(dtype=T),
    idx: wp.array(dtype=wp.int32),
    dst: wp.array(dtype=T),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
):
    i = wp.tid()
    live = dst.shape[0]
    # @when COUNT device
    live = wp.int32(wp.min(domain_count[0], wp.uint32(dst.shape[0])))
    # @end
    if i >= live:
        dst[i] = zero_value()
        return
    j = idx[i]
    if j >= 0 and j < src.shape[0]:
        dst[i] = src[j]
    else:
        dst[i] = zero_value()
