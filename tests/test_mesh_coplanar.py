"""mesh_intersect of solids sharing face planes: coplanar overlapping faces.

Volumes by hand (boxes stacked, side by side, flush, the same box; a turned prism against
shapely footprints), closure (every edge, split at the corners lying on it, used once
each way), the cut curves along the rims, hypothesis over integer-grid boxes (coplanar
faces, shared edges and corners are common there), the same turned and moved off the
axes, and the winding number of the result against point-in-box by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_mesh import DEVICES, A, _assert_closed, _box_volume, _surface_crossing_length, _winding

from procgen_nb.mesh import Mesh, box_mesh, mesh_intersect, mesh_volume

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


def _fan_box(lo, hi) -> Mesh:
    """A box whose faces are each four triangles around the face's centre (another
    triangulation than box_mesh's two per face), facing outward."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    tris = []
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        for side, sign in ((lo, -1), (hi, 1)):
            quad = []
            for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):  # counterclockwise about +k
                p = np.empty(3)
                p[k], p[i], p[j] = side[k], (lo, hi)[u][i], (lo, hi)[v][j]
                quad.append(p)
            if sign < 0:
                quad = quad[::-1]
            centre = np.mean(quad, axis=0)
            tris += [[centre, quad[n], quad[(n + 1) % 4]] for n in range(4)]
    return Mesh.from_soup(np.asarray(tris, np.float32).reshape(-1, 3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["same", "offset", "touching patch", "flush top"])
def test_coplanar_faces_triangulated_differently(device, case):
    """B's shared faces cut into four triangles around their centres, A's into two: a
    piece of one lies on several triangles of the other, or on a diagonal of it. Both
    orders of the arguments."""
    (blo, bhi), inter = COPLANAR[case]
    if case == "touching patch":
        blo, bhi, inter = (2, 0, 0), (3, 2, 2), 0.0  # a whole face shared
    a, b = box_mesh(*A), _fan_box(blo, bhi)
    va, vb = 8.0, _box_volume(blo, bhi)
    assert mesh_volume(b) == pytest.approx(vb)
    for x, y, vx, vy in ((a, b, va, vb), (b, a, vb, va)):
        want = {"intersection": inter, "union": vx + vy - inter, "difference": vx - inter}
        for mode, volume in want.items():
            m = mesh_intersect(x, y, mode, device=device)
            assert mesh_volume(m) == pytest.approx(volume, abs=1e-5), mode
            _closed_edges(m)


@pytest.mark.parametrize("device", DEVICES)
def test_a_boolean_of_a_booleans_output_sharing_its_planes(device):
    """An L (the union of two boxes sharing planes: a soup with T-junctions) against a box
    flush with its z planes over its inner corner. By hand: the footprints overlap in
    [0.5, 1.5] x [0.5, 1] and [0.5, 1] x [1, 1.5], 0.75, times the height 1."""
    ell = mesh_intersect(
        box_mesh((0, 0, 0), (2, 1, 1)), box_mesh((0, 0, 0), (1, 2, 1)), "union", device=device
    )
    assert mesh_volume(ell) == pytest.approx(3.0)
    c = box_mesh((0.5, 0.5, 0), (1.5, 1.5, 1))
    for x, y, want in (
        (ell, c, {"intersection": 0.75, "union": 3.25, "difference": 2.25}),
        (c, ell, {"intersection": 0.75, "union": 3.25, "difference": 0.25}),
    ):
        for mode, volume in want.items():
            m = mesh_intersect(x, y, mode, device=device)
            assert mesh_volume(m) == pytest.approx(volume, abs=1e-6), mode
            _closed_edges(m)
