"""The runtime benchmarks run in smoke mode and print their ratios (nothing timed is asserted)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_replay_benchmark_smoke(capsys):
    rows = load("replay").main(["--smoke"])
    out = capsys.readouterr().out
    assert "replay speedup vs launching again" in out and "[device word]" in out
    for kind, mode in (("uniform", "launches"), ("device word", "graph"), ("derived", "launches")):
        assert rows[f"[{kind}] readbacks per replayed cook"] == 0
        assert rows[f"[{kind}] plans per replayed cook"] == 0  # no plan: the values replay
        assert rows[f"[{kind}] recording replayed as"] == mode
    # a track generator's dynamic Params field moved inside a graph replays too
    assert rows["[params field] readbacks per replayed cook"] == 0
    assert rows["[params field] plans per replayed cook"] == 0
    # and two nodes of one generator: each call replays with its own value
    assert rows["[shared generator] readbacks per replayed cook"] == 0
    assert rows["[shared generator] plans per replayed cook"] == 0
    assert "[params field] replay speedup vs replan" in rows
    numbers = [v for v in rows.values() if isinstance(v, float)]
    assert all(math.isfinite(v) and v >= 0 for v in numbers)


# -- the references a user would write, against the brute forces they replaced ------------
sys.path.insert(0, str(BENCH))  # the benchmarks import their siblings by name


def _noisy_loops(seed, E=64, N=96, amp=0.25):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, N, endpoint=False)
    r = 1 + amp * np.cumsum(rng.normal(size=(E, N)), axis=1) / np.sqrt(N)
    return np.stack([np.cos(t) * r, np.sin(t) * r], -1)


@pytest.mark.parametrize("width", [0.05, 0.15, 0.4])
def test_cKDTree_clearance_gives_the_strtree_verdicts(width):
    ref = load("numpy_reference")
    from procgen_nb.track_gen.exec import salt

    seeds = ref.base_seeds(0, 0, 128)
    hulls = ref.numpy_hull(seeds, 96, salt, repair=None)  # the 0.1 hulls: some pinch
    loops = [ref.numpy_resample_loops(hulls, 96), _noisy_loops(1)]
    for xy in loops:
        kd, tree = ref.numpy_clearance_ok(xy, width), ref.shapely_clearance_ok(xy, width)
        assert kd.dtype == bool and (kd == tree).all()
        assert 0 < kd.sum() < len(kd) or width == 0.05  # both verdicts occur


def test_clearance_is_strict_and_counts_only_far_pairs():
    ref = load("numpy_reference")
    # a square of side 1, 64 points: opposite sides are 1 apart, far along the loop
    s = np.linspace(0, 1, 16, endpoint=False)
    sq = np.concatenate(
        [np.c_[s, 0 * s], np.c_[1 + 0 * s, s], np.c_[1 - s, 1 + 0 * s], np.c_[0 * s, 1 - s]]
    )[None]
    assert ref.numpy_clearance_ok(sq, 1.0)[0]  # exactly 1 apart: not closer than 1
    assert not ref.numpy_clearance_ok(sq, 1.0 + 1e-9)[0]
    assert ref.numpy_clearance_ok(sq, 0.0)[0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=14))
def test_shapely_hulls_are_the_gift_wrap(points):
    ref = load("numpy_reference")
    p = np.array(points, float)
    d = np.unique(p, axis=0)
    if len(d) < 3 or np.linalg.matrix_rank(d[1:] - d[0]) < 2:
        return  # a point or a line: no polygon
    p = np.unique(p, axis=0)  # the generators' sites are distinct
    counts = np.array([len(p), 3])
    pts = np.zeros((2, len(p), 2))
    pts[0], pts[1, :3] = p, [[0, 0], [1, 0], [0, 1]]
    got = ref.shapely_hulls(pts, counts)
    assert np.array_equal(got[0], ref.gift_wrap(p))
    assert np.array_equal(got[1], ref.gift_wrap(pts[1, :3]))


def _circles(E=6, N=80):
    """Circles of growing radius: no pair qualifies, the clearance is the cap ``L / pi``
    (the loops the former reference handed to its brute force)."""
    t = np.linspace(0, 2 * np.pi, N, endpoint=False)
    return np.stack([np.cos(t), np.sin(t)], -1)[None] * (1 + 0.5 * np.arange(E))[:, None, None]


def test_tree_clearance_is_the_brute_force():
    sw = load("sweep")
    loops = (_noisy_loops(2, E=24, N=80, amp=0.6), _noisy_loops(3, E=8, N=80, amp=0.0))
    for xy in (*loops, _circles(), np.concatenate([_circles(3), loops[0][:5]])):
        assert np.allclose(sw.tree_clearance(xy), sw.brute_clearance(xy), rtol=1e-12, atol=0)
    xy = _circles(
        4, 64
    )  # hand-worked: a regular 64-gon of radius R, its cap 64 * 2R sin(pi / 64) / pi
    R = 1 + 0.5 * np.arange(4)
    np.testing.assert_allclose(sw.tree_clearance(xy), 128 * R * np.sin(np.pi / 64) / np.pi)
    # a loop of length 0: clearance 0, as the brute force
    assert sw.tree_clearance(np.zeros((1, 8, 2)))[0] == 0 == sw.brute_clearance(np.zeros((1, 8, 2)))


def test_the_timed_clearance_reference_never_calls_the_brute_force(monkeypatch):
    sw = load("sweep")
    tree, brute = sw.tree_clearance, sw.brute_clearance
    inside = []

    def timed(xy):
        inside.append(True)
        try:
            return tree(xy)
        finally:
            inside.pop()

    def checked(xy):
        assert not inside, "the timed reference called the brute force"
        return brute(xy)

    monkeypatch.setattr(sw, "tree_clearance", timed)
    monkeypatch.setattr(sw, "brute_clearance", checked)
    for xy in (_circles(), _noisy_loops(4, E=16, N=64, amp=0.6)):
        assert np.allclose(timed(xy), brute(xy), rtol=1e-12, atol=0)
    rows = sw.main(["--smoke"])  # radius_jitter 0 among its grid points: circles
    assert rows["numpy agrees"] and rows["brute force agrees"]
    assert "radius doubled" in rows["reference"] and "brute" not in rows["reference"]


_coord = st.floats(-1, 1, allow_nan=False, width=32)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.tuples(_coord, _coord), max_size=12), min_size=1, max_size=6),
    st.floats(0, 0.6),
    st.floats(0, 1.2),
    st.booleans(),
)
def test_the_batch_repair_is_the_per_env_repair(polys, spacing, corner_radius, grid):
    """Every env at once (padded, counts) gives the per-env repair's bytes, counts and
    chains: merges at every position (the closing edge too), spikes, fewer than 3 points."""
    rep = load("numpy_repair")
    K = max(len(p) for p in polys) + 2  # padding past the longest
    c = np.full((len(polys), K, 2), 7.5)  # what lies past a count is never read
    for e, p in enumerate(polys):
        if p:
            c[e, : len(p)] = np.round(np.array(p) * 4) / 4 if grid else p
    n = np.array([len(p) for p in polys])
    got, gn = rep.round_corners_batch(c, n, spacing, corner_radius)
    for e in range(len(polys)):
        want = rep.round_corners(c[e, : n[e]], spacing, corner_radius)
        assert gn[e] == len(want)
        np.testing.assert_array_equal(got[e, : gn[e]], want)
    live = gn >= 1
    chains = rep.smooth_chain_batch(got[live], gn[live], 5, 0.8)
    for chain, e in zip(chains, np.flatnonzero(live), strict=True):
        np.testing.assert_array_equal(chain, rep.smooth_chain(got[e, : gn[e]], 5, 0.8))


def test_the_batch_repair_merges_and_moves_as_worked_by_hand():
    rep = load("numpy_repair")
    # env 0: B and C 0.11 apart, merged into (2.05, 0.025), the box moved back (x + 0.025);
    # env 1: the closing edge D-A 0.05 long, merged; env 2: two points, returned as they are
    c = np.zeros((3, 4, 2))
    c[0] = [(0.0, 0.0), (2.0, 0.0), (2.1, 0.05), (0.0, 2.0)]
    c[1] = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 0.05)]
    c[2, :2] = [(0.0, 0.0), (1.0, 0.0)]
    got, n = rep.round_corners_batch(c, np.array([4, 4, 2]), 0.15, 0.3)
    assert list(n) == [3, 3, 2]
    np.testing.assert_allclose(got[0, :3], [(0.025, 0.0), (2.075, 0.025), (0.025, 2.0)])
    # D and A merged into (0, 0.025), A deleted: B, C, D'; turns of 91, 135 and 135 degrees
    # (under the floor of 150); the box [0, 2] x [0, 2] unchanged: nothing moves
    np.testing.assert_allclose(got[1, :3], [(2.0, 0.0), (2.0, 2.0), (0.0, 0.025)])
    np.testing.assert_array_equal(got[2, :2], c[2, :2])


def test_tree_pairs_are_the_brute_force():
    mi = load("mesh_intersect")
    from procgen_nb.mesh import sphere_mesh

    a = sphere_mesh((0, 0, 0), 1.0, 8).soup()
    b = sphere_mesh((0.8, 0.3, 0.2), 0.9, 8).soup()
    want, w_unsure = mi.np_pairs(a, b)
    got, g_unsure = mi.tree_pairs(a, b)
    assert want and got - w_unsure == want - g_unsure


# -- the tables, made by report.py; the peers, by anchors.py --------------------------------
@pytest.fixture(scope="module")
def smoke_tables(tmp_path_factory):
    """``report.py --smoke --out``'s tables (one run for the tests below)."""
    rep = load("report")
    out = tmp_path_factory.mktemp("report") / "tables.md"
    tables = rep.main(["--smoke", "--quiet", "--out", str(out)])
    assert out.read_text() == tables
    return tables


def test_report_writes_every_table_with_its_header(smoke_tables):
    tables = smoke_tables
    heads = [ln for ln in tables.splitlines() if "load average" in ln]
    for name in ("compare_generators.py", "sweep.py", "mesh_intersect.py", "racing_line.py"):
        assert f"### {name}" in tables
    assert len(heads) >= 4
    assert all("UTC" in h and "threads" in h and "cores" in h for h in heads)
    assert "cKDTree" in tables and "hull" in tables
    rows = [ln for ln in tables.splitlines() if ln.startswith("| polar ")]
    assert rows and rows[0].split("|")[6].strip().endswith("x")


def test_the_repair_table_repeats_the_main_tables_figures(smoke_tables):
    """The repair-on row of a generator is the main table's row, not a second timing."""
    for name in ("bezier", "hull", "voronoi"):
        main, fixed = [
            ln.split("|") for ln in smoke_tables.splitlines() if ln.startswith(f"| {name} ")
        ][:2]
        assert (main[3], main[4]) == (fixed[2], fixed[4]), name  # valid, valid tracks/s


def _headings(text: str) -> set[str]:
    return {ln.strip() for ln in text.splitlines() if ln.startswith("### ")}


def test_the_readme_has_a_generated_table_for_every_table_report_builds(smoke_tables):
    rep = load("report")
    text = (BENCH / "README.md").read_text()
    block = text[text.index(rep.BEGIN) + len(rep.BEGIN) : text.index(rep.END)]
    want = _headings(smoke_tables)
    assert want >= {"### compare_generators.py", "### sweep.py", "### racing_line.py"}
    assert want <= _headings(block), f"missing from the README: {want - _headings(block)}"


def test_report_refuses_a_readme_without_markers(tmp_path):
    rep = load("report")
    p = tmp_path / "README.md"
    p.write_text("# no markers\n")
    with pytest.raises(ValueError, match="expected the markers"):
        rep.write_readme("| a |\n", p)
    p.write_text(f"head\n{rep.BEGIN}\nold\n{rep.END}\ntail\n")
    rep.write_readme("| new |\n", p)
    text = p.read_text()
    assert "old" not in text and "| new |" in text and text.endswith(f"{rep.END}\ntail\n")


def test_anchors_prints_the_peer_ratios(capsys):
    an = load("anchors")
    if not an.available():
        pytest.skip("the anchors extra (gymnasium[box2d]) is not installed")
    rows = an.main(["--smoke", "--generators", "polar"])
    out = capsys.readouterr().out
    assert "CarRacing._create_track" in out and "procgen_nb ratio" in out
    car = next(r for r in rows if r["name"] == "CarRacing._create_track")
    assert car["tracks"] == 3 and car["valid tracks/s"] > 0 and car["ratio"].endswith("x")


def test_anchors_pins_come_from_pyproject(tmp_path):
    an = load("anchors")
    assert an.no_deps_pins() == ["random-track-generator==1.1.0", "gpxpy==1.6.2"]
    bad = tmp_path / "pyproject.toml"
    bad.write_text("[tool.procgen_nb.anchors]\nno-deps = []\n")
    with pytest.raises(ValueError, match="expected \\[tool.procgen_nb.anchors\\] no-deps"):
        an.no_deps_pins(bad)
    bad.write_text('[tool.procgen_nb.anchors]\nno-deps = ["gpxpy>=1"]\n')
    with pytest.raises(ValueError, match="expected name==version pins, got 'gpxpy>=1'"):
        an.no_deps_pins(bad)


def test_random_track_generator_runs_on_numpy_2_from_its_no_deps_folder():
    """The peer that declares numpy<2, installed --no-deps (cached), in a child process of
    this interpreter: its seeds 0-2 return tracks (seed 3 never does: the timeout ends it)."""
    an = load("anchors")
    folder, note = an.no_deps_folder(install=True)
    if folder is None:
        pytest.skip(note)
    r = an.time_peer("random-track-generator", [0, 1, 2, 3], 3.0, folder)
    assert (r["tracks"], r["valid"], r["timeouts"]) == (4, 3, 1)
    assert 3.0 <= r["seconds"] < 3.0 + 3 * 2.0
