"""explore(): drive the controls from Python, wait for the cook, read counts and report."""

from __future__ import annotations

import threading
import time

import matplotlib
import numpy as np
import pytest
from ui_fake_target import FakeParams, fake_tracks

from procgen_nb import CookError, node, ops
from procgen_nb.demo import GATHER, build_demo_graph
from procgen_nb.errors import ParamsError
from procgen_nb.params import Field, Params
from procgen_nb.ui import ExploreView, FunctionTarget, explore

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def view():
    v = explore(fake_tracks, params=FakeParams, min_interval=0.0)
    yield v
    v.close()


def _expected_valid(p: FakeParams) -> int:
    """Independent reference: an env is valid when every point is min_radius from 0."""
    xy = fake_tracks(p)["xy"]
    r = np.hypot(xy[..., 0], xy[..., 1])
    return int(np.sum(r.min(axis=1) >= p.min_radius - 1e-12))


def test_first_cook_draws_and_counts(view):
    frame = view.wait(30)
    assert view.error == ""
    assert frame is view.frame and view.cooks == 1
    # the canvas got the tracks as float32 bytes: the reference's own tracks, bit for bit
    ref = fake_tracks(FakeParams())
    got = np.frombuffer(view.canvas.tracks, dtype="<f4").reshape(9, 64, 2)
    np.testing.assert_array_equal(got, ref["xy"].astype(np.float32))
    np.testing.assert_array_equal(np.frombuffer(view.canvas.valid, dtype="<i4"), ref["valid"])
    assert view.canvas.seq == 1 and not view.canvas.stale
    assert frame.counts["envs"] == 9
    assert frame.counts["points per env"] == 64
    assert frame.counts["valid envs"] == _expected_valid(FakeParams())
    assert frame.counts["controls kept"] == 9 * 5
    assert ["valid envs", _expected_valid(FakeParams())] in view.canvas.counts
    assert "fake_tracks" in view.report.value and "launches" in view.report.value
    assert view.progress.layout.visibility == "hidden"
    assert "cooked in" in view.status.value


def test_moving_a_slider_cooks_and_updates_counts_and_image(view):
    view.wait(30)
    before_seq, before = view.canvas.seq, view.counts
    view.form.widget("min_radius").value = 0.9
    view.form.widget("jitter").value = 0.8
    frame = view.wait(30)
    p = FakeParams(min_radius=0.9, jitter=0.8)
    assert view.value == p
    assert frame.counts["valid envs"] == _expected_valid(p)
    assert frame.counts["valid envs"] < before["valid envs"]
    assert view.canvas.seq > before_seq
    got = np.frombuffer(view.canvas.tracks, dtype="<f4").reshape(9, 64, 2)
    np.testing.assert_array_equal(got, fake_tracks(p)["xy"].astype(np.float32))
    view.set(num_envs=4, lobes=7)
    frame = view.wait(30)
    assert frame.counts["envs"] == 4 and frame.counts["controls kept"] == 28
    assert frame.tracks.shape == (4, 64, 2)


def test_gates_are_counted_and_drawn(view):
    view.set(gates=5)
    frame = view.wait(30)
    assert frame.gates.positions.shape == (9, 5, 2)
    assert frame.counts["gates per env (mean)"] == 5
    assert frame.counts["gates per env (min)"] == 5


def test_refusal_shows_in_form_and_the_view_keeps_cooking(view):
    view.wait(30)
    cooks = view.cooks
    view.form.widget("seed").value = -4
    assert "FakeParams.seed: expected a value in [0, 2147483647], got -4" in view.form.error
    assert view.value.seed == 0
    view.wait(30)
    assert view.cooks == cooks
    with pytest.raises(ParamsError, match="FakeParams.lobes"):
        view.set(lobes=99)


def test_no_figure_piles_up(view):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    for k in range(4):
        view.set(seed=k + 1)
        view.wait(30)
    assert plt.get_fignums() == before
    assert matplotlib.get_backend()  # the view never switched pyplot's backend on


def test_copy_as_code_recreates_the_params(view):
    view.set(lobes=8, jitter=0.125, seed=77, gates=2)
    view.wait(30)
    view.code_button.click()
    code = view.code_area.value
    assert code == view.code()
    ns: dict = {}
    exec(compile(code, "<copied>", "exec"), ns)
    assert ns["params"] == view.value == FakeParams(lobes=8, jitter=0.125, seed=77, gates=2)
    np.testing.assert_array_equal(ns["result"]["xy"], view.frame.tracks)
    assert view.code_area.layout.display is None


class Slow(Params):
    n: int = Field(1, bounds=(0, 100))


def test_progress_shows_during_long_work_and_changes_queue():
    entered, release = threading.Event(), threading.Event()
    seen = []

    def slow(p):
        seen.append(p.n)
        entered.set()
        assert release.wait(20)
        return {"xy": np.zeros((1, 8, 2)) + p.n, "valid": [1]}

    v = explore(slow, params=Slow, min_interval=0.0)
    try:
        assert entered.wait(20)
        assert v.progress.layout.visibility == "visible"
        assert "calling slow" in v.status.value
        for n in range(2, 9):  # changes during the cook: only the last one stays queued
            v.set(n=n)
        release.set()
        frame = v.wait(30)
        assert seen == [1, 8]
        assert frame.tracks[0, 0, 0] == 8
        assert v.progress.layout.visibility == "hidden"
    finally:
        release.set()
        v.close()


def test_a_failed_cook_shows_its_message_and_keeps_the_last_frame():
    def flaky(p):
        if p.n == 3:
            raise CookError("graph 'x': node 'n' failed in op device.kernel: boom", node="n")
        return {"xy": np.ones((2, 8, 2)) * p.n}

    v = explore(flaky, params=Slow, min_interval=0.0)
    try:
        good = v.wait(30)
        drawn = bytes(v.canvas.tracks)
        v.form.widget("n").value = 3
        assert v.wait(30) is good
        assert v.error == "graph 'x': node 'n' failed in op device.kernel: boom"
        assert "cook failed" in v.status.value and "boom" in v.status.value
        # the last picture stays, greyed, and says which control and value failed
        assert bytes(v.canvas.tracks) == drawn and v.canvas.stale
        assert "n = 3 did not cook" in v.canvas.message
        # the message sits under the control that was changed, which goes back to the
        # value in effect (no cook for that)
        msg = v.form.controls["n"].message.value
        assert "n = 3" in msg and "boom" in msg
        assert v.value.n == 1 and v.form.widget("n").value == 1
        assert v.cooks == 2
        v.set(n=4)
        v.wait(30)
        assert v.error == "" and v.frame.tracks[0, 0, 0] == 4
        assert not v.canvas.stale and v.form.controls["n"].message.value == ""
    finally:
        v.close()


def test_cook_now_and_a_target_instance():
    target = FunctionTarget(fake_tracks, FakeParams(num_envs=2), name="fake")
    v = ExploreView(target, cook=False, min_interval=0.0)
    try:
        assert v.frame is None and v.counts == {}
        frame = v.cook_now(30)
        assert frame.counts["envs"] == 2
        assert "<b>fake</b>" in v._left.children[0].value
    finally:
        v.close()


def test_explore_refuses_what_it_cannot_cook():
    with pytest.raises(ParamsError, match="expected a generator or gate generator name, a Stage"):
        explore(42)
    with pytest.raises(ParamsError, match="expected a Params class"):
        explore(fake_tracks, params=3)
    with pytest.raises(ParamsError, match=r"for a function: expected names among \['name'\]"):
        explore(fake_tracks, params=FakeParams, num_envs=3)
    with pytest.raises(ParamsError, match=r"for a graph: expected names among \['outputs'\]"):
        explore(build_demo_graph(), seed=1)


def test_explore_a_graph_counts_what_numpy_counts():
    g = build_demo_graph()
    v = explore(g, min_interval=0.0)
    try:
        frame = v.wait(60)
        assert v.error == ""
        # the node parameters first; after the first cook, the kernel-level ones it found
        controls = list(v.form.controls)
        assert controls[:5] == [
            "points.n",
            "points.seed",
            "keep.shape",
            "keep.radius",
            "keep.inner",
        ]
        assert set(controls[5:]) == set(g.kernel_params())

        def inside(n, seed, r):
            pts = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
            return int(np.sum(np.hypot(pts[:, 0], pts[:, 1]) <= np.float32(r)))

        assert frame.counts["points"] == 2000
        assert frame.counts["kept"] == inside(2000, 7, 0.6)
        assert frame.counts["offsets.total"] == inside(2000, 7, 0.6)
        assert set(frame.points) == {"points", "kept"}
        assert frame.points["kept"].shape == (inside(2000, 7, 0.6), 2)
        assert [r.name for r in frame.report] == ["points", "keep", "kept", "offsets"]
        assert frame.report[1].launches >= 2
        seq = v.canvas.seq
        v.form.widget("keep.radius").value = 0.3
        frame = v.wait(60)
        assert frame.counts["kept"] == inside(2000, 7, 0.3)
        assert v.canvas.seq == seq + 1
        sizes = np.frombuffer(v.canvas.cloud_sizes, dtype="<i4")
        assert dict(zip(v.canvas.cloud_labels, sizes.tolist())) == {
            "points": 2000,
            "kept": inside(2000, 7, 0.3),
        }
        reused = {r.name: r.reused for r in frame.report}
        assert reused == {"points": True, "keep": False, "kept": False, "offsets": False}
        assert "graph.cook(params=params)" in v.code() and "'keep.radius': 0.3" in v.code()
    finally:
        v.close()


def test_a_fast_drag_cooks_a_few_times_and_ends_on_the_last_value():
    v = explore(fake_tracks, params=FakeParams, min_interval=0.2)
    try:
        v.wait(30)
        first = v.cooks
        slider = v.form.widget("num_envs")
        t0 = time.monotonic()
        for n in list(range(2, 37)) * 2:  # 70 values in about 0.7 s
            slider.value = n
            time.sleep(0.01)
        frame = v.wait(30)
        # at most one cook per 0.2 s while dragging, plus the one at the release
        assert 1 <= v.cooks - first <= (time.monotonic() - t0) / 0.2 + 2 < 70
        assert frame.counts["envs"] == 36 and v.value.num_envs == 36
    finally:
        v.close()


def test_explore_one_output_of_a_graph():
    g = build_demo_graph()
    with pytest.raises(
        ParamsError, match=r"expected one of \['points', 'keep', 'kept', 'offsets'\]"
    ):
        explore(g, outputs="nope")
    v = explore(g, outputs="kept", min_interval=0.0)
    try:
        frame = v.wait(60)
        assert v.error == ""
        assert set(frame.points) == {"kept"} and set(frame.counts) == {"kept"}
    finally:
        v.close()


def _inside(r, cx=0.0):
    pts = np.random.default_rng(7).uniform(-1.0, 1.0, size=(2000, 2)).astype(np.float32)
    return int(np.sum(np.hypot(pts[:, 0] - np.float32(cx), pts[:, 1]) <= np.float32(r)))


def test_explore_a_cooked_graph_shows_kernel_params_and_node_params_still_reach_kernels():
    g = build_demo_graph()
    g.cook()  # finds the kernel-level parameters
    v = explore(g, min_interval=0.0)
    try:
        v.wait(60)
        # only literals are kernel params: the node's radius and shape are not shadowed
        assert {"keep.inside.center_x", "kept.gather.TYPE"} <= set(v.form.controls)
        assert not {"keep.inside.radius", "keep.inside.SHAPE"} & set(v.form.controls)
        v.form.widget("keep.radius").value = 0.3  # a node param: the kernel follows it
        assert v.wait(60).counts["kept"] == _inside(0.3)
        v.form.widget("keep.radius").value = 0.5
        assert v.wait(60).counts["kept"] == _inside(0.5)
        v.form.widget("keep.inside.center_x").value = 0.25  # a literal's kernel param
        assert v.wait(60).counts["kept"] == _inside(0.5, 0.25)
        v.form.widget("keep.radius").value = 0.9  # the node's slider still moves the picture
        assert v.wait(60).counts["kept"] == _inside(0.9, 0.25)
    finally:
        v.close()


def test_copy_button_copies_in_the_browser_and_shows_the_code(view):
    view.wait(30)
    button = view.code_button
    assert button.text == view.code()  # what a click in the browser copies, kept current
    view.form.widget("num_envs").value = 5
    view.wait(30)
    assert button.text == view.code() and "5" in button.text
    # the front end writes the clipboard, then counts the copy (as the ESM does)
    button.copies += 1
    assert view.code_area.value == view.code() and view.code_area.layout.display is None
    assert "copied the parameters as Python code" in view.copy_note.value
    button.error = "Write permission denied."
    button.copies += 1
    assert "did not copy (Write permission denied.): select the code below" in view.copy_note.value


def test_copy_button_front_end_ships_as_package_data():
    from procgen_nb.ui.clipboard import CopyButton, _asset

    js = _asset("copy_button/copy_button.js").read_text()
    assert "navigator.clipboard.writeText" in js and "export default" in js
    assert CopyButton()._esm == js  # the widget sends that module to the front end


def test_explore_a_graph_that_never_cooked_shows_kernel_params_after_its_first_cook():
    g = build_demo_graph()
    v = explore(g, min_interval=0.0)
    try:
        v.wait(60)
        assert {"keep.inside.center_x", "kept.gather.TYPE"} <= set(v.form.controls)
        assert v.form.value.to_dict()["keep.radius"] == 0.6
        v.form.widget("keep.inside.center_x").value = 0.25  # the new form is wired to the view
        frame = v.wait(60)
        assert frame.counts["kept"] == _inside(0.6, 0.25)
        assert "'keep.inside.center_x': 0.25" in v.code_button.text
    finally:
        v.close()


@node(params={"as_type": Field("vec2", choices=["vec2", "f32"], doc="gathered as")})
def _gathered(points, keep, as_type):
    """Passes gather's TYPE from its own parameter: f32 cannot bind the vec2 points."""
    return ops.device.kernel(
        kernel=GATHER,
        specialize={"TYPE": as_type},
        bind={"src": points, "idx": keep["indices"]},
        domain=keep["indices"],
    )["columns"]["dst"]


def test_a_failed_graph_cook_is_local_and_the_next_edit_recovers():
    """The issue's case: gather's TYPE = f32 on vec2 points cannot bind (a kernel-level
    TYPE no longer offers it, so a node parameter passes it here); the view says so under
    that control, and moving keep.radius afterwards cooks (NumPy counts)."""
    g = build_demo_graph()
    g.add("picked", _gathered, points="points", keep="keep")
    v = explore(g, min_interval=0.0)
    try:
        v.wait(60)
        key = "picked.as_type"
        cooks = v.cooks
        v.form.widget(key).value = "f32"
        v.wait(60)
        assert v.cooks == cooks + 1 and v.error
        msg = v.form.controls[key].message.value
        assert "= &#x27;f32&#x27; did not cook: expected" in msg
        assert v.canvas.stale and v.value.to_dict()[key] == "vec2"
        v.form.widget("keep.radius").value = 0.3
        frame = v.wait(60)
        pts = np.random.default_rng(7).uniform(-1.0, 1.0, size=(2000, 2)).astype(np.float32)
        want = int(np.sum(np.hypot(pts[:, 0], pts[:, 1]) <= np.float32(0.3)))
        assert v.error == "" and frame.counts["kept"] == want and not v.canvas.stale
        assert v.form.controls[key].message.value == ""
    finally:
        v.close()
