"""The explore view after a second audit: refused text boxes, ``params=`` round trips,
bad input refused up front, a ``Target.check`` refusal, the Play range, ``result``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from ui_fake_target import FakeParams, fake_tracks

from procgen_nb.errors import ParamsError
from procgen_nb.params import Field, Params
from procgen_nb.ui import FunctionTarget, explore
from procgen_nb.ui.timeline import PLAY_TICKS


@pytest.fixture
def view():
    v = explore(fake_tracks, params=FakeParams, min_interval=0.0)
    v.wait(60)
    yield v
    v.close()


# -- 1. a refused text box does not outlive the next good cook ------------------------------
@pytest.mark.parametrize("then", ["undo", "slider", "update"])
def test_a_refused_seed_box_shows_the_value_in_effect_after_another_good_cook(view, then):
    view.update(lobes=6)
    view.wait(60)
    box = view.form.widget("seed")
    box.value = "3.7"  # typed in the browser: refused, shown as typed
    assert view.form.refused and view.canvas.stale and box.value == "3.7"
    if then == "undo":
        view.undo()
    elif then == "slider":
        view.form.widget("lobes").value = 8
    else:
        view.update(lobes=9)
    view.wait(60)
    assert view.value.seed == 0 and view.error == ""
    # the message went with the good cook: the box shows the seed in effect, as it is
    assert box.value == "0" and not view.form.refused and not view.canvas.stale
    assert view.form.message("seed") == ""


# -- 2. explore(params=...) keeps the explore options for fields it leaves out --------------
def test_params_leaving_fields_out_keep_the_explore_options(tmp_path):
    v = explore("polar", params={"lobes": 11}, num_envs=4, num_points=64, cook=False)
    try:
        assert (v.value.lobes, v.value.num_envs, v.value.num_points) == (11, 4, 64)
        path = v.save(tmp_path / "look.json")
    finally:
        v.close()
    # an option given with a file that sets the same field: the option wins
    w = explore("polar", params=path, num_envs=2, cook=False)
    try:
        assert (w.value.lobes, w.value.num_envs, w.value.num_points) == (11, 2, 64)
    finally:
        w.close()
    c = explore("arc_length", params={"gates.spacing": 0.3}, num_envs=4, cook=False)
    try:
        assert c.value.to_dict()["course.num_envs"] == 4  # the course default is 16
    finally:
        c.close()


# -- 3. a params= the view cannot use is refused --------------------------------------------
@pytest.mark.parametrize("bad", [5, [1, 2], FakeParams, FakeParams()])
def test_a_params_the_view_cannot_use_is_refused(bad):
    with pytest.raises(ParamsError, match=r"params=\.\.\.\): expected a path .*, or a dict"):
        explore("polar", params=bad, cook=False)


# -- 4. the Play control's range follows the field's bounds and value -----------------------
class PlayParams(Params):
    lobes: int = Field(5, bounds=(3, 12))
    time: float = Field(0.0, bounds=(0.0, 1.0))
    frame: int = Field(2, bounds=(2, 5))
    epoch: int = Field(0, bounds=(0, 10_000))


def _play_tracks(p: PlayParams) -> dict:
    return fake_tracks(FakeParams(lobes=p.lobes, seed=int(p.time * 10) + p.frame + p.epoch))


def test_the_play_range_covers_each_field_from_its_value_in_effect():
    v = explore(_play_tracks, params=PlayParams)
    try:
        v.wait(60)
        pc = v.play_control
        pc.field.value = "time"  # [0, 1] by 0.1: ticks 0..10, each one in the bounds
        assert (pc.play.min, pc.play.max) == (0, 10)
        for t in range(11):
            pc.play.value = t
            v.wait(60)
            assert v.value.time == pytest.approx(t / 10) and v.form.message("time") == ""
        assert v.value.time == 1.0
        pc.field.value = "frame"  # [2, 5]: 2, 3, 4, 5
        assert (pc.play.value, pc.play.max) == (0, 3)
        pc.play.value = 3
        v.wait(60)
        assert v.value.frame == 5 and v.form.message("frame") == ""
        pc.play.value = 0  # the loop goes back to the first value
        v.wait(60)
        assert v.value.frame == 2
        v.update(epoch=500)
        pc.field.value = "epoch"  # from the value in effect, at most PLAY_TICKS ticks
        assert pc.play.max == PLAY_TICKS - 1
        pc.play.value = 7
        v.wait(60)
        assert v.value.epoch == 507
        v.update(time=1.0)
        pc.field.value = "time"  # at its highest value: from its lowest one again
        assert pc.play.max == 10 and pc.start == 0.0
    finally:
        v.close()


# -- 5. bad input is refused up front, naming the input, the value, what is accepted --------
_BAD_CALLS = {
    "save(5)": (lambda v, d: v.save(5), r"save.*got 5"),
    "save(None)": (lambda v, d: v.save(None), r"save.*got None"),
    "presets(5)": (lambda v, d: v.presets(5), r"presets\(folder\): expected a folder path"),
    "save_preset folder": (
        lambda v, d: v.save_preset("a", folder=5),
        r"presets\(folder\): expected a folder path .*got 5",
    ),
    "record path 5": (lambda v, d: v.record("seed", [1], 5), r"record\(path\): .*got 5"),
    "record unwritable": (
        lambda v, d: v.record("seed", [1], d / "file" / "x.gif"),
        r"record\(path\): expected a writable file path",
    ),
    "record fps inf": (
        lambda v, d: v.record("seed", [1], d / "x.gif", fps=float("inf")),
        r"record\(fps\): expected a finite number > 0, got inf",
    ),
    "play interval": (
        lambda v, d: v.play("seed", [1], interval="x"),
        r"play\(interval\): expected a finite number >= 0.0, got 'x'",
    ),
    "play timeout": (
        lambda v, d: v.play("seed", [1], timeout="x"),
        r"play\(timeout\): expected a finite number >= 0.0, got 'x'",
    ),
    "cook_now": (lambda v, d: v.cook_now("x"), r"cook_now\(timeout\): expected a finite"),
    "wait": (lambda v, d: v.wait("x"), r"wait\(timeout\): expected a finite number"),
    "min_interval x": (
        lambda v, d: explore(fake_tracks, params=FakeParams, min_interval="x", cook=False),
        r"explore min_interval: expected a finite number >= 0.0, got 'x'",
    ),
    "min_interval -1": (
        lambda v, d: explore(fake_tracks, params=FakeParams, min_interval=-1, cook=False),
        r"explore min_interval: .*got -1",
    ),
    "max_envs x": (
        lambda v, d: explore(fake_tracks, params=FakeParams, max_envs="x", cook=False),
        r"explore max_envs: expected an integer >= 1, got 'x'",
    ),
    "max_envs 0": (
        lambda v, d: explore(fake_tracks, params=FakeParams, max_envs=0, cook=False),
        r"explore max_envs: expected an integer >= 1, got 0",
    ),
    "max_envs -3": (
        lambda v, d: explore(fake_tracks, params=FakeParams, max_envs=-3, cook=False),
        r"explore max_envs: .*got -3",
    ),
}


@pytest.mark.parametrize("case", list(_BAD_CALLS))
def test_bad_input_is_refused_up_front_with_a_params_error(view, tmp_path, case):
    (tmp_path / "file").write_text("")  # a file where a folder would go
    call, match = _BAD_CALLS[case]
    cooks, history = view.cooks, view.history
    with pytest.raises(ParamsError, match=match):
        call(view, tmp_path)
    assert view.cooks == cooks and view.history == history  # nothing cooked, nothing moved
    assert not (tmp_path / "x.gif").exists()


def test_select_takes_numpy_integers_as_update_does(view):
    assert view.select(np.int64(1)).env == 1 and view.selected.env == 1
    with pytest.raises(ParamsError, match=r"select\(env\): expected an env index"):
        view.select(np.float64(1.0))


# -- 6. a set Target.check refuses does not take effect -------------------------------------
class _Checked(FunctionTarget):
    """Refuses more than 10 lobes before cooking (as a course refuses max_gates)."""

    def check(self, params):
        if params.lobes > 10:
            return "lobes", f"expected at most 10 lobes, got {params.lobes}"
        return None


def test_a_set_the_target_refuses_is_taken_back_as_a_failed_cook(tmp_path):
    v = explore(_Checked(fake_tracks, FakeParams), min_interval=0.0)
    try:
        v.wait(60)
        v.update(lobes=7)
        v.wait(60)
        cooks = v.cooks
        v.update(lobes=11)  # within FakeParams' bounds, refused by the target
        v.wait(60)
        assert v.value.lobes == 7 and [h.lobes for h in v.history] == [5, 7]
        assert v.cooks == cooks and v.form.widget("lobes").value == 7
        assert "expected at most 10 lobes, got 11" in v.form.message("lobes")
        assert v.canvas.stale
        data = json.loads(v.save(tmp_path / "x.json").read_text())
        assert data["values"]["lobes"] == 7 and "'lobes': 7," in v.code()
        assert v.pin().lobes == 7
        v.update(lobes=4)  # the next good edit cooks
        v.wait(60)
        assert v.value.lobes == 4 and not v.canvas.stale and v.form.message("lobes") == ""
    finally:
        v.close()


# -- 7. a file saved for another target is refused ------------------------------------------
def test_a_file_saved_for_another_target_is_refused(tmp_path):
    path = tmp_path / "other.json"
    values = FakeParams(lobes=4).to_dict()
    path.write_text(json.dumps({"format": 1, "target": "voronoi", "values": values}))
    with pytest.raises(ParamsError, match=r"saved for the target 'fake_tracks'.*'voronoi'"):
        explore(FunctionTarget(fake_tracks, FakeParams), params=path, cook=False)
    path.write_text(json.dumps({"format": 1, "target": "", "values": values}))
    v = explore(FunctionTarget(fake_tracks, FakeParams), params=path, cook=False)
    try:
        assert v.value.lobes == 4  # no target written: not checked
        (tmp_path / "p").mkdir()
        (tmp_path / "p" / "x.json").write_text(
            json.dumps({"format": 1, "target": "voronoi", "values": values})
        )
        with pytest.raises(ParamsError, match="saved for 'voronoi'"):
            v.load_preset("x", folder=tmp_path / "p")
    finally:
        v.close()


# -- 8. result: the live result of the last good cook ---------------------------------------
def test_result_is_the_last_good_cooks_and_none_after_a_failed_one():
    calls = []

    def fn(p):
        calls.append(p)
        if p.lobes == 11:
            raise RuntimeError("boom")
        return fake_tracks(p)

    v = explore(fn, params=FakeParams, min_interval=0.0)
    try:
        v.wait(60)
        np.testing.assert_allclose(v.result["xy"], fake_tracks(FakeParams())["xy"])
        v.update(lobes=11)
        v.wait(60)
        assert "boom" in v.error and v.result is None
        v.update(lobes=6)
        v.wait(60)
        np.testing.assert_allclose(v.result["xy"], v.frame.tracks)
        np.testing.assert_allclose(v.result["xy"], fake_tracks(FakeParams(lobes=6))["xy"])
    finally:
        v.close()
    assert "rewritten" in type(v).result.__doc__ or "rewrites" in type(v).result.__doc__


# -- 9. the preset picker lists files saved elsewhere on refresh ----------------------------
def test_the_preset_picker_relists_the_folder_on_its_reload_button(view, tmp_path):
    folder = tmp_path / "looks"
    v = explore(fake_tracks, params=FakeParams, presets_folder=folder, cook=False)
    try:
        p = v.preset_picker
        assert p.names() == []
        view.save_preset("other", folder=folder)  # another view saves into the folder
        assert p.names() == []
        p.reload.click()
        assert p.names() == ["other"]
        p.dropdown.value = "other"
        assert v.value == view.value
    finally:
        v.close()


# -- 11. equal values of two views' Params classes compare equal ----------------------------
def test_two_views_of_one_generator_compare_their_values_equal(tmp_path):
    v = explore("polar", num_envs=4, num_points=64, cook=False)
    try:
        v.update(lobes=9)
        path = v.save(tmp_path / "look.json")
        w = explore("polar", params=path, cook=False)
        try:
            assert type(w.value) is not type(v.value)  # each view makes its own class
            assert w.value == v.value and hash(w.value) == hash(v.value)
            assert w.value != v.value.replace(lobes=8)
        finally:
            w.close()
    finally:
        v.close()
    assert FakeParams() != PlayParams() and FakeParams() != FakeParams().to_dict()
