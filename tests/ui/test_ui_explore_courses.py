"""explore() on gate generators and courses: gates drawn and counted like gates.build makes them."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from procgen_nb.track_gen.gates import build
from procgen_nb.track_gen.gates.presets import gates as gate_preset
from procgen_nb.ui import CourseTarget, explore


def _reference(**kw):
    """The same course made directly with gates.build, read back with NumPy."""
    return build(**kw).numpy()


@pytest.fixture(scope="module")
def arc():
    v = explore("arc_length", num_envs=6, num_points=96, min_interval=0.0)
    v.wait(300)
    yield v
    v.close()


def test_a_gate_generator_name_explores_a_course(arc):
    assert isinstance(arc.target, CourseTarget)
    assert arc.error == ""
    names = list(arc.form.controls)
    assert names[:3] == ["track.lobes", "track.radius_jitter", "track.min_radius"]
    assert "gates.spacing" in names and "course.track_width" in names
    heads = [c.titles[0] for c in arc.form.children if isinstance(c, widgets.Accordion)]
    assert heads == ["centerline (polar)", "gates (arc_length)", "course"]
    assert arc.form.widget("course.track_width").description == "track width [world]"


def test_max_gates_below_the_capacity_is_explained_before_cooking(arc):
    cooks = arc.cooks
    arc.form.widget("course.max_gates").value = 10  # arc_length may place max_count = 24
    arc.wait(60)
    assert arc.cooks == cooks  # nothing cooked
    msg = arc.form.controls["course.max_gates"].message.value
    assert "max gates: 10 is below the 24 gates" in msg and "accepted: 24 or more" in msg
    assert arc.canvas.stale
    # as after a failed cook: the control and the values go back to those in effect
    assert arc.form.widget("course.max_gates").value == 32
    assert arc.value.to_dict()["course.max_gates"] == 32
    assert [h.to_dict()["course.max_gates"] for h in arc.history] == [32]
    arc.form.widget("course.max_gates").value = 40  # the next valid edit cooks
    arc.wait(120)
    assert arc.cooks == cooks + 1 and arc.error == "" and not arc.canvas.stale
    arc.update(**{"course.max_gates": 32})  # the later tests' (module) view as it was
    arc.wait(120)


def test_course_counts_and_gates_match_build(arc):
    frame = arc.frame
    ref = _reference(num_envs=6, gate_generator="arc_length", num_points=96)
    np.testing.assert_array_equal(frame.tracks, ref["xy"])
    np.testing.assert_array_equal(frame.gates.count, ref["gate_count"])
    np.testing.assert_array_equal(frame.gates.positions, ref["gate_xy"])
    assert frame.counts["valid envs"] == int(ref["valid"].sum())
    assert frame.counts["gates (total)"] == int(ref["gate_count"].sum())
    assert frame.counts["gates per env (max)"] == int(ref["gate_count"].max())
    assert frame.counts["invalid: gate order"] == int(np.count_nonzero(ref["reason"] & 4))


def test_moving_spacing_rebuilds_and_epoch_regenerates(arc):
    before = arc.frame.counts["gates (total)"]
    arc.form.widget("gates.spacing").value = 0.25
    frame = arc.wait(120)
    assert arc.error == "" and frame.report[0].name == "arc_length course: built"
    ref = _reference(
        num_envs=6, gate_generator="arc_length", num_points=96, gate_params={"spacing": 0.25}
    )
    assert frame.counts["gates (total)"] == int(ref["gate_count"].sum()) > before
    arc.form.widget("course.epoch").value = 3
    frame = arc.wait(120)
    assert frame.report[0].name == "generate"
    ref = _reference(
        num_envs=6,
        gate_generator="arc_length",
        num_points=96,
        gate_params={"spacing": 0.25},
        epoch=3,
    )
    np.testing.assert_array_equal(frame.gates.positions, ref["gate_xy"])


def test_course_code_rebuilds_the_same_course(arc):
    arc.set(**{"track.lobes": 6, "gates.jitter": 0.5, "course.seed": 4})
    arc.wait(120)
    ns: dict = {}
    exec(compile(arc.code(), "<copied>", "exec"), ns)
    course = ns["course"]
    p = arc.value.to_dict()
    assert course.track.params.lobes == 6 and course.gates.params.jitter == 0.5
    assert course.track.config.seed == 4 and course.track.config.num_envs == 6
    np.testing.assert_array_equal(course.numpy()["gate_xy"], arc.frame.gates.positions)
    assert p["course.track_width"] == course.track_width


def test_gates_first_has_no_track_fields_and_a_built_course_starts_from_its_config():
    v = explore("free", num_envs=3, num_points=64, min_interval=0.0)
    try:
        assert not [n for n in v.form.controls if n.startswith("track.")]
        frame = v.wait(120)
        assert v.error == "" and frame.gates is not None
        ref = _reference(num_envs=3, gate_generator="free", num_points=64)
        np.testing.assert_array_equal(frame.gates.count, ref["gate_count"])
        assert "\n    generator=" not in v.code() and "gate_generator='free'" in v.code()
    finally:
        v.close()
    course = build(3, gate_generator="curvature", num_points=64, seed=5, track_width=0.3)
    v = explore(course, min_interval=0.0)
    try:
        p = v.value.to_dict()
        assert p["course.seed"] == 5 and p["course.track_width"] == 0.3
        assert p["gates.threshold"] == course.gates.params.threshold
        frame = v.wait(120)
        np.testing.assert_array_equal(frame.gates.positions, course.numpy()["gate_xy"])
    finally:
        v.close()


def test_a_gate_generator_instance_explores_its_course():
    gen = gate_preset("free", num_envs=2, max_gates=16, generator_params={"gates": 5})
    v = explore(gen, min_interval=0.0)
    try:
        p = v.value.to_dict()
        assert p["gates.gates"] == 5 and p["course.max_gates"] == 16
        frame = v.wait(120)
        assert v.error == "" and frame.counts["gates per env (max)"] == 5
    finally:
        v.close()


def test_unknown_names_and_options_are_refused():
    with pytest.raises(ValueError, match="expected one of .*got 'zigzag'"):
        explore("zigzag")
    with pytest.raises(ValueError, match="for a gate generator: expected names among"):
        explore("free", outputs="x")
