"""The uniform grid of cells a mesh's triangles are binned into on the host, with the
float32 arithmetic the kernels find a triangle's cells with."""

from __future__ import annotations

import numpy as np

#: the most grid cells the node allocates over a mesh
MAX_CELLS = 1 << 21


def _cells_of(x: np.ndarray, o: np.ndarray, cell: np.float32, dims: np.ndarray, side: int):
    """The grid cell of each float32 coordinate as the kernel's ``cell_of`` finds it, one
    cell wider on ``side`` (-1 low, 1 high) within 1e-4 of a cell's edge, so a rounding the
    two sides do differently still leaves the kernel's cell among a triangle's cells."""
    f = (x - o) / cell  # float32, as in the kernel
    c = np.where(f >= dims, dims - 1, np.where(f > 0, np.trunc(f), 0)).astype(np.int64)
    near = (f - np.floor(f) < 1e-4) if side < 0 else (np.ceil(f) - f < 1e-4)
    return np.clip(c + side * near, 0, dims - 1)


def _grid(soup: np.ndarray, cell: float | None = None):
    """Bins the triangles of a soup into a uniform grid; returns (words, uniforms)."""
    # the kernel reads float32 corners: every box is theirs (float64 where cells are sized)
    t32 = np.asarray(soup, np.float32).reshape(-1, 3, 3)
    n = len(t32)
    if n == 0:
        return np.zeros(2, np.int32), dict(origin=(0.0, 0.0, 0.0), cell=1.0, nx=1, ny=1, nz=1)
    lo32, hi32 = t32.min(axis=1), t32.max(axis=1)
    lo, hi = lo32.astype(np.float64), hi32.astype(np.float64)
    glo, ghi = lo.min(axis=0), hi.max(axis=0)
    span = np.maximum(ghi - glo, 0.0)
    if cell is None:
        cell = float(np.mean((hi - lo).max(axis=1))) * 1.5
    cell = max(float(cell), float(span.max()) * 1e-6, 1e-6)
    while True:
        dims = np.maximum(np.ceil(span / cell).astype(np.int64), 1)
        if int(np.prod(dims)) <= MAX_CELLS:
            break
        cell *= 1.5
    origin = glo - 0.25 * cell * (span == 0)  # a flat extent sits inside its one cell
    # the kernel takes origin and cell as float32 and finds a triangle's cells from its
    # float32 corners: bin with the same numbers and the same float32 arithmetic
    origin, cell = origin.astype(np.float32), np.float32(cell)
    c0 = _cells_of(lo32, origin, cell, dims, -1)
    c1 = _cells_of(hi32, origin, cell, dims, 1)
    ext = c1 - c0 + 1
    per = ext.prod(axis=1)
    owner = np.repeat(np.arange(n), per)
    local = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    ex, ey = ext[owner, 0], ext[owner, 1]
    cx = c0[owner, 0] + local % ex
    cy = c0[owner, 1] + (local // ex) % ey
    cz = c0[owner, 2] + local // (ex * ey)
    cid = (cz * dims[1] + cy) * dims[0] + cx
    order = np.argsort(cid, kind="stable")
    cells = int(np.prod(dims))
    start = np.searchsorted(cid[order], np.arange(cells + 1)) + cells + 1
    words = np.concatenate([start, owner[order]]).astype(np.int32)
    uni = dict(
        origin=tuple(float(x) for x in origin),
        cell=float(cell),
        nx=int(dims[0]),
        ny=int(dims[1]),
        nz=int(dims[2]),
    )
    return words, uni
