"""A graph view's history and saved values across its first cook (which finds the
kernel-level fields and makes the form again with a new Params class)."""

from __future__ import annotations

import json

import pytest

from procgen_nb.demo import build_demo_graph
from procgen_nb.errors import ParamsError
from procgen_nb.params import Field, Params
from procgen_nb.ui import explore
from procgen_nb.ui.history import History


@pytest.fixture
def view():
    v = explore(build_demo_graph(), poll_interval=0)
    v.wait(120)
    yield v
    v.close()


def test_undo_and_redo_in_a_graph_view_restore_each_set(view):
    cls = view.form.params_class
    assert "kept.gather.TYPE" in cls.fields()  # the first cook found the kernel fields
    first = view.form.value.to_dict()
    view.update(**{"keep.radius": 0.3})
    view.wait(60)
    second = view.form.value.to_dict()
    # every set in the history is an instance of the form's class (the one undo sets)
    assert [type(p) for p in view.history] == [cls, cls]
    back = view.undo()
    assert back.to_dict() == first and view.form.value.to_dict() == first
    assert view.history_index == 0
    assert view.undo_button.disabled and not view.redo_button.disabled
    view.wait(60)
    assert view.error == ""
    again = view.redo()
    assert again.to_dict() == second and view.form.value.to_dict()["keep.radius"] == 0.3
    assert view.history_index == 1
    assert not view.undo_button.disabled and view.redo_button.disabled


def test_values_pinned_before_the_first_cook_take_the_new_class():
    v = explore(build_demo_graph(), poll_interval=0, cook=False)
    try:
        v.pinned = v.form.value  # as pin() keeps them
        old = type(v.pinned)
        v.cook_now(120)
        assert type(v.pinned) is v.form.params_class is not old
        assert v.pinned.to_dict()["points.n"] == 2000
    finally:
        v.close()


def test_a_refused_undo_leaves_the_cursor_and_the_values():
    class P(Params):
        a: int = Field(1, bounds=(0, 9))

    h = History(P(a=1))
    h.push(P(a=2))
    assert h.peek(-1) == P(a=1) and h.index == 1  # peek does not move
    assert h.peek(1) is None and h.peek(-2) is None
    h.move(-1)
    assert h.index == 0 and h.can_redo()
    with pytest.raises(ParamsError, match=r"history: expected a step within \[0, 1\], got -1"):
        h.move(-1)
    h.convert(lambda p: p.replace(a=p.a * 3))
    assert h.items == [P(a=3), P(a=6)] and h.index == 0


def test_a_file_saved_from_a_graph_view_opens_a_fresh_graph(view, tmp_path):
    view.update(**{"keep.radius": 0.3, "kept.gather.TYPE": "vec2"})
    view.wait(60)
    path = view.save(tmp_path / "graph.json")
    saved = json.loads(path.read_text())["values"]
    assert "kept.gather.TYPE" in saved and saved["keep.radius"] == 0.3
    fresh = explore(build_demo_graph(), params=path, poll_interval=0)
    try:
        fresh.wait(120)
        assert fresh.error == ""
        got = {k: list(v) if isinstance(v, tuple) else v for k, v in fresh.value.to_dict().items()}
        assert got == saved
        assert [p.to_dict() for p in fresh.history] == [fresh.value.to_dict()]
        assert fresh.frame is not None
    finally:
        fresh.close()


def test_a_name_unknown_after_the_first_cook_is_still_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": 1, "values": {"keep.radius": 0.3, "nope.x": 1}}))
    with pytest.raises(
        ParamsError, match=r"expected names among \[.*'kept\.gather\.TYPE'.*got \['nope\.x'\]"
    ):
        explore(build_demo_graph(), params=path, poll_interval=0)
