"""mesh_intersect booleans against volumes by hand, cut curves, and road overlap vs shapely."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb.device import available_devices
from procgen_nb.errors import CapacityError, ParamsError, UploadError
from procgen_nb.mesh import (
    MODES,
    Mesh,
    box_mesh,
    mesh_intersect,
    mesh_volume,
    road_mesh,
    road_overlap,
    road_overlap_batch,
    sphere_mesh,
)

DEVICES = ["cpu"] + (["cuda:0"] if "cuda:0" in available_devices() else [])

A = ((0, 0, 0), (2, 2, 2))
# B's box, and the volume of its overlap with A, by hand
CASES = {
    "slab": (((1, 0.5, 0.25), (3, 2.5, 1.75)), 1 * 1.5 * 1.5),
    "corner": (((1.5, 1.25, 1.1), (3, 2.75, 2.6)), 0.5 * 0.75 * 0.9),
    "through": (((-1, 0.5, 0.5), (3, 1.5, 1.5)), 2 * 1 * 1),
    "inside": (((0.5, 0.4, 0.3), (1.5, 1.3, 1.7)), 1 * 0.9 * 1.4),
    "apart": (((3, 3, 3), (4, 5, 4)), 0.0),
}


def _box_volume(lo, hi):
    return float(np.prod(np.subtract(hi, lo)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_booleans_of_two_boxes_hold_the_volume_by_hand(device, case):
    (blo, bhi), inter = CASES[case]
    a, b = box_mesh(*A), box_mesh(blo, bhi)
    va, vb = 8.0, _box_volume(blo, bhi)
    want = {"intersection": inter, "union": va + vb - inter, "difference": va - inter}
    for mode, volume in want.items():
        m = mesh_intersect(a, b, mode, device=device)
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-4), mode
        _assert_closed(m)


def _assert_closed(m: Mesh):
    """A closed surface has zero vector area (the pieces share no vertex ids to count
    edges by)."""
    c = m.soup().reshape(-1, 3, 3).astype(np.float64)
    area = 0.5 * np.cross(c[:, 1] - c[:, 0], c[:, 2] - c[:, 0]).sum(axis=0)
    np.testing.assert_allclose(area, 0, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_booleans_of_two_rotated_cubes_hold_their_volume_by_monte_carlo(device):
    rng = np.random.default_rng(3)
    theta = 0.6
    rot = np.array(
        [[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]]
    )
    b = box_mesh((-0.8, -0.8, -0.7), (0.8, 0.8, 0.9))
    b = Mesh((b.vertices @ rot.T + [1.5, 1.2, 1.0]).astype(np.float32), b.faces)
    a = box_mesh(*A)
    # reference: Monte Carlo over A's box with the point-in-rotated-box test by hand
    p = rng.uniform(0, 2, size=(400_000, 3))
    local = (p - [1.5, 1.2, 1.0]) @ rot
    inb = (np.abs(local[:, :2]) < 0.8).all(axis=1) & (local[:, 2] > -0.7) & (local[:, 2] < 0.9)
    inter = 8.0 * inb.mean()
    got = mesh_volume(mesh_intersect(a, b, "intersection", device=device))
    assert got == pytest.approx(inter, abs=0.02)
    vb = 1.6 * 1.6 * 1.6
    assert mesh_volume(mesh_intersect(a, b, "union", device=device)) == pytest.approx(
        8 + vb - got, abs=1e-3
    )


@pytest.mark.parametrize("device", DEVICES)
def test_cut_curves_of_two_boxes_by_hand(device):
    # two boxes' surfaces meet on the edges of their overlap box that join a face of
    # one box to a face of the other (by hand, _surface_crossing_length)
    a, b = box_mesh(*A), box_mesh(*CASES["slab"][0])
    r = mesh_intersect(a, b, "cut", device=device)
    lo_a, hi_a = np.array(A[0]), np.array(A[1])
    lo_b, hi_b = np.array(CASES["slab"][0][0]), np.array(CASES["slab"][0][1])

    def on_box(p, lo, hi):
        inside = ((p >= lo - 1e-5) & (p <= hi + 1e-5)).all()
        face = (np.isclose(p, lo, atol=1e-5) | np.isclose(p, hi, atol=1e-5)).any()
        return inside and face

    assert len(r.vertices) > 0
    for p in r.vertices:
        assert on_box(p, lo_a, hi_a) and on_box(p, lo_b, hi_b), p
    deg = np.bincount(r.edges.reshape(-1), minlength=len(r.vertices))
    assert (deg == 2).all()  # closed curves
    seg = np.linalg.norm(r.vertices[r.edges[:, 0]] - r.vertices[r.edges[:, 1]], axis=1)
    assert seg.sum() == pytest.approx(_surface_crossing_length(lo_a, hi_a, lo_b, hi_b), rel=1e-6)
    assert seg.sum() == pytest.approx(8.0, rel=1e-6)  # 3 x 1.5 on x = 2, 1.5 + 1 + 1 on y = 2


def _surface_crossing_length(lo_a, hi_a, lo_b, hi_b):
    """The length of the curve where two boxes' surfaces meet: the edges of the overlap
    box where a face of one box meets a face of the other."""
    lo, hi = np.maximum(lo_a, lo_b), np.minimum(hi_a, hi_b)
    total = 0.0
    # the edges of the overlap box: on A's surface and B's surface exactly when each of
    # the two faces meeting there is a face of a different box
    for axis in range(3):
        o1, o2 = [k for k in range(3) if k != axis]
        for s1, s2 in itertools.product((0, 1), repeat=2):
            v1 = (lo, hi)[s1][o1]
            v2 = (lo, hi)[s2][o2]

            def owners(k, v, s):
                own = set()
                if np.isclose(v, (lo_a, hi_a)[s][k]):
                    own.add("a")
                if np.isclose(v, (lo_b, hi_b)[s][k]):
                    own.add("b")
                return own

            w1, w2 = owners(o1, v1, s1), owners(o2, v2, s2)
            if ("a" in w1 and "b" in w2) or ("b" in w1 and "a" in w2):
                total += hi[axis] - lo[axis]
    return total


def test_mesh_intersect_refuses_bad_input():
    a = box_mesh(*A)
    with pytest.raises(ParamsError, match="mode: expected one of"):
        mesh_intersect(a, a, "xor")
    with pytest.raises(ParamsError, match="room: expected an integer >= 1"):
        mesh_intersect(a, a, "union", room=0)
    with pytest.raises(UploadError, match="mesh_intersect b: expected a Mesh or"):
        mesh_intersect(a, np.zeros((4, 3)), "cut")
    with pytest.raises(UploadError, match="finite"):
        mesh_intersect(a, np.full((3, 3), np.nan), "cut")
    b = box_mesh(*CASES["slab"][0])
    with pytest.raises(CapacityError, match=r"room: expected the pieces .* \(max_room 2\)"):
        mesh_intersect(a, b, "union", room=2, max_room=2)
    # with room to grow, the same split runs again with twice the room until it fits
    assert mesh_volume(mesh_intersect(a, b, "union", room=2)) == pytest.approx(11.75, abs=1e-4)


# -- roads ---------------------------------------------------------------------------------
def _course(rng, n=60, kind="loop", shift=(0.0, 0.0)):
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    if kind == "jagged":
        r = 30 + rng.normal(0, 3, size=n)
        xy = np.stack([np.cos(t) * r, np.sin(t) * r], axis=1)
    elif kind == "eight":
        xy = np.stack([np.sin(t) * 40, np.sin(t) * np.cos(t) * 30], axis=1)
    else:
        r = 30 + 4 * np.sin(3 * t + rng.uniform(0, 2 * np.pi))
        xy = np.stack([np.cos(t) * r, np.sin(t) * r], axis=1)
    return xy + shift


def _ref_pairs(xy, width, other=None, near=1):
    """Triangle pairs whose xy polygons overlap with an area (shapely), and the pairs
    too close to call (an overlap area below 1e-6)."""
    shapely = pytest.importorskip("shapely")
    ta = road_mesh(xy, width).soup().reshape(-1, 3, 3)
    tb = ta if other is None else road_mesh(other, width).soup().reshape(-1, 3, 3)
    pa = [shapely.Polygon(t[:, :2].astype(np.float64)) for t in ta]
    pb = [shapely.Polygon(t[:, :2].astype(np.float64)) for t in tb]
    tree = shapely.STRtree(pb)
    nq = len(ta) // 2
    want, unsure = set(), set()
    for i, poly in enumerate(pa):
        for j in tree.query(poly):
            j = int(j)
            if other is None:
                d = abs(i // 2 - j // 2) % nq
                if j <= i or min(d, nq - d) <= near:
                    continue
            area = poly.intersection(pb[j]).area
            if area > 1e-6:
                want.add((i, j))
            elif area > 0 or poly.touches(pb[j]):
                unsure.add((i, j))
    return want, unsure


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["loop", "eight", "jagged"])
def test_road_overlap_with_itself_matches_shapely(device, kind):
    rng = np.random.default_rng(11)
    xy = _course(rng, kind=kind)
    got = road_overlap(xy, 6.0, device=device)
    want, unsure = _ref_pairs(xy, 6.0)
    have = {tuple(p) for p in got.pairs.tolist()}
    assert have - unsure == want
    assert got.overlaps == bool(want)
    assert got.overlaps == (kind != "loop")  # the jagged one folds over non-adjacent quads


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shift", [(0.0, 0.0), (45.0, 10.0), (80.0, 0.0)])
def test_road_overlap_with_another_course_matches_shapely_ribbons(device, shift):
    shapely = pytest.importorskip("shapely")
    rng = np.random.default_rng(4)
    xy, other = _course(rng), _course(rng, shift=shift)
    got = road_overlap(xy, 6.0, other=other, device=device)
    want, unsure = _ref_pairs(xy, 6.0, other)
    assert {tuple(p) for p in got.pairs.tolist()} - unsure == want
    # the whole ribbons: shapely's union of each road's quads, intersected
    ribbons = []
    for c in (xy, other):
        t = road_mesh(c, 6.0).soup().reshape(-1, 3, 3)[:, :, :2].astype(np.float64)
        ribbons.append(shapely.union_all([shapely.Polygon(q) for q in t]))
    overlap = ribbons[0].intersection(ribbons[1]).area
    assert got.overlaps == (overlap > 1e-6)
    assert got.overlaps == (shift != (80.0, 0.0))


def test_road_mesh_is_the_ribbon_at_width():
    xy = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float64)
    m = road_mesh(xy, 2.0)
    assert m.faces.shape == (8, 3) and m.vertices.shape == (8, 3)
    # at a corner of a square the ribbon's edge points lie width/2 from the centerline
    # along the bisector's normal
    d = np.linalg.norm(m.vertices[0::2, :2] - m.vertices[1::2, :2], axis=1)
    np.testing.assert_allclose(d, 2.0, rtol=1e-6)
    with pytest.raises(UploadError, match="road_mesh xy"):
        road_mesh(np.zeros((2, 2)), 1.0)
    with pytest.raises(ParamsError, match="road_mesh width"):
        road_mesh(xy, -1.0)


def _winding(points, soup):
    """The generalized winding number of each point (NumPy, float64)."""
    t = soup.reshape(-1, 3, 3).astype(np.float64)
    w = np.zeros(len(points))
    for chunk in np.array_split(np.arange(len(points)), max(1, len(points) // 2000)):
        a, b, c = (t[None, :, k] - points[chunk, None] for k in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("pti,pti->pt", a, np.cross(b, c))
        den = la * lb * lc + (a * b).sum(-1) * lc + (a * c).sum(-1) * lb + (b * c).sum(-1) * la
        w[chunk] = 2 * np.arctan2(num, den).sum(axis=1) / (4 * np.pi)
    return w


@pytest.mark.parametrize("device", DEVICES)
def test_booleans_of_two_spheres_against_monte_carlo_in_the_input_meshes(device):
    a = sphere_mesh((0, 0, 0), 1.0, 10)
    b = sphere_mesh((0.8, 0.3, 0.2), 0.9, 10)
    p = np.random.default_rng(2).uniform(-1.0, 1.0, size=(20_000, 3))
    ina = _winding(p, a.soup()) > 0.5
    inb = _winding(p, b.soup()) > 0.5
    inter = 8.0 * (ina & inb).mean()  # both inside: within A's bounding cube
    got = {m: mesh_volume(mesh_intersect(a, b, m, device=device)) for m in MODES[1:]}
    se = 8.0 * np.sqrt((ina & inb).mean() / len(p))
    assert got["intersection"] == pytest.approx(inter, abs=4 * se)
    va, vb = mesh_volume(a), mesh_volume(b)
    assert got["union"] == pytest.approx(va + vb - got["intersection"], abs=1e-4)
    assert got["difference"] == pytest.approx(va - got["intersection"], abs=1e-4)


def test_the_benchmark_runs_in_smoke_mode(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "mesh_intersect.py"
    spec = importlib.util.spec_from_file_location("bench_mesh_intersect", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--smoke"])
    out = capsys.readouterr().out
    assert "pairs agree" in out and "road overlap" in out
    assert rows["pairs agree with NumPy"] and rows["roads agree with shapely"]
    assert rows["batch agrees with shapely"] and rows["batch pairs agree with shapely"]
    assert rows["coplanar volumes agree"] and "integer grid" in out


# -- coplanar faces ------------------------------------------------------------------------
# boxes sharing face planes with A = (0, 0, 0)-(2, 2, 2): B's box, and the volume of the
# overlap, by hand
COPLANAR = {
    # B stacked on A's x = 2 face, the face planes y = 0, 2 shared: a 1 x 2 x 1 slab
    "offset": (((1, 0, 0.5), (3, 2, 1.5)), 1 * 2 * 1),
    # B inside A, flush with its x = 2, y = 0, 2, z = 0, 2 faces
    "flush inside": (((1, 0, 0), (2, 2, 2)), 1 * 2 * 2),
    # B's top flush with A's top, a 1 x 1 x 1 block hanging inside
    "flush top": (((0.5, 0.5, 1), (1.5, 1.5, 2)), 1.0),
    # B touches A's x = 2 face over a 1 x 1 patch from outside: no overlap
    "touching patch": (((2, 1, 1), (3, 3, 3)), 0.0),
    # the z planes shared, B sticking out over x and y: a 1 x 1 x 2 column
    "column": (((1, 1, 0), (3, 3, 2)), 1 * 1 * 2),
    # the same box
    "same": (((0, 0, 0), (2, 2, 2)), 8.0),
    # a box wider than A in x, flush in y and z: A's middle 1 x 2 x 2
    "through flush": (((0.5, 0, 0), (1.5, 2, 2)), 1 * 2 * 2),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", sorted(COPLANAR))
def test_cut_curves_of_boxes_sharing_face_planes_by_hand(device, case):
    """Where faces lie in one plane the cut curves are the rim of their overlap: each
    segment once, on both boxes, as long as the edges of the overlap box where a face of
    one box meets a face of the other."""
    (blo, bhi), _ = COPLANAR[case]
    r = mesh_intersect(box_mesh(*A), box_mesh(blo, bhi), "cut", device=device)
    lo_a, hi_a, lo_b, hi_b = (np.array(x, np.float64) for x in (*A, blo, bhi))
    assert len(np.unique(np.sort(r.edges, axis=1), axis=0)) == len(r.edges)
    for p in r.vertices:
        for lo, hi in ((lo_a, hi_a), (lo_b, hi_b)):
            assert ((p >= lo) & (p <= hi)).all() and ((p == lo) | (p == hi)).any(), p
    seg = np.linalg.norm(r.vertices[r.edges[:, 0]] - r.vertices[r.edges[:, 1]], axis=1)
    want = _surface_crossing_length(lo_a, hi_a, lo_b, hi_b)
    if case == "touching patch":
        want = 4.0  # the overlap box is flat: the rim of the 1 x 1 patch
    assert seg.sum() == pytest.approx(want, abs=1e-6)


def _closed_edges(m: Mesh, twice: bool = True, weld: float = 0.0):
    """Every edge of the soup, split at the vertices lying on it (the pieces of one
    triangle meet the pieces of its neighbour at T-junctions), is used as often in one
    direction as in the other; with ``twice``, exactly once each way (a closed,
    consistently oriented, manifold surface). Corners closer than ``weld`` times the
    scale are one vertex (0: equal bits only)."""
    c = m.soup().reshape(-1, 3, 3).astype(np.float64)
    if len(c) == 0:
        return
    verts, inv = np.unique(c.reshape(-1, 3), axis=0, return_inverse=True)
    scale = max(1.0, float(np.abs(verts).max()))
    if weld > 0:  # each vertex joins the first one within reach
        d = np.linalg.norm(verts[:, None] - verts[None], axis=-1)
        first = np.argmax(d <= weld * scale, axis=1)
        keep, first = np.unique(first, return_inverse=True)
        verts, inv = verts[keep], first[inv]
    ids = inv.reshape(-1, 3)
    count: dict[tuple[int, int], int] = {}
    for tri in ids:
        for i in range(3):
            u, v = int(tri[i]), int(tri[(i + 1) % 3])
            if u == v:
                continue
            p, e = verts[u], verts[v] - verts[u]
            t = (verts - p) @ e / (e @ e)
            off = np.linalg.norm(verts - p - t[:, None] * e, axis=1)
            on = np.flatnonzero((off < 1e-6 * scale) & (t > 1e-9) & (t < 1 - 1e-9))
            chain = [u, *on[np.argsort(t[on])].tolist(), v]
            for x, y in zip(chain, chain[1:]):
                count[(x, y)] = count.get((x, y), 0) + 1
    for (x, y), k in count.items():
        assert count.get((y, x), 0) == k, (verts[x], verts[y], k)
        if twice:
            assert k == 1, (verts[x], verts[y], k)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", sorted(COPLANAR))
def test_booleans_of_boxes_sharing_face_planes_hold_the_volume_by_hand(device, case):
    """Coplanar overlapping faces: a piece of A lying on B's surface is kept once where
    the normals agree (union, intersection) or oppose (difference), never both."""
    (blo, bhi), inter = COPLANAR[case]
    a, b = box_mesh(*A), box_mesh(blo, bhi)
    va, vb = 8.0, _box_volume(blo, bhi)
    want = {"intersection": inter, "union": va + vb - inter, "difference": va - inter}
    for mode, volume in want.items():
        m = mesh_intersect(a, b, mode, device=device)
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-5), mode
        _assert_closed(m)
        _closed_edges(m)


@pytest.mark.parametrize("device", DEVICES)
def test_two_unit_boxes_sharing_a_face(device):
    """Side by side: the shared face (normals opposed) goes in a union, the intersection
    is empty (they only touch), the difference is A whole."""
    a, b = box_mesh((0, 0, 0), (1, 1, 1)), box_mesh((1, 0, 0), (2, 1, 1))
    union = mesh_intersect(a, b, "union", device=device)
    assert mesh_volume(union) == pytest.approx(2.0, abs=1e-6)
    _closed_edges(union)
    # no piece lies on x = 1 any more: the two faces there cancelled
    c = union.soup().reshape(-1, 3, 3)
    assert not (c[:, :, 0] == 1).all(axis=1).any()
    inter = mesh_intersect(a, b, "intersection", device=device)
    assert len(inter.faces) == 0 and mesh_volume(inter) == 0.0
    diff = mesh_intersect(a, b, "difference", device=device)
    assert mesh_volume(diff) == pytest.approx(1.0, abs=1e-6)
    _closed_edges(diff)
    # stacked in z the same holds
    top = box_mesh((0, 0, 1), (1, 1, 2))
    assert mesh_volume(mesh_intersect(a, top, "union", device=device)) == pytest.approx(2.0)


@pytest.mark.parametrize("device", DEVICES)
def test_coplanar_faces_off_the_axes(device):
    """The same boxes turned by one rotation: the shared planes no longer hold their
    float32 corners exactly (a tolerance of the scale decides coplanarity)."""
    th = 0.5
    rot = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
    rot = rot @ np.array([[1, 0, 0], [0, np.cos(0.3), -np.sin(0.3)], [0, np.sin(0.3), np.cos(0.3)]])

    def turned(m):
        return Mesh((m.vertices.astype(np.float64) @ rot.T).astype(np.float32), m.faces)

    a, b = turned(box_mesh(*A)), turned(box_mesh(*COPLANAR["offset"][0]))
    for mode, volume in (("intersection", 2.0), ("union", 10.0), ("difference", 6.0)):
        m = mesh_intersect(a, b, mode, device=device)
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-4), mode
        _assert_closed(m)
        _closed_edges(m, weld=1e-6)  # float32 corners off the axes: closed to a rounding


def _zbox(cx, cy, r, th, z0, z1) -> Mesh:
    """A square prism of half-side r turned by th about z, centred at (cx, cy), z0 to z1."""
    b = box_mesh((-r, -r, z0), (r, r, z1))
    c, s = np.cos(th), np.sin(th)
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return Mesh((b.vertices.astype(np.float64) @ turn.T + [cx, cy, 0]).astype(np.float32), b.faces)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    "prism",
    [
        (2, 1, 0.75, np.pi / 4, 0, 2),  # both of A's z planes, a diagonal rim on each
        (2, 1, 0.75, 0.3, 0.5, 2),  # A's top plane
        (1, 1, 0.5, 0.7, 2, 3),  # standing on A's top, inside its rim: touching only
        (2, 2, 0.8, np.pi / 4, -1, 2),  # over A's corner, flush with its top
    ],
)
def test_booleans_of_a_box_and_a_turned_prism_sharing_z_planes_against_shapely(device, prism):
    """The rim of the coplanar overlap runs off the axes inside the shared face: the
    volumes are the overlap of the two footprints (shapely) times the common height."""
    shapely = pytest.importorskip("shapely")
    a, b = box_mesh(*A), _zbox(*prism)
    z0, z1 = prism[4:]
    foot_a = shapely.Polygon([(0, 0), (2, 0), (2, 2), (0, 2)])
    foot_b = shapely.Polygon(b.vertices[[0, 1, 3, 2], :2].astype(np.float64))
    inter = foot_a.intersection(foot_b).area * max(0.0, min(2, z1) - max(0, z0))
    va, vb = 8.0, foot_b.area * (z1 - z0)
    for mode, volume in (
        ("intersection", inter),
        ("union", va + vb - inter),
        ("difference", va - inter),
    ):
        m = mesh_intersect(a, b, mode, device=device)
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-5), mode
        _closed_edges(m, weld=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ulps", [-2, -1, 1, 2])
def test_face_planes_a_float32_rounding_apart_are_one_plane(device, ulps):
    """B's planes y = 0 and y = 2 (or x = 2, side by side) moved by a few float32 ulps:
    within the tolerance, they are A's planes and the volumes stay the ones by hand."""
    e = np.float32(ulps * 6e-8)
    a = box_mesh(*A)
    for (lo, hi), inter, vb in (
        (((1, e, 0.5), (3, np.float32(2) - e, 1.5)), 2.0, 4.0),
        (((np.float32(2) + e, 0, 0), (3, 2, 2)), 0.0, 4.0),
    ):
        b = box_mesh(lo, hi)
        for mode, volume in (("intersection", inter), ("union", 8 + vb - inter)):
            m = mesh_intersect(a, b, mode, device=device)
            assert mesh_volume(m) == pytest.approx(volume, abs=1e-5), (mode, lo)
            _closed_edges(m, weld=1e-6)


def _box_overlap(lo_a, hi_a, lo_b, hi_b):
    return float(np.prod(np.clip(np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b), 0, None)))


_GRID_BOX = st.tuples(*[st.tuples(st.integers(0, 3), st.integers(1, 3)) for _ in range(3)])


def _box_of(spec):
    lo = np.array([s for s, _ in spec], np.float64)
    return lo, lo + [w for _, w in spec]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(_GRID_BOX, _GRID_BOX)
def test_booleans_of_integer_grid_boxes_hold_the_volume_by_hand(sa, sb):
    """Boxes on the integer grid share face planes, edges and corners often."""
    (lo_a, hi_a), (lo_b, hi_b) = _box_of(sa), _box_of(sb)
    a, b = box_mesh(lo_a, hi_a), box_mesh(lo_b, hi_b)
    inter = _box_overlap(lo_a, hi_a, lo_b, hi_b)
    va, vb = _box_volume(lo_a, hi_a), _box_volume(lo_b, hi_b)
    want = {"intersection": inter, "union": va + vb - inter, "difference": va - inter}
    for mode, volume in want.items():
        m = mesh_intersect(a, b, mode, device="cpu")
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-5), mode
        _closed_edges(m, twice=False)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(_GRID_BOX, _GRID_BOX, st.integers(0, 2**31 - 1))
def test_booleans_of_grid_boxes_turned_and_moved_hold_the_volume(sa, sb, seed):
    """The integer-grid pairs under one random rotation and shift: the shared planes hold
    no float32 corner exactly any more."""
    rng = np.random.default_rng(seed)
    q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    rot, shift = q * np.sign(np.linalg.det(q)), rng.uniform(-5, 5, 3)
    (lo_a, hi_a), (lo_b, hi_b) = _box_of(sa), _box_of(sb)

    def moved(m):
        return Mesh((m.vertices.astype(np.float64) @ rot.T + shift).astype(np.float32), m.faces)

    a, b = moved(box_mesh(lo_a, hi_a)), moved(box_mesh(lo_b, hi_b))
    inter = _box_overlap(lo_a, hi_a, lo_b, hi_b)
    va, vb = _box_volume(lo_a, hi_a), _box_volume(lo_b, hi_b)
    want = {"intersection": inter, "union": va + vb - inter, "difference": va - inter}
    for mode, volume in want.items():
        m = mesh_intersect(a, b, mode, device="cpu")
        assert mesh_volume(m) == pytest.approx(volume, abs=1e-4), mode
        _closed_edges(m, twice=False, weld=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_booleans_of_grid_boxes_against_the_winding_number_of_the_result(seed):
    """Which points the result holds, against point-in-box by hand: the generalized
    winding number of the output at points off every grid plane."""
    rng = np.random.default_rng(seed)
    lo_a = rng.integers(0, 2, 3).astype(np.float64)
    hi_a = lo_a + rng.integers(1, 3, 3)
    lo_b = lo_a + rng.integers(-1, 2, 3)  # planes in common, most draws
    hi_b = np.maximum(lo_b + 1, hi_a + rng.integers(-1, 2, 3))
    a, b = box_mesh(lo_a, hi_a), box_mesh(lo_b, hi_b)
    p = rng.integers(-2, 6, size=(3000, 3)) + rng.uniform(0.05, 0.95, size=(3000, 3))
    ina = ((p > lo_a) & (p < hi_a)).all(axis=1)
    inb = ((p > lo_b) & (p < hi_b)).all(axis=1)
    for mode, want in (
        ("union", ina | inb),
        ("intersection", ina & inb),
        ("difference", ina & ~inb),
    ):
        m = mesh_intersect(a, b, mode, device="cpu")
        w = _winding(p, m.soup()) if len(m.faces) else np.zeros(len(p))
        np.testing.assert_array_equal(w > 0.5, want, err_msg=mode)
        assert np.abs(w - np.round(w)).max() < 1e-3  # whole windings: a closed surface


def test_mesh_intersect_is_a_node_whose_mode_a_cook_changes():
    import procgen_nb as pg

    g = pg.Graph("meshes")
    g.add("a", lambda: box_mesh(*A))
    g.add("b", lambda: box_mesh(*CASES["slab"][0]))
    g.add("x", mesh_intersect, a="a", b="b")
    (blo, bhi), inter = CASES["slab"]
    for mode, want in (
        ("intersection", inter),
        ("union", 8 + 6 - inter),
        ("difference", 8 - inter),
    ):
        out = g.cook({"x.mode": mode}).outputs["x"]
        assert mesh_volume(out) == pytest.approx(want, abs=1e-4)
    with pytest.raises(ParamsError):
        g.cook({"x.mode": "xor"})


@pytest.mark.parametrize("device", DEVICES)
def test_road_overlap_batch_matches_shapely_per_course(device):
    rng = np.random.default_rng(8)
    kinds = ["loop", "eight", "jagged", "loop", "eight", "loop"]
    xy = np.stack([_course(rng, 40, kind=k) for k in kinds])
    got = road_overlap_batch(xy, 6.0, device=device)
    want = [bool(_ref_pairs(c, 6.0)[0]) for c in xy]
    assert got.tolist() == want
    assert want[:2] == [False, True] and not any(w for w, k in zip(want, kinds) if k == "loop")
    with pytest.raises(UploadError, match="road_overlap_batch xy"):
        road_overlap_batch(np.zeros((2, 2, 2)), 6.0)


def test_mesh_intersect_gives_the_same_bytes_run_after_run_on_the_cpu():
    a = sphere_mesh((0, 0, 0), 1.0, 8)
    b = sphere_mesh((0.8, 0.3, 0.2), 0.9, 8)
    for mode in MODES:
        r1, r2 = mesh_intersect(a, b, mode, device="cpu"), mesh_intersect(a, b, mode, device="cpu")
        if mode == "cut":
            assert r1.vertices.tobytes() == r2.vertices.tobytes()
            assert r1.edges.tobytes() == r2.edges.tobytes()
        else:
            assert r1.soup().tobytes() == r2.soup().tobytes()


@pytest.mark.parametrize("device", DEVICES)
def test_road_overlap_batch_against_other_courses_matches_shapely(device):
    rng = np.random.default_rng(9)
    shifts = [(0.0, 0.0), (80.0, 0.0), (45.0, 10.0), (0.0, 75.0), (30.0, -30.0)]
    xy = np.stack([_course(rng, 40) for _ in shifts])
    other = np.stack([_course(rng, 48, shift=s) for s in shifts])
    got = road_overlap_batch(xy, 6.0, other=other, device=device)
    want = [bool(_ref_pairs(a, 6.0, b)[0]) for a, b in zip(xy, other)]
    assert got.tolist() == want
    assert True in want and False in want
    with pytest.raises(UploadError, match="road_overlap_batch other: expected 5 centerlines"):
        road_overlap_batch(xy, 6.0, other=other[:2])


@pytest.mark.parametrize("device", DEVICES)
def test_a_box_cut_by_a_fine_sphere_grows_its_room_and_holds_the_volume(device):
    # each face of the box is crossed by a long cut curve: more pieces than the room at first
    a = box_mesh((-0.5, -0.5, -0.5), (0.5, 0.5, 0.5))
    b = sphere_mesh((0.2, 0.1, -0.1), 0.6, 8)
    got = mesh_volume(mesh_intersect(a, b, "intersection", room=8, device=device))
    p = np.random.default_rng(6).uniform(-0.5, 0.5, size=(40_000, 3))  # inside the box
    inb = _winding(p, b.soup()) > 0.5
    se = np.sqrt(inb.mean() * (1 - inb.mean()) / len(p))
    assert got == pytest.approx(inb.mean(), abs=4 * se)
