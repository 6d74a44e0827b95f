"""mesh_intersect and road_overlap against NumPy and shapely, in one process.

1. Two UV spheres of ``--res`` rings (4 res (res - 1) triangles each) overlapping: the
   crossing pairs and cut curves (``mesh_intersect(mode="cut")``) and the three booleans
   are timed (steady calls, after a warm-up that builds the kernels), against NumPy and
   SciPy as a user would write it (candidate pairs from a ``cKDTree`` over the triangles'
   centroids, boxes overlapping, then a vectorized edge-triangle test in float64), whose
   pair set is compared with the kernels' (pairs within 1e-6 of a decision left out);
   ``--brute`` (and ``--smoke``) also checks it against every pair, untimed.
2. ``--courses`` closed courses of ``--points`` points (a wobbly loop; one in four made
   a figure eight that crosses itself): each road surface (``road_mesh`` at
   ``--width``) is checked for overlap with itself (non-adjacent quads) and with the
   next course, by ``road_overlap`` and by shapely (the triangles as polygons, an STRtree
   query, overlap area > 1e-6); the courses per second of both and whether every answer
   agrees are printed; ``road_overlap_batch`` checks every course against itself, and
   against the next course, in one launch each.
3. ``--boxes`` pairs of boxes on the integer grid (corners 0..3, sides 1..3: most pairs
   share face planes, edges or corners): the three booleans of each, their volumes
   against the boxes' overlap by hand, and the time per boolean.

Ratios are printed; nothing timed is asserted. ``--smoke`` runs tiny sizes (tests/test_mesh.py).
Run: ``python benchmarks/mesh_intersect.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from procgen_nb.mesh import (
    box_mesh,
    mesh_intersect,
    mesh_volume,
    road_mesh,
    road_overlap,
    road_overlap_batch,
    sphere_mesh,
)


def _edge_tri(p, q, tri):
    """Edge (p, q) against triangle ``tri`` (broadcast: ``[..., 3]`` and ``[..., 3, 3]``),
    Moller-Trumbore in float64 -> (hit, margin to the nearest decision)."""
    d = q - p
    e1, e2 = tri[..., 1, :] - tri[..., 0, :], tri[..., 2, :] - tri[..., 0, :]
    h = np.cross(d, e2)
    det = (e1 * h).sum(-1)
    ok = np.abs(det) > 1e-12
    det = np.where(ok, det, 1.0)
    s = p - tri[..., 0, :]
    u = (s * h).sum(-1) / det
    qq = np.cross(s, e1)
    v = (d * qq).sum(-1) / det
    t = (e2 * qq).sum(-1) / det
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0) & (t <= 1)
    margin = np.minimum.reduce([abs(u), abs(v), abs(1 - u - v), abs(t), abs(1 - t)])
    return hit, np.where(ok, margin, 0.0)


def np_pairs(a: np.ndarray, b: np.ndarray, chunk: int = 64):
    """Every crossing (i, j) of two soups by brute force over every pair (O(A x B)), and the
    pairs too close to call: a correctness check of :func:`tree_pairs`, not timed beside
    the kernels."""
    ta = a.reshape(-1, 3, 3).astype(np.float64)
    tb = b.reshape(-1, 3, 3).astype(np.float64)
    hits, unsure = set(), set()
    for lo in range(0, len(ta), chunk):
        ca = ta[lo : lo + chunk]
        hit = np.zeros((len(ca), len(tb)), bool)
        margin = np.full(hit.shape, np.inf)
        for x, y, swap in ((ca, tb, False), (tb, ca, True)):
            for i, j in ((0, 1), (1, 2), (2, 0)):
                h, m = _edge_tri(x[:, None, i], x[:, None, j], y[None])
                if swap:
                    h, m = h.T, m.T
                hit |= h
                margin = np.minimum(margin, m)
        # boxes apart: not a pair whatever the margin says
        apart = (ca.max(1)[:, None] < tb.min(1)[None]).any(-1) | (
            ca.min(1)[:, None] > tb.max(1)[None]
        ).any(-1)
        for i, j in zip(*np.nonzero(hit & ~apart & (margin >= 1e-6))):
            hits.add((lo + int(i), int(j)))
        for i, j in zip(*np.nonzero(~apart & (margin < 1e-6))):
            unsure.add((lo + int(i), int(j)))
    return hits, unsure


def tree_pairs(a: np.ndarray, b: np.ndarray):
    """Every crossing (i, j) of two soups as a NumPy/SciPy user would find them: the
    candidate pairs from one ``scipy.spatial.cKDTree`` per soup over the triangles'
    centroids (``sparse_distance_matrix`` within the two largest centroid-to-vertex radii:
    bounding spheres that can touch), kept where their boxes overlap, then the same
    vectorized edge-triangle tests on those pairs alone; and the pairs too close to call."""
    from scipy.spatial import cKDTree

    ta = a.reshape(-1, 3, 3).astype(np.float64)
    tb = b.reshape(-1, 3, 3).astype(np.float64)
    ca, cb = ta.mean(1), tb.mean(1)
    ra = np.linalg.norm(ta - ca[:, None], axis=2).max()
    rb = np.linalg.norm(tb - cb[:, None], axis=2).max()
    near = cKDTree(ca).sparse_distance_matrix(cKDTree(cb), ra + rb, output_type="ndarray")
    i, j = near["i"].astype(np.int64), near["j"].astype(np.int64)
    apart = (ta[i].max(1) < tb[j].min(1)).any(-1) | (ta[i].min(1) > tb[j].max(1)).any(-1)
    i, j = i[~apart], j[~apart]
    x, y = ta[i], tb[j]
    hit = np.zeros(len(i), bool)
    margin = np.full(len(i), np.inf)
    for s, t in ((x, y), (y, x)):
        for k, m in ((0, 1), (1, 2), (2, 0)):
            h, g = _edge_tri(s[:, k], s[:, m], t)
            hit |= h
            margin = np.minimum(margin, g)
    pair = np.stack([i, j], 1)
    hits = {tuple(map(int, p)) for p in pair[hit & (margin >= 1e-6)]}
    unsure = {tuple(map(int, p)) for p in pair[margin < 1e-6]}
    return hits, unsure


def course(rng, n: int, eight: bool) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    if eight:
        return np.stack([np.sin(t) * 40, np.sin(t) * np.cos(t) * 30], axis=1)
    r = 30 + 4 * np.sin(3 * t + rng.uniform(0, 2 * np.pi)) + 2 * np.sin(5 * t)
    return np.stack([np.cos(t) * r, np.sin(t) * r], axis=1) + rng.uniform(-15, 15, size=2)


def shapely_overlap(xy, width, other=None, near=1) -> bool:
    import shapely

    ta = road_mesh(xy, width).soup().reshape(-1, 3, 3)[:, :, :2].astype(np.float64)
    tb = ta if other is None else road_mesh(other, width).soup().reshape(-1, 3, 3)[:, :, :2]
    pa = shapely.polygons(ta)
    pb = shapely.polygons(tb.astype(np.float64))
    tree = shapely.STRtree(pb)
    ia, ib = tree.query(pa, predicate="intersects")
    if other is None:
        nq = len(ta) // 2
        d = np.abs(ia // 2 - ib // 2) % nq
        keep = (ib > ia) & (np.minimum(d, nq - d) > near)
        ia, ib = ia[keep], ib[keep]
    if len(ia) == 0:
        return False
    return bool((shapely.area(shapely.intersection(pa[ia], pb[ib])) > 1e-6).any())


def grid_boxes(rng, k: int):
    """k pairs of boxes on the integer grid: (lo_a, hi_a, lo_b, hi_b) float64 each."""
    lo = rng.integers(0, 4, size=(k, 2, 3)).astype(np.float64)
    hi = lo + rng.integers(1, 4, size=(k, 2, 3))
    return [(lo[i, 0], hi[i, 0], lo[i, 1], hi[i, 1]) for i in range(k)]


def coplanar_booleans(pairs) -> tuple[bool, float, int]:
    """The booleans of each box pair against the volumes by hand: (all agree, seconds per
    boolean, pairs sharing a face plane)."""
    agree, shared, t = True, 0, 0.0
    for lo_a, hi_a, lo_b, hi_b in pairs:
        a, b = box_mesh(lo_a, hi_a), box_mesh(lo_b, hi_b)
        inter = float(np.prod(np.clip(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b), 0, None)))
        va, vb = float(np.prod(hi_a - lo_a)), float(np.prod(hi_b - lo_b))
        want = {"union": va + vb - inter, "intersection": inter, "difference": va - inter}
        ends_a, ends_b = np.stack([lo_a, hi_a]), np.stack([lo_b, hi_b])
        shared += bool((ends_a[:, None] == ends_b[None]).any())  # a plane x, y or z = c
        for mode, v in want.items():
            t0 = time.perf_counter()
            m = mesh_intersect(a, b, mode)
            t += time.perf_counter() - t0
            agree &= abs(mesh_volume(m) - v) < 1e-5
    return agree, t / max(3 * len(pairs), 1), shared


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--res", type=int, default=24)
    ap.add_argument("--courses", type=int, default=32)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--width", type=float, default=6.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--boxes", type=int, default=40)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--brute", action="store_true", help="also check against every pair")
    args = ap.parse_args(argv)
    if args.smoke:
        args.res, args.courses, args.points, args.repeats, args.boxes = 6, 4, 48, 1, 4
    rows: dict = {}

    a = sphere_mesh((0, 0, 0), 1.0, args.res)
    b = sphere_mesh((0.8, 0.3, 0.2), 0.9, args.res)
    nt = len(a.faces)
    mesh_intersect(a, b, "union")  # warm-up: builds every variant
    r = mesh_intersect(a, b, "cut")
    t_cut = best(lambda: mesh_intersect(a, b, "cut"), args.repeats)
    t_bool = {
        m: best(lambda m=m: mesh_intersect(a, b, m), args.repeats)
        for m in ("union", "intersection", "difference")
    }
    want, unsure = tree_pairs(a.soup(), b.soup())  # also the warm-up (imports scipy)
    t_np = best(lambda: tree_pairs(a.soup(), b.soup()), args.repeats)
    got = {tuple(p) for p in r.pairs.tolist()}
    agree = got - unsure == want
    rows["pairs agree with NumPy"] = agree
    rows["reference"] = "scipy cKDTree candidates + NumPy tests"
    print(f"two spheres of {nt} triangles: {len(got)} crossing pairs, {len(r.edges)} cut edges")
    print(
        f"  cut (pairs + cuts + unify): {t_cut * 1e3:8.1f} ms   NumPy pairs (cKDTree "
        f"candidates): {t_np * 1e3:8.1f} ms   ratio {t_np / t_cut:6.1f}x   pairs agree: {agree}"
    )
    if args.brute or args.smoke:  # every pair: a check of the tree's pairs, not timed
        b_want, b_unsure = np_pairs(a.soup(), b.soup())
        same = want - b_unsure == b_want - unsure
        rows["brute force agrees"] = same
        print(f"  brute force over every pair (a check, not timed) agrees: {same}")
    for m, t in t_bool.items():
        v = mesh_volume(mesh_intersect(a, b, m))
        print(f"  {m:<12} {t * 1e3:8.1f} ms   volume {v:.5f}")
        rows[f"{m} ms"] = t * 1e3
    rows["cut ms"], rows["numpy pairs ms"] = t_cut * 1e3, t_np * 1e3

    pairs = grid_boxes(np.random.default_rng(1), args.boxes)
    ok, per, shared = coplanar_booleans(pairs)
    rows["coplanar volumes agree"], rows["coplanar boolean ms"] = ok, per * 1e3
    print(
        f"box pairs on the integer grid ({len(pairs)}, {shared} sharing a plane): "
        f"{per * 1e3:8.1f} ms per boolean   volumes agree by hand: {ok}"
    )

    rng = np.random.default_rng(0)
    courses = [course(rng, args.points, k % 4 == 3) for k in range(args.courses)]
    road_overlap(courses[0], args.width)  # warm-up
    road_overlap(courses[0], args.width, other=courses[-1])

    def ours():
        return [
            (
                road_overlap(c, args.width).overlaps,
                road_overlap(c, args.width, other=courses[k - 1]).overlaps,
            )
            for k, c in enumerate(courses)
        ]

    def theirs():
        return [
            (shapely_overlap(c, args.width), shapely_overlap(c, args.width, courses[k - 1]))
            for k, c in enumerate(courses)
        ]

    t0 = time.perf_counter()
    mine = ours()
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = theirs()
    t_ref = time.perf_counter() - t0
    rows["roads agree with shapely"] = mine == ref
    n = len(courses)
    print(
        f"road overlap ({n} courses of {args.points} points, width {args.width}; itself and "
        f"the next course): road_overlap {n / t_ours:8.1f} courses/s   shapely "
        f"{n / t_ref:8.1f} courses/s   ratio {t_ref / t_ours:5.2f}x   agree: {mine == ref}"
    )
    print(
        f"  self-overlapping: {sum(x for x, _ in mine)}/{n}   overlapping the next: "
        f"{sum(y for _, y in mine)}/{n}"
    )
    rows["road courses/s"], rows["shapely courses/s"] = n / t_ours, n / t_ref
    batch = np.stack(courses)
    road_overlap_batch(batch, args.width)  # warm-up
    t_batch = best(lambda: road_overlap_batch(batch, args.width), args.repeats)
    flags = road_overlap_batch(batch, args.width).tolist()
    same = flags == [x for x, _ in ref]
    rows["batch agrees with shapely"] = same
    rows["batch courses/s"] = n / t_batch
    print(
        f"  road_overlap_batch (itself, all courses in one launch): {n / t_batch:8.1f} "
        f"courses/s   agree with shapely: {same}"
    )
    prev = np.roll(batch, 1, axis=0)  # course k against course k - 1, as above
    t_pair = best(lambda: road_overlap_batch(batch, args.width, other=prev), args.repeats)
    flags = road_overlap_batch(batch, args.width, other=prev).tolist()
    same = flags == [y for _, y in ref]
    rows["batch pairs agree with shapely"] = same
    rows["batch pairs courses/s"] = n / t_pair
    print(
        f"  road_overlap_batch (against the next course, one launch): {n / t_pair:8.1f} "
        f"courses/s   agree with shapely: {same}"
    )
    return rows


if __name__ == "__main__":
    main()
