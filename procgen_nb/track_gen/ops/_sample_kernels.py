"""Sampling kernels: random counts, distinct grid cells, jittered points, the angle sort."""

from __future__ import annotations

import warp as wp

from .funcs import rand01, rand_int, stream_key

# portable bytes: no host-specific ISA flags, no FMA contraction (see ops.funcs)
wp.set_module_options({"cpu_compiler_flags": "-ffp-contract=off"})


@wp.kernel
def _sample_counts_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    lo: int,
    hi: int,
    out: wp.array(dtype=wp.int32),
):
    e = wp.tid()
    out[e] = rand_int(stream_key(seeds[e], salt), 0, lo, hi)


@wp.kernel
def _grid_cells_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    counts: wp.array(dtype=wp.int32),
    grid: int,
    perm: wp.array(dtype=wp.int32),
    out_cells: wp.array(dtype=wp.int32),
    max_count: int,
):
    e = wp.tid()
    c = grid * grid
    pb = e * c
    ob = e * max_count
    key = stream_key(seeds[e], salt)
    for i in range(c):
        perm[pb + i] = i
    cnt = wp.clamp(counts[e], 0, wp.min(c, max_count))
    for k in range(max_count):
        if k < cnt:
            j = rand_int(key, k, k, c - 1)
            tmp = perm[pb + k]
            perm[pb + k] = perm[pb + j]
            perm[pb + j] = tmp
            out_cells[ob + k] = perm[pb + k]
        else:
            out_cells[ob + k] = -1


@wp.kernel
def _sample_grid_points_k(
    seeds: wp.array(dtype=wp.int32),
    salt: int,
    cells: wp.array(dtype=wp.int32),
    counts: wp.array(dtype=wp.int32),
    grid: int,
    jitter: float,
    scale: float,
    out_xy: wp.array(dtype=wp.vec2),
    max_count: int,
):
    tid = wp.tid()
    e = tid // max_count
    k = tid - e * max_count
    if k >= counts[e] or cells[tid] < 0:
        out_xy[tid] = wp.vec2(wp.nan, wp.nan)
        return
    key = stream_key(seeds[e], salt)
    cell = cells[tid]
    cx = cell % grid
    cy = cell // grid
    u = (float(cx) + 0.5 + jitter * (rand01(key, 2 * k) - 0.5)) / float(grid)
    v = (float(cy) + 0.5 + jitter * (rand01(key, 2 * k + 1) - 0.5)) / float(grid)
    out_xy[tid] = wp.vec2((2.0 * u - 1.0) * scale, (2.0 * v - 1.0) * scale)


@wp.kernel
def _angle_sort_k(xy: wp.array(dtype=wp.vec2), counts: wp.array(dtype=wp.int32), max_count: int):
    e = wp.tid()
    cnt = wp.min(counts[e], max_count)
    if cnt <= 0:
        return
    b = e * max_count
    c = wp.vec2(0.0, 0.0)
    for i in range(cnt):
        c += xy[b + i]
    c = c / float(cnt)
    for i in range(1, cnt):
        p = xy[b + i]
        ap = wp.atan2(p[1] - c[1], p[0] - c[0])
        j = i - 1
        while j >= 0:
            q = xy[b + j]
            if wp.atan2(q[1] - c[1], q[0] - c[0]) <= ap:
                break
            xy[b + j + 1] = q
            j -= 1
        xy[b + j + 1] = p
