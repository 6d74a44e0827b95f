"""mesh_intersect booleans against volumes by hand, cut curves, and road overlap vs shapely.

Solids sharing face planes (coplanar faces): tests/test_mesh_coplanar.py.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

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
    with pytest.raises(ParamsError, match=r"room: expected an integer in \[1, 4096\]"):
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


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"mode": ["cut"]}, ParamsError, "mesh_intersect mode: expected one of ['cut', "),
        ({"mode": np.array(["cut", "union"])}, ParamsError, "mesh_intersect mode: expected one"),
        ({"mode": "Union"}, ParamsError, "got 'Union'"),
        (
            {"room": 1.5},
            ParamsError,
            "mesh_intersect room: expected an integer in [1, 4096], got 1.5",
        ),
        (
            {"max_room": "8"},
            ParamsError,
            "mesh_intersect max_room: expected an integer in [1, 65536], got '8'",
        ),
        (
            {"cell": float("nan")},
            ParamsError,
            "mesh_intersect cell: expected a finite number > 0, got nan",
        ),
        ({"cell": "1"}, ParamsError, "mesh_intersect cell: expected a finite number > 0, got '1'"),
        (
            {"cell": -1.0},
            ParamsError,
            "mesh_intersect cell: expected a finite number > 0, got -1.0",
        ),
        (
            {"b": "abc"},
            UploadError,
            "mesh_intersect b: expected a Mesh or (3m, 3) triangle corners, got str",
        ),
        (
            {"b": [[0, 0], [1]]},
            UploadError,
            "mesh_intersect b: expected a Mesh or (3m, 3) triangle corners, got list",
        ),
        (
            {"b": np.full((3, 3), 1e300)},
            UploadError,
            "mesh_intersect b: expected corners finite in float32",
        ),
    ],
)
def test_mesh_intersect_names_each_bad_argument(kwargs, error, message):
    """Every bad argument is the package's error naming it, the value and what is accepted."""
    args = {"a": box_mesh(*A), "b": box_mesh(*A), "mode": "cut", **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        mesh_intersect(**args)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda xy: road_mesh(xy[0], "6"),
            "road_mesh width: expected a finite number > 0, got '6'",
        ),
        (
            lambda xy: road_overlap(xy[0], 6.0, near="1"),
            "road_overlap near: expected an integer >= 0",
        ),
        (
            lambda xy: road_overlap_batch(xy, float("inf")),
            "road_overlap_batch width: expected a finite",
        ),
        (
            lambda xy: road_overlap_batch(xy, 6.0, near=-1),
            "road_overlap_batch near: expected an integer",
        ),
        (
            lambda xy: road_overlap_batch("xy", 6.0),
            "road_overlap_batch xy: expected (E, N, 2) centerlines",
        ),
    ],
)
def test_road_functions_name_each_bad_argument(call, message):
    xy = np.stack([_course(np.random.default_rng(0), n=12)] * 2)
    with pytest.raises((ParamsError, UploadError), match=re.escape(message)):
        call(xy)


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


def test_road_overlap_batch_keeps_roads_apart_when_the_grid_widens_its_cells(device):
    """Roads of width 0.05 round a circle of radius 100 need far more than MAX_CELLS cells
    of their width: the grid's cells grow past the 4 cells between layers, which then share
    cells. A road never pairs with another layer's (their boxes share no z): the former
    kernel ignored z in TEST=tri2 and flagged road 0 through road 1 (the same circle
    started half way round), and road 0 against a far road as overlapping."""
    t = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    circle = np.stack([100 * np.cos(t), 100 * np.sin(t)], axis=1)
    xy = np.stack([circle, np.roll(circle, 32, axis=0)])
    for w in (6.0, 0.05, 0.01):
        assert road_overlap_batch(xy, w, device=device).tolist() == [False, False], w
        got = road_overlap_batch(xy, w, other=np.stack([circle + 1000, circle]), device=device)
        assert got.tolist() == [False, True], w
