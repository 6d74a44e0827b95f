"""A cook report's ``loads`` and ``builds``: compiles are counted apart from cache loads.

The reference is hand-worked from the sample graph: ``points`` only uploads, ``keep``
launches two kernel variants (inside, compact), ``kept`` one (gather), ``offsets`` one
(scan), so a first cook in a fresh process loads 4 modules; on an empty kernel cache Warp
compiles each of them, on a warm one none; a second cook loads nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_COOK = r"""
import json
from procgen_nb.demo import build_demo_graph
g = build_demo_graph()
first, second = g.cook().report, g.cook(params={"points.n": 10}).report
print(json.dumps({
    "rows": first.rows(timing=True),
    "steady": first.rows(timing=False),
    "text": first.to_text(),
    "second": [second.totals.loads, second.totals.builds],
}))
"""

_PER_NODE = {"points": 0, "keep": 2, "kept": 1, "offsets": 1}


def _cook_in_a_fresh_process(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(
        WARP_CACHE_PATH=str(tmp_path / "warp"),
        PROCGEN_NB_CACHE=str(tmp_path / "variants"),
        PROCGEN_NB_PROGRESS="0",
        PROCGEN_DEVICE="cpu",
    )
    res = subprocess.run(
        [sys.executable, "-c", _COOK], env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.splitlines()[-1])


def test_a_cold_cook_counts_its_compiles_and_a_warm_one_only_loads(tmp_path):
    cold = _cook_in_a_fresh_process(tmp_path)  # an empty Warp kernel cache: Warp compiles
    warm = _cook_in_a_fresh_process(tmp_path)  # the same cache, a new process: loads only
    for got in (cold, warm):
        assert {r["node"]: r["loads"] for r in got["rows"]} == _PER_NODE
        assert got["second"] == [0, 0]  # a second cook in the process loads nothing
    assert {r["node"]: r["builds"] for r in cold["rows"]} == _PER_NODE
    assert {r["node"]: r["builds"] for r in warm["rows"]} == dict.fromkeys(_PER_NODE, 0)
    assert "loads=4 builds=4 " in cold["text"] and "loads=4 builds=0 " in warm["text"]
    # the steady rows leave out what a cache changes: equal on a cold and a warm cache
    assert cold["steady"] == warm["steady"]
    assert "builds" not in cold["steady"][0] and cold["steady"][1]["loads"] == 2


def test_the_reports_columns_and_totals_name_loads_and_builds():
    from procgen_nb.demo import build_demo_graph

    report = build_demo_graph().cook(params={"points.n": 20, "points.seed": 3}).report
    text = report.to_text()
    head = text.splitlines()[0].split()
    assert head == [
        "node",
        "mode",
        "time_ms",
        "launches",
        "uploads",
        "readbacks",
        "waits",
        "loads",
        "builds",
        "replays",
    ]
    t = report.totals
    assert text.splitlines()[-1] == (
        f"total: launches=4 uploads=1 readbacks=0 waits=0 loads={t.loads} builds={t.builds} "
        "replays=0"
    )
    steady = report.to_text(timing=False)
    assert "builds" not in steady and "time_ms" not in steady
    assert (
        steady.splitlines()[-1]
        == f"total: launches=4 uploads=1 readbacks=0 waits=0 loads={t.loads} replays=0"
    )
    assert "<th>loads</th><th>builds</th>" in report._repr_html_()


def test_a_fresh_demo_process_reports_no_build_in_its_cook(tmp_path):
    """The audit's case: ``procgen-nb demo --tracks 1`` in a new process printed
    ``builds=4`` beside ``0 compiled``. Its modules load before the cook (the up-front
    build), so the cook's report loads and builds none, on a warm or a cold cache."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(PROCGEN_NB_PROGRESS="0", PROCGEN_DEVICE="cpu")
    res = subprocess.run(
        [sys.executable, "-m", "procgen_nb", "demo", "--tracks", "1", "--n", "10"]
        + ["--out", str(tmp_path / "d.png")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    (total,) = [ln for ln in lines if ln.startswith("total: ")]
    assert " loads=0 builds=0 " in total, total
    (modules,) = [ln for ln in lines if ln.startswith("kernel modules: ")]
    assert modules.endswith("found in Warp's kernel cache"), modules
