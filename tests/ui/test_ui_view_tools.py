"""The explore view's history, saved values, presets, pin, select, play and record."""

from __future__ import annotations

import json

import imageio.v3 as iio
import numpy as np
import pytest
from ui_fake_target import FakeParams, fake_tracks

from procgen_nb.errors import ParamsError
from procgen_nb.params import Field, Params
from procgen_nb.ui import FunctionTarget, explore
from procgen_nb.ui.history import History, Presets


class TimedParams(Params):
    """A fake target with an epoch: epoch k draws the tracks of seed ``seed + k``."""

    lobes: int = Field(5, bounds=(3, 12))
    epoch: int = Field(0, bounds=(0, 1000))
    seed: int = Field(0, bounds=(0, 2**31 - 1))


def timed_tracks(p: TimedParams) -> dict:
    return fake_tracks(FakeParams(lobes=p.lobes, seed=p.seed + p.epoch))


@pytest.fixture
def view():
    v = explore(fake_tracks, params=FakeParams, min_interval=0.0)
    v.wait(60)
    yield v
    v.close()


def _fresh(p: FakeParams) -> np.ndarray:
    return np.asarray(fake_tracks(p)["xy"], dtype=np.float64)


def test_update_undo_redo_restore_exact_values(view):
    start = view.value
    view.update(lobes=7)
    view.update(jitter=0.123456789)  # any value the Params accept, exactly
    view.wait(60)
    assert view.value.jitter == 0.123456789 and view.form.controls["jitter"].get() == 0.123456789
    assert view.history == [
        start,
        start.replace(lobes=7),
        start.replace(lobes=7, jitter=0.123456789),
    ]
    assert view.undo() == start.replace(lobes=7)
    view.wait(60)
    assert view.value == start.replace(lobes=7)
    np.testing.assert_allclose(view.frame.tracks, _fresh(view.value))
    assert view.undo() == start and view.undo() is None and view.undo_button.disabled
    assert view.redo() == start.replace(lobes=7)
    assert view.redo().jitter == 0.123456789 and view.redo() is None
    view.undo()
    view.update(lobes=3)  # a new edit after an undo drops what lay ahead
    assert view.history[-1] == start.replace(lobes=3) and view.redo() is None
    assert view.history_index == len(view.history) - 1
    with pytest.raises(ParamsError, match="lobes: expected a value in"):
        view.update(lobes=40)  # past FakeParams' bound 12: refused, nothing changes
    assert view.value.lobes == 3


def test_history_keeps_order_and_drops_a_set_that_did_not_cook():
    h = History(FakeParams())
    a, b = FakeParams(lobes=4), FakeParams(lobes=6)
    h.push(a)
    h.push(a)  # the one in effect again: not a new entry
    h.push(b)
    assert h.items == [FakeParams(), a, b]
    h.retract(b)
    assert h.items == [FakeParams(), a] and h.index == 1
    h.retract(FakeParams())  # not the last: nothing
    assert h.items == [FakeParams(), a]


def test_save_writes_every_value_and_explore_params_opens_exactly_them(view, tmp_path):
    view.update(lobes=8, jitter=0.77, seed=12)
    path = view.save(tmp_path / "look.json")
    data = json.loads(path.read_text())
    assert data["values"] == view.value.to_dict()  # every value, changed or not
    assert set(data["values"]) == set(FakeParams.fields())
    # a function target names its Params class in the target; a generator takes the file
    # or dict alone (test_ui_explore_tracks)

    for source in (path, str(path), data, data["values"]):
        v = explore(FunctionTarget(fake_tracks, FakeParams), params=source, cook=False)
        try:
            assert v.value == view.value and v.value.to_dict() == data["values"]
        finally:
            v.close()
    with pytest.raises(ParamsError, match=r"expected names among .*got \['nope'\]"):
        explore(FunctionTarget(fake_tracks, FakeParams), params={"nope": 1}, cook=False)
    with pytest.raises(ParamsError, match="expected an existing file"):
        explore(FunctionTarget(fake_tracks, FakeParams), params=tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ParamsError, match="expected JSON written by view.save"):
        explore(FunctionTarget(fake_tracks, FakeParams), params=tmp_path / "bad.json")
    with pytest.raises(ParamsError, match="expected a file path, got the folder"):
        view.save(tmp_path)


def test_presets_are_files_in_a_folder(view, tmp_path):
    folder = tmp_path / "presets"
    view.update(lobes=9)
    view.save_preset("nine", folder)
    view.update(lobes=4, jitter=0.1)
    view.save_preset("four", folder)
    assert Presets(folder).names() == ["four", "nine"]
    assert sorted(p.name for p in folder.iterdir()) == ["four.json", "nine.json"]
    assert view.load_preset("nine", folder).lobes == 9 and view.value.jitter == 0.3
    with pytest.raises(ParamsError, match=r"expected one of \['four', 'nine'\], got 'six'"):
        view.load_preset("six", folder)
    with pytest.raises(ParamsError, match="preset name: expected letters"):
        view.save_preset("../up", folder)


def test_code_area_always_equals_code_and_the_copied_note_clears(view):
    view.code_button.copies += 1  # what the browser's click does
    view._copy_code()
    assert view.copy_note.value != ""
    for k in (6, 7, 8):
        view.form.widget("lobes").value = k
        assert view.code_area.value == view.code() and f"'lobes': {k}" in view.code_area.value
        assert view.copy_note.value == ""


def test_a_refused_value_greys_the_picture_and_counts_until_cleared(view):
    box = view.form.widget("seed")
    box.value = "3.7"
    assert view.canvas.stale and "3.7" in view.canvas.message
    assert view.form.message("seed").count("not accepted") == 1
    assert box.value == "3.7"  # as typed
    box.value = "0"  # the value in effect again: nothing to cook, the picture is current
    assert not view.canvas.stale and view.form.message("seed") == ""


def test_pin_draws_the_pinned_tracks_behind_and_counts_both(view):
    first = view.frame
    assert view.pin() == view.value and view.pinned_frame is first
    c = view.canvas
    got = np.frombuffer(c.pin_tracks, dtype="<f4").reshape(c.pin_envs, c.pin_points, 2)
    np.testing.assert_array_equal(got, np.asarray(first.tracks, dtype=np.float32))
    assert c.pin_counts == [[k, v] for k, v in first.counts.items()]
    view.update(lobes=9)
    view.wait(60)
    assert view.pinned == FakeParams() and view.frame is not first
    assert c.pin_envs == 9 and not view.unpin_button.disabled
    view.unpin()
    assert view.pinned is None and c.pin_tracks == b"" and c.pin_counts == []


def test_select_gives_the_env_and_result_is_what_is_drawn(view):
    view.update(seed=5)
    view.wait(60)
    sel = view.select(3)
    assert sel.env == 3 and view.canvas.selected == 3 and view.selected is sel
    assert sel.valid == bool(view.frame.valid[3])
    assert "index 3" in sel.code() and "'seed': 5" in sel.code()
    np.testing.assert_array_equal(np.asarray(view.result["xy"]), view.frame.tracks)
    view.canvas._on_message(view.canvas, {"type": "select", "env": 2}, [])  # a click
    assert view.selected.env == 2
    with pytest.raises(ParamsError, match=r"expected an env index in \[0, 8\], got 9"):
        view.select(9)


def test_play_cooks_each_value_in_order_and_record_writes_the_frames(tmp_path):
    v = explore(timed_tracks, params=TimedParams)
    try:
        v.wait(60)
        assert v.play_control is not None and list(v.play_control.fields) == ["epoch"]
        frames = v.play("epoch", [3, 1, 2])
        for f, epoch in zip(frames, [3, 1, 2], strict=True):
            np.testing.assert_allclose(f.tracks, timed_tracks(TimedParams(epoch=epoch))["xy"])
        assert v.value.epoch == 2 and v.history[-3:] == [TimedParams(epoch=e) for e in (3, 1, 2)]
        v.play_control.play.value = 4  # a tick of the Play control in the browser
        v.wait(60)
        assert v.value.epoch == 4
        gif = v.record("epoch", [0, 5, 9], tmp_path / "run.gif", fps=5)
        movie = iio.imread(gif, index=None)
        assert movie.shape[0] == 3  # one frame per value, each its own picture
        assert not np.array_equal(movie[0], movie[1]) and not np.array_equal(movie[1], movie[2])
        mp4 = v.record("epoch", [0, 5], tmp_path / "run.mp4")
        assert mp4.stat().st_size > 0
        for bad, match in (
            (("nope", [1]), "play\\(field\\): expected one of"),
            (("epoch", []), "expected at least one value"),
            (("epoch", [2000]), "expected a value in \\[0, 1000\\], got 2000"),
        ):
            with pytest.raises(ParamsError, match=match):
                v.play(*bad)
        with pytest.raises(ParamsError, match="expected a .gif or .mp4 file"):
            v.record("epoch", [1], tmp_path / "run.avi")
        with pytest.raises(ParamsError, match="expected a finite number > 0"):
            v.record("epoch", [1], tmp_path / "run.gif", fps=0)
    finally:
        v.close()


def test_the_preset_picker_restores_every_value_exactly(tmp_path):
    """Driven as the browser does: type a name, press save, move controls, choose the name
    in the dropdown; the values and the cook are those of a fresh cook at the preset."""
    folder = tmp_path / "looks"
    v = explore(fake_tracks, params=FakeParams, min_interval=0.0, presets_folder=folder)
    try:
        v.wait(60)
        p = v.preset_picker
        assert p.names() == [] and p.dropdown.value == ""  # no folder yet: none listed
        v.update(lobes=9, jitter=0.123456789, seed=21)
        saved = v.value
        p.name.value = "wide"
        p.save.click()  # what the browser's click does
        assert p.names() == ["wide"] and p.dropdown.value == "wide"
        assert (folder / "wide.json").is_file() and "saved as wide" in p.note.value
        data = json.loads((folder / "wide.json").read_text())
        assert data["values"] == saved.to_dict()  # every value, changed or not
        v.form.widget("lobes").value = 4  # the values move away: the dropdown goes blank
        v.update(jitter=0.5)
        v.wait(60)
        assert p.dropdown.value == "" and v.value != saved
        p.dropdown.value = "wide"  # a choice in the browser
        frame = v.wait(60)
        assert v.value == saved and v.value.jitter == 0.123456789
        assert v.history[-1] == saved  # the history records it: undo goes back
        np.testing.assert_array_equal(frame.tracks, _fresh(saved).astype(frame.tracks.dtype))
        assert "restored wide" in p.note.value
        # a preset saved from Python shows in the dropdown; a bad name is said, not written
        v.update(lobes=3)
        v.save_preset("three")
        assert p.names() == ["three", "wide"]
        p.name.value = "../up"
        p.save.click()
        assert "preset name: expected letters" in p.note.value and p.names() == ["three", "wide"]
        (folder / "broken.json").write_text("{not json")
        p.refresh()
        p.dropdown.value = "broken"  # a file that does not load: said, nothing changes
        before = v.value
        assert "expected JSON written by view.save" in p.note.value
        assert p.dropdown.value == "" and v.value == before
        assert v.load_preset("wide") == saved  # the picker's folder when none is given
    finally:
        v.close()


def test_a_click_on_an_env_the_frame_lacks_selects_nothing_other_errors_are_shown(view):
    view.select(1)
    before = view.selected
    envs = view.frame.tracks.shape[0]
    view.canvas._on_message(view.canvas, {"type": "select", "env": envs}, [])  # stale click
    assert view.selected is before and "select env" not in view.status.value

    def broken(params, env):
        raise RuntimeError("boom")

    view.target.select = broken
    try:
        view.canvas._on_message(view.canvas, {"type": "select", "env": 2}, [])
    finally:
        del view.target.select
    assert "select env 2: RuntimeError: boom" in view.status.value
    assert view.selected is before  # nothing selected, nothing raised
    view.canvas._on_message(view.canvas, {"type": "select", "env": 2}, [])
    assert view.selected.env == 2


def test_a_presets_folder_that_is_no_path_is_refused(tmp_path):
    with pytest.raises(ParamsError, match=r"presets_folder: expected a folder path .*got 5"):
        explore(fake_tracks, params=FakeParams, presets_folder=5, cook=False)
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the folder would go: saving says so
    v = explore(fake_tracks, params=FakeParams, presets_folder=blocked / "sub", cook=False)
    try:
        v.preset_picker.save_as("one")
        assert "save: expected a writable file path" in v.preset_picker.note.value
        assert v.preset_picker.names() == []
    finally:
        v.close()
