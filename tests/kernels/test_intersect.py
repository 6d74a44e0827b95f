"""intersect_pairs, intersect_cuts, intersect_unify and intersect_retri against NumPy.

The reference for pairs and cuts is a brute-force edge-triangle test (Moller-Trumbore in
float64): two triangles in general position cross exactly when an edge of one passes
through the other, and the ends of their cut are those crossing points. Pairs whose
reference decision lies within a margin of a boundary are left out of the comparison.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kernel_util import DEVICES, domain, host, run, up, word

from procgen_nb.mesh import box_mesh
from procgen_nb.mesh._cells import _grid

NONE = dict(self_pairs=0, group=1, period=0, near=0)
EPS = 1e-6


def _edge_hits(p, q, tri):
    """Where segment pq crosses triangle tri: (point or None, margin to the boundary)."""
    a, b, c = tri
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = e1 @ h
    if abs(det) < 1e-12:
        return None, 0.0
    s = p - a
    u = (s @ h) / det
    qq = np.cross(s, e1)
    v = (d @ qq) / det
    t = (e2 @ qq) / det
    margin = min(abs(u), abs(v), abs(1 - u - v), abs(t), abs(1 - t))
    if u >= 0 and v >= 0 and u + v <= 1 and 0 <= t <= 1:
        return p + t * d, margin
    return None, margin


def ref_cut(ta, tb):
    """(crosses, the crossing points, the smallest margin of any decision)."""
    pts, margin = [], np.inf
    for tri, other in ((ta, tb), (tb, ta)):
        for i, j in ((0, 1), (1, 2), (2, 0)):
            x, m = _edge_hits(tri[i], tri[j], other)
            margin = min(margin, m)
            if x is not None:
                pts.append(x)
    return len(pts) > 0, pts, margin


def random_soup(rng, n, spread=3.0, size=1.0):
    centers = rng.uniform(0, spread, size=(n, 1, 3))
    return (centers + rng.uniform(-size, size, size=(n, 3, 3))).astype(np.float32)


def run_pairs(a, b, device, live=None, cell=None, test="tri3"):
    words, uni = _grid(b.reshape(-1, 3), cell)
    uni.update(NONE)
    na = len(a)
    bind = {
        "a": up(a.reshape(-1, 3), "Vec3", device),
        "b": up(b.reshape(-1, 3), "Vec3", device),
        "grid": up(words, "Int", device),
    }
    dom = domain(na, live, device)
    hits = host(run("intersect_pairs", {"STAGE": "count", "TEST": test}, bind, dom, uni)["hits"])
    start = (np.cumsum(hits) - hits).astype(np.int32)
    total = int(hits.sum())
    out = run(
        "intersect_pairs",
        {"STAGE": "write", "TEST": test},
        {**bind, "start": up(start, "Int", device), "n": total},
        dom,
        uni,
    )
    return hits, start, out, total


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("live", [None, "some"])
def test_pairs_and_cuts_match_a_brute_force_edge_triangle_test(device, seed, live):
    rng = np.random.default_rng(seed)
    a, b = random_soup(rng, 60), random_soup(rng, 50)
    k = None if live is None else int(rng.integers(0, 60))
    hits, start, out, total = run_pairs(a, b, device, k, cell=[None, 0.4, 5.0, 1.0][seed])
    kk = 60 if k is None else k
    assert (hits[kk:] == 0).all()  # past the live count: no entries
    pa, pb = host(out["pair_a"]), host(out["pair_b"])
    assert word(out["pair_a_count"]) == total
    got = set(zip(pa.tolist(), pb.tolist()))
    assert len(got) == total  # each pair once
    assert list(pa) == sorted(pa)  # listed at the scanned offsets of their triangle of A
    checked = 0
    for i, j in itertools.product(range(60), range(50)):
        want, _, margin = ref_cut(a[i].astype(np.float64), b[j].astype(np.float64))
        if margin < EPS:
            continue
        assert ((i, j) in got) == (want and i < kk), (i, j)
        checked += 1
    assert checked > 2500 and total > 10

    # cuts over the pairs' live count, with two slots more than the pairs
    cap = total + 2
    pa2 = np.concatenate([pa, [0, 0]]).astype(np.int32)
    pb2 = np.concatenate([pb, [0, 0]]).astype(np.int32)
    cuts = run(
        "intersect_cuts",
        None,
        {
            "pair_a": up(pa2, "Int", device),
            "pair_b": up(pb2, "Int", device),
            "a": up(a.reshape(-1, 3), "Vec3", device),
            "b": up(b.reshape(-1, 3), "Vec3", device),
        },
        domain(cap, total, device),
    )
    p0, p1 = host(cuts["p0"]), host(cuts["p1"])
    assert (p0[total:] == 0).all() and (p1[total:] == 0).all()  # not written
    for s in range(total):
        ta, tb = a[pa[s]].astype(np.float64), b[pb[s]].astype(np.float64)
        _, pts, margin = ref_cut(ta, tb)
        if margin < EPS:
            continue
        assert len(pts) == 2
        ends = sorted(pts, key=tuple)
        np.testing.assert_allclose(p0[s], ends[0], atol=2e-5)
        np.testing.assert_allclose(p1[s], ends[1], atol=2e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_pairs_tri2_match_a_brute_force_xy_overlap(device):
    shapely = pytest.importorskip("shapely")
    rng = np.random.default_rng(5)
    a, b = random_soup(rng, 50, 4.0), random_soup(rng, 40, 4.0)
    a[:, :, 2] = 0
    b[:, :, 2] = 0
    _, _, out, total = run_pairs(a, b, device, test="tri2")
    got = set(zip(host(out["pair_a"]).tolist(), host(out["pair_b"]).tolist()))
    polys_a = [shapely.Polygon(t[:, :2]) for t in a]
    polys_b = [shapely.Polygon(t[:, :2]) for t in b]
    checked = 0
    for i, j in itertools.product(range(50), range(40)):
        area = polys_a[i].intersection(polys_b[j]).area
        if 0 < area < 1e-6:
            continue
        assert ((i, j) in got) == (area > 0), (i, j, area)
        checked += 1
    assert checked > 1900 and total > 10


def _box_pair():
    return box_mesh((0, 0, 0), (2, 2, 2)).soup(), box_mesh((1, 0.5, 0.25), (3, 2.5, 1.75)).soup()


def _cuts_of(sa, sb, device):
    a, b = sa.reshape(-1, 3, 3), sb.reshape(-1, 3, 3)
    hits, start, out, total = run_pairs(a, b, device)
    cuts = run(
        "intersect_cuts",
        None,
        {
            "pair_a": out["pair_a"],
            "pair_b": out["pair_b"],
            "a": up(sa, "Vec3", device),
            "b": up(sb, "Vec3", device),
        },
        out["pair_a_count"],
    )
    return hits, start, cuts, total


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("live", [None, 5])
def test_unify_welds_equal_ends_into_closed_curves(device, live):
    sa, sb = _box_pair()
    _, _, cuts, total = _cuts_of(sa, sb, device)
    k = total if live is None else live
    out = run(
        "intersect_unify",
        None,
        {
            "p0": cuts["p0"],
            "p1": cuts["p1"],
            "table": up(np.full(128, -1, np.int32), "Int", device),
            "n": 2 * total,
        },
        domain(total, live, device),
    )
    p0, p1 = host(cuts["p0"]), host(cuts["p1"])
    ends = np.stack([p0[:k], p1[:k]], axis=1).reshape(-1, 3)
    unique = np.unique(ends, axis=0)
    assert word(out["fresh_count"]) == len(unique)
    id0, id1 = host(out["id0"]), host(out["id1"])
    assert (id0[k:] == -1).all() and (id1[k:] == -1).all()  # not written
    ids = np.stack([id0[:k], id1[:k]], axis=1).reshape(-1)
    # one id per distinct point, the same id for equal points
    for e, f in itertools.combinations(range(2 * k), 2):
        assert (ids[e] == ids[f]) == bool((ends[e] == ends[f]).all())
    table = host(out["table"])
    fresh = host(out["fresh"])
    assert sorted(fresh[: len(unique)].tolist()) == sorted(set(ids.tolist()))
    assert (fresh[len(unique) :] == -1).all()
    np.testing.assert_array_equal(ends[table[ids]], ends)  # each slot holds its point
    if live is None:
        # two boxes' surfaces cross in closed curves: every vertex has degree 2
        deg = np.bincount(np.unique(ids, return_inverse=True)[1])
        assert (deg == 2).all() and len(unique) == 16


def _tri_area(t):
    return 0.5 * np.linalg.norm(
        np.cross(t[..., 1, :] - t[..., 0, :], t[..., 2, :] - t[..., 0, :]), axis=-1
    )


def _strictly_inside(x, tri, tol=1e-6):
    e1, e2, d = tri[1] - tri[0], tri[2] - tri[0], x - tri[0]
    g = np.array([[e1 @ e1, e1 @ e2], [e1 @ e2, e2 @ e2]])
    if abs(np.linalg.det(g)) < 1e-18:
        return False
    u, v = np.linalg.solve(g, [d @ e1, d @ e2])
    n = np.cross(e1, e2)
    off = abs(d @ n) / np.linalg.norm(n)
    return bool(u > tol and v > tol and 1 - u - v > tol and off < 1e-6)


def _inside_box(p, lo, hi):
    return bool(((p > lo) & (p < hi)).all())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("live", [None, 7])
def test_retri_splits_along_the_cuts_and_classifies_by_the_other_box(device, live):
    sa, sb = _box_pair()
    hits, start, cuts, total = _cuts_of(sa, sb, device)
    room, nt = 64, 12
    k = nt if live is None else live
    split = run(
        "intersect_retri",
        {"STAGE": "split"},
        {
            "tris": up(sa, "Vec3", device),
            "start": up(start, "Int", device),
            "hits": up(hits, "Int", device),
            "p0": cuts["p0"],
            "p1": cuts["p1"],
            "n": 3 * room * nt,
        },
        domain(nt, live, device),
        {"room": room},
    )
    count = host(split["piece_count"])
    pieces = host(split["pieces"]).reshape(nt, room, 3, 3).astype(np.float64)
    assert (count[k:] == 0).all() and (pieces[k:] == 0).all()  # no triangle past the live
    tris = sa.reshape(-1, 3, 3).astype(np.float64)
    p0, p1 = host(cuts["p0"]), host(cuts["p1"])
    for t in range(k):
        assert 1 <= count[t] <= room
        assert count[t] > 1 or hits[t] == 0
        mine = pieces[t, : count[t]]
        # the pieces tile the triangle: same area, same orientation, no area lost
        np.testing.assert_allclose(_tri_area(mine).sum(), _tri_area(tris[t]), rtol=1e-5)
        n0 = np.cross(tris[t, 1] - tris[t, 0], tris[t, 2] - tris[t, 0])
        nn = np.cross(mine[:, 1] - mine[:, 0], mine[:, 2] - mine[:, 0])
        assert (nn @ n0 >= -1e-9).all()
        # no cut of t runs through a piece's interior: points along each cut lie in no
        # piece strictly (barycentric coordinates)
        for c in range(start[t], start[t] + hits[t]):
            for f in np.linspace(0.01, 0.99, 41):
                x = p0[c] + f * (p1[c] - p0[c])
                for piece in mine:
                    assert _strictly_inside(x, piece) is False, (t, c, f)
    words, uni = _grid(sb)
    bind = {
        "pieces": split["pieces"],
        "piece_count": split["piece_count"],
        "other": up(sb, "Vec3", device),
        "grid": up(words, "Int", device),
        "m": room * nt,
    }
    grid_uni = dict(uni)
    if live is not None:  # the other's live triangles: all 12
        bind["other_count"] = up(np.array([12], np.uint32), "UInt", device)
    cls = run(
        "intersect_retri",
        {"STAGE": "classify"},
        bind,
        domain(nt, live, device),
        {"room": room, **grid_uni},
    )
    inside = host(cls["inside"]).reshape(nt, room)
    lo, hi = np.array([1, 0.5, 0.25]), np.array([3, 2.5, 1.75])
    for t in range(nt):
        for j in range(room):
            if t >= k or j >= count[t]:
                assert inside[t, j] == -1
            else:
                c = pieces[t, j].mean(axis=0)
                assert inside[t, j] == int(_inside_box(c, lo, hi)), (t, j, c)


@pytest.mark.parametrize("device", DEVICES)
def test_retri_marks_a_triangle_whose_pieces_do_not_fit(device):
    sa, sb = _box_pair()
    hits, start, cuts, _ = _cuts_of(sa, sb, device)
    split = run(
        "intersect_retri",
        {"STAGE": "split"},
        {
            "tris": up(sa, "Vec3", device),
            "start": up(start, "Int", device),
            "hits": up(hits, "Int", device),
            "p0": cuts["p0"],
            "p1": cuts["p1"],
            "n": 3 * 12,
        },
        12,
        {"room": 1},
    )
    count = host(split["piece_count"])
    np.testing.assert_array_equal(count, np.where(hits > 0, -1, 1))


# -- faces in one plane --------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_a_face_touching_a_plane_along_an_edge_is_cut_along_that_edge(device):
    """The rim of a coplanar overlap: B's triangle stands on A's plane (y = 0), its edge
    from (1, 0, 0.5) to (1, 0, 3) crossing A's triangle; the cut is that edge within A.
    Coplanar pairs (every corner on the other plane) are not listed."""
    a = np.array([[[0, 0, 0], [0, 0, 2], [2, 0, 0]]], np.float32)  # in y = 0
    b = np.array(
        [
            [[1, 0, 0.5], [1, 0, 3], [1, 1, 0.5]],  # stands on y = 0 along x = 1
            [[0.5, 0, 0.2], [1.5, 0, 0.2], [0.5, 0, 1.0]],  # lies in y = 0: coplanar
            [[1, 1e-7, 0.5], [1, 1e-7, 3], [1, 1, 0.5]],  # a float32 rounding above
        ],
        np.float32,
    )
    hits, start, out, total = run_pairs(a, b, device)
    assert total == 2 and sorted(host(out["pair_b"])[:2].tolist()) == [0, 2]
    cuts = run(
        "intersect_cuts",
        None,
        {
            "pair_a": out["pair_a"],
            "pair_b": out["pair_b"],
            "a": up(a.reshape(-1, 3), "Vec3", device),
            "b": up(b.reshape(-1, 3), "Vec3", device),
        },
        out["pair_a_count"],
    )
    p0, p1 = host(cuts["p0"])[:2], host(cuts["p1"])[:2]
    for k, u in enumerate(host(out["pair_b"])[:2]):
        # x = 1 meets A's hypotenuse x + z = 2 at z = 1: the edge from z = 0.5 to 1 (B's
        # corner as it is, A's chord end on A)
        ends = sorted([tuple(p0[k].tolist()), tuple(p1[k].tolist())], key=lambda e: e[2])
        np.testing.assert_array_equal(ends[0], b[u, 0])
        np.testing.assert_allclose(ends[1], [1, 0, 1], atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_classify_flags_a_piece_on_the_other_surface_by_its_normal(device):
    """A piece lying on a face of the other box is 2 where its normal agrees with the
    face's (outward), 3 where it opposes; in the face's plane but off the face, and near
    the face but off its plane, the ray decides (0 or 1)."""
    sb = box_mesh((1, 0.5, 0.25), (3, 2.5, 1.75)).soup()
    pieces = np.array(
        [
            [[1.5, 1.0, 1.75], [2.0, 1.0, 1.75], [1.5, 1.5, 1.75]],  # on the top, up: same
            [[1.5, 1.0, 1.75], [1.5, 1.5, 1.75], [2.0, 1.0, 1.75]],  # down: opposite
            [[1.0, 1.0, 0.5], [1.0, 1.0, 1.0], [1.0, 2.0, 0.5]],  # on x = 1, facing -x
            [[1.0, 1.0, 0.5], [1.0, 2.0, 0.5], [1.0, 1.0, 1.0]],  # facing +x: opposite
            [[3.2, 1.0, 1.75], [3.6, 1.0, 1.75], [3.2, 1.5, 1.75]],  # top plane, off B
            [[1.5, 1.0, 1.7], [2.0, 1.0, 1.7], [1.5, 1.5, 1.7]],  # just under the top
            [[0.0, 1.0, 0.5], [0.0, 2.0, 0.5], [0.0, 1.0, 1.0]],  # x = 0, off B
        ],
        np.float32,
    )
    n = len(pieces)
    words, uni = _grid(sb)
    cls = run(
        "intersect_retri",
        {"STAGE": "classify"},
        {
            "pieces": up(pieces.reshape(-1, 3), "Vec3", device),
            "piece_count": up(np.ones(n, np.int32), "Int", device),
            "other": up(sb, "Vec3", device),
            "grid": up(words, "Int", device),
            "m": n,
        },
        n,
        {"room": 1, **uni},
    )
    assert host(cls["inside"]).tolist() == [2, 3, 2, 3, 0, 1, 0]


def test_pairs_and_cuts_decide_with_the_same_predicates():
    """intersect_pairs lists a pair exactly when intersect_cuts finds its cut a length:
    the functions they share are the same text (each kernel is one file of the library,
    with no include), and so are the grid helpers intersect_retri shares with pairs."""
    import ast
    from pathlib import Path

    root = Path(__file__).parents[2] / "kernels"

    def defs(name):
        tree = ast.parse((root / name / f"{name}.py").read_text())
        out = {}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                out[node.name] = ast.dump(node)
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                out[node.targets[0].id] = ast.dump(node)
        return out

    pairs, cuts, retri = defs("intersect_pairs"), defs("intersect_cuts"), defs("intersect_retri")
    shared = ["TOL", "snap", "orient3", "less3", "edge_cross", "plane_cut", "pick_lo"]
    shared += ["pick_hi", "tri_cut", "corner"]
    for f in shared:
        assert pairs[f] == cuts[f], f
    for f in ("cell_of", "orient2", "TOL"):
        assert pairs[f] == retri[f], f
