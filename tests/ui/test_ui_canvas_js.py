"""The track canvas's drawing rules, run in Node on the widget's own module (its pure
functions: the order and marks of point clouds, the legend's entries, where and how
large a gate's number is drawn), against hand-worked cases."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess

import pytest

JS = pathlib.Path(__file__).resolve().parents[2] / "widgets" / "track_canvas" / "track_canvas.js"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _run(tmp_path, expr: str):
    """Evaluates ``expr`` (JavaScript, the module's exports in scope) in Node."""
    mod = tmp_path / "track_canvas.mjs"
    mod.write_text(JS.read_text(encoding="utf-8"), encoding="utf-8")
    code = f"import * as m from {json.dumps(mod.as_uri())};\nconsole.log(JSON.stringify({expr}));"
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def test_clouds_are_drawn_largest_first_and_rings_never_hidden(tmp_path):
    # points 2000, kept 700, again 700 (kept repeated): points first in 1.2 px marks,
    # kept in 2.6 px, again on top in 1.9 px: kept shows as a ring around again
    got = _run(tmp_path, "m.cloudMarks(Int32Array.from([2000, 700, 700]))")
    assert [g["cloud"] for g in got] == [0, 1, 2]
    assert [round(g["radius"], 9) for g in got] == [1.2, 2.6, 1.9]
    # a smaller cloud given first is still drawn after the larger one
    got = _run(tmp_path, "m.cloudMarks([10, 50])")
    assert [(g["cloud"], round(g["radius"], 9)) for g in got] == [(1, 1.2), (0, 2.6)]
    assert _run(tmp_path, "m.cloudMarks([5])") == [{"cloud": 0, "radius": 1.8}]


def test_the_gate_entry_is_in_the_legend_only_where_there_are_gates(tmp_path):
    got = _run(tmp_path, "[m.legendEntries(0), m.legendEntries(8)]")
    assert [t for t, _c in got[0]] == ["valid", "invalid"]
    assert [t for t, _c in got[1]] == ["valid", "invalid", "gate (number: order)"]


def test_a_gate_number_is_kept_inside_its_cell_in_any_cell_size(tmp_path):
    # 9 px in cells under 110 px (never left out), 11 px in larger ones, 13 px enlarged
    assert _run(
        tmp_path, "[m.gateFontPx(false, 60), m.gateFontPx(false, 110), m.gateFontPx(true, 60)]"
    ) == [9, 11, 13]
    # a 60 px cell at (100, 200); a gate at its top right corner: the number (7 px wide,
    # 11 px tall) moves inside: x <= 100 + 60 - 7 - 4, y >= 200 + 1
    box = _run(tmp_path, "m.gateLabelBox(158, 201, 7, 9, 100, 200, 60, false)")
    assert box == {"x": 149, "y": 201, "w": 10, "h": 11}
    # one in the middle: beside the gate (4 px right, above it)
    box = _run(tmp_path, "m.gateLabelBox(130, 230, 7, 9, 100, 200, 60, false)")
    assert box == {"x": 134, "y": 218, "w": 10, "h": 11}
    # enlarged: beside the gate even past the cell (the view is the whole canvas)
    box = _run(tmp_path, "m.gateLabelBox(158, 201, 7, 13, 100, 200, 60, true)")
    assert box == {"x": 162, "y": 185, "w": 10, "h": 15}
