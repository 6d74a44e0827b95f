"""The track canvas's drawing rules, run in Node on the widget's own module (its pure
functions: the order and marks of point clouds, the legend's entries, where and how
large a gate's number is drawn; render() itself in a small fake DOM for a pinned cook's
faint tracks and counts), against hand-worked cases."""

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


# a DOM small enough for render(): elements that hold children, text and classes, and a
# 2D context that records each call with the stroke style in effect
_FAKE_DOM = r"""
const ops = [];
const ctxState = { strokeStyle: "", lineWidth: 1 };
const ctx = new Proxy(ctxState, {
  get(t, k) {
    if (k in t) return t[k];
    if (k === "measureText") return () => ({ width: 10 });
    return (...a) => { ops.push([k, a.map((x) => Math.round(x * 1000) / 1000), t.strokeStyle]); };
  },
  set(t, k, v) { t[k] = v; return true; },
});
class El {
  constructor(tag) {
    this.tagName = tag; this.children = []; this.style = {}; this.dataset = {};
    this.classes = new Set(); this.innerHTML = ""; this.parentElement = null;
    this.classList = {
      add: (c) => this.classes.add(c),
      toggle: (c, on) => (on ? this.classes.add(c) : this.classes.delete(c)),
      contains: (c) => this.classes.has(c),
    };
  }
  set className(c) { for (const x of c.split(" ")) if (x) this.classes.add(x); }
  get className() { return [...this.classes].join(" "); }
  set textContent(t) { this.children = [{ textContent: String(t) }]; }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
  get firstChild() { return this.children[0]; }
  append(...cs) { for (const c of cs) { c.parentElement = this; this.children.push(c); } }
  addEventListener() {} removeEventListener() {}
  getBoundingClientRect() { return { top: 0, left: 0, width: 400, height: 400, bottom: 400 }; }
  closest() { return null; } contains() { return false; }
  querySelector() { return new El("span"); }
  getContext() { return ctx; }
}
globalThis.document = {
  createElement: (t) => new El(t), createTextNode: (t) => ({ textContent: t }),
  addEventListener() {}, removeEventListener() {}, hidden: false, body: null,
};
globalThis.window = { devicePixelRatio: 1, innerHeight: 800, addEventListener() {}, removeEventListener() {} };
globalThis.requestAnimationFrame = () => 0;
globalThis.ResizeObserver = class { observe() {} disconnect() {} };
globalThis.getComputedStyle = () => ({ overflowY: "visible", order: "0" });
const f32 = (a) => new Float32Array(a).buffer;
const i32 = (a) => new Int32Array(a).buffer;
function find(node, cls, out = []) {
  if (node.classes && node.classes.has(cls)) out.push(node);
  for (const c of node.children || []) find(c, cls, out);
  return out;
}
function show(values) {
  ops.length = 0;
  const model = { get: (k) => values[k], on() {}, off() {}, send() {} };
  const root = new El("div");
  m.default.render({ model, el: root });
  const rows = find(root, "pc-row").map((r) => [
    r.dataset.label,
    find(r, "pc-value")[0].textContent,
    find(r, "pc-pinned").map((c) => c.textContent),
  ]);
  return {
    ops, rows, pinning: root.classes.has("pc-pinning"),
    head: find(root, "pc-side-title")[0].firstChild.textContent,
  };
}
"""


def _show(tmp_path, values: str, pick: str):
    """Renders the canvas (a fake DOM) with the model ``values``; returns ``pick`` of it."""
    mod = tmp_path / "track_canvas.mjs"
    mod.write_text(JS.read_text(encoding="utf-8"), encoding="utf-8")
    code = (
        f"import * as m from {json.dumps(mod.as_uri())};\n{_FAKE_DOM}\n"
        f"const got = show({values});\nconsole.log(JSON.stringify({pick}));"
    )
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


_PINNED = "rgba(90, 90, 90, 0.28)"
# two envs drawn 4 points each: squares of half-side 1 around (0, 0) and (10, 0); the
# pinned cook's 3 points each, its env 1 with a point that is no number (a gap)
_MODEL = (
    "{envs: 2, points: 4, slots: 0, shown: 2, seq: 1, stale: false, message: '',"
    " tracks: f32([1,1, -1,1, -1,-1, 1,-1, 11,1, 9,1, 9,-1, 11,-1]), valid: i32([1, 1]),"
    " counts: [['envs', 2], ['valid envs', 2], ['kept', 5]],"
    " pin_envs: 2, pin_points: 3,"
    " pin_tracks: f32([0,0.5, 0.5,0, 0,-0.5, 10,0.5, NaN,NaN, 10,-0.5]),"
    " pin_counts: PIN}"
)


def test_a_pinned_cook_is_drawn_faintly_behind_each_env(tmp_path):
    # 400 px wide (no layout: the fallback), 2 envs: 2 columns of 200 px cells; each env
    # in the square (200 e + 2, 2, 196) around its centre, one scale for all: half-extent
    # 1, so k = 98 / 1.08 px per unit; X = 200 e + 100 + (x - cx) k, Y = 100 - (y - cy) k
    k = 98 / 1.08
    ops = _show(tmp_path, _MODEL.replace("PIN", "[['envs', 2]]"), "got.ops")

    def at(e, x, y, cx):
        return [round(200 * e + 100 + (x - cx) * k, 3), round(100 - y * k, 3)]

    pinned = [(name, args) for name, args, style in ops if style == _PINNED and name != "stroke"]
    # env 0: the closed triangle; env 1: the point that is no number breaks the line
    want = [
        ("beginPath", []),
        ("moveTo", at(0, 0, 0.5, 0)),
        ("lineTo", at(0, 0.5, 0, 0)),
        ("lineTo", at(0, 0, -0.5, 0)),
        ("lineTo", at(0, 0, 0.5, 0)),
        ("beginPath", []),
        ("moveTo", at(1, 10, 0.5, 10)),
        ("moveTo", at(1, 10, -0.5, 10)),
        ("lineTo", at(1, 10, 0.5, 10)),
    ]
    got = [(n, a) for n, a in pinned if n in ("beginPath", "moveTo", "lineTo")]
    assert len(got) == len(want)
    for (gn, ga), (wn, wa) in zip(got, want, strict=True):
        assert gn == wn and ga == pytest.approx(wa, abs=2e-3)
    # behind: each env's pinned line is stroked before its own track
    strokes = [style for name, _a, style in ops if name == "stroke"]
    assert strokes.index(_PINNED) < strokes.index("#2a9d4b")
    assert [s for s in strokes if s in (_PINNED, "#2a9d4b")][:2] == [_PINNED, "#2a9d4b"]
    assert strokes.count(_PINNED) == 2


def test_the_pinned_counts_stand_beside_the_current_ones(tmp_path):
    pin = "[['envs', 2], ['valid envs', 1]]"
    got = _show(tmp_path, _MODEL.replace("PIN", pin), "[got.rows, got.pinning, got.head]")
    rows, pinning, head = got
    # each count, then the pinned cook's value ("–": a count the pinned cook had not)
    assert rows == [["envs", "2", ["2"]], ["valid envs", "2", ["1"]], ["kept", "5", ["–"]]]
    assert pinning and head == "counts (now · pinned) "
    got = _show(tmp_path, _MODEL.replace("PIN", "[]").replace("pin_envs: 2", "pin_envs: 0"),
                "[got.rows, got.pinning, got.head, got.ops.filter((o) => o[2] === "
                f"{json.dumps(_PINNED)}).length]")  # fmt: skip
    rows, pinning, head, faint = got
    assert [r[2] for r in rows] == [[], [], []] and not pinning and head == "counts "
    assert faint == 0  # nothing pinned: nothing drawn faintly
