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


def test_tree_clearance_is_the_brute_force():
    sw = load("sweep")
    for xy in (_noisy_loops(2, E=24, N=80, amp=0.6), _noisy_loops(3, E=8, N=80, amp=0.0)):
        assert np.allclose(sw.tree_clearance(xy), sw.brute_clearance(xy), rtol=1e-12, atol=0)
        assert np.allclose(sw.tree_clearance(xy, rounds=0), sw.brute_clearance(xy))


def test_tree_pairs_are_the_brute_force():
    mi = load("mesh_intersect")
    from procgen_nb.mesh import sphere_mesh

    a = sphere_mesh((0, 0, 0), 1.0, 8).soup()
    b = sphere_mesh((0.8, 0.3, 0.2), 0.9, 8).soup()
    want, w_unsure = mi.np_pairs(a, b)
    got, g_unsure = mi.tree_pairs(a, b)
    assert want and got - w_unsure == want - g_unsure


# -- the tables, made by report.py; the peers, by anchors.py --------------------------------
def test_report_writes_every_table_with_its_header(tmp_path):
    rep = load("report")
    out = tmp_path / "tables.md"
    tables = rep.main(["--smoke", "--quiet", "--out", str(out)])
    assert out.read_text() == tables
    heads = [ln for ln in tables.splitlines() if "load average" in ln]
    for name in ("compare_generators.py", "sweep.py", "mesh_intersect.py", "racing_line.py"):
        assert f"### {name}" in tables
    assert len(heads) >= 4
    assert all("UTC" in h and "threads" in h and "cores" in h for h in heads)
    assert "cKDTree" in tables and "hull" in tables
    rows = [ln for ln in tables.splitlines() if ln.startswith("| polar ")]
    assert rows and rows[0].split("|")[6].strip().endswith("x")


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
