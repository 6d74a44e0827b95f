"""explore() polls a graph's cpu.read digests and cooks again when one moves."""

from __future__ import annotations

import threading
import time

import pytest

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.demo import build_demo_graph
from procgen_nb.errors import ParamsError
from procgen_nb.ui import explore
from procgen_nb.ui.poll import POLL_INTERVAL, DigestPoller


def _until(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


def test_a_poll_calls_back_only_when_something_moved_and_the_view_is_shown():
    answers = [[], ["reader"], []]
    got = []
    p = DigestPoller(lambda: answers.pop(0), got.append, interval=60)
    assert p.poll() == [] and got == []
    p.show(False)
    assert p.poll() == [] and p.polls == 1  # hidden: the digests are not asked
    p.show(True)
    assert p.poll() == ["reader"] and got == [["reader"]] and p.moves == 1
    p.stop()
    assert p.poll() == [] and p.polls == 2 and not p.running
    with pytest.raises(ValueError, match="expected seconds > 0, got 0"):
        DigestPoller(list, print, interval=0)


def test_the_poll_thread_keeps_its_interval_sleeps_while_hidden_and_stops():
    asked = []
    p = DigestPoller(lambda: asked.append(time.monotonic()) or [], print, interval=0.02)
    p.start()
    assert p.running and _until(lambda: len(asked) >= 3)
    p.show(False)
    time.sleep(0.05)  # a poll under way finishes
    n = len(asked)
    time.sleep(0.15)
    assert len(asked) == n  # hidden: no polls (about 7 intervals passed)
    p.show(True)  # shown again: asked at once
    assert _until(lambda: len(asked) > n, timeout=2.0)
    p.stop()
    assert not p.running
    n = len(asked)
    time.sleep(0.1)
    assert len(asked) == n
    gaps = [b - a for a, b in zip(asked, asked[1:], strict=False)]
    assert min(gaps[:2]) >= 0.015  # one poll per interval, not a busy loop


@pg.node
def reader():
    return ops.cpu.read(fn="function() return world_n end", digest="function() return world_v end")[
        "values"
    ][0]


def _live_graph():
    g = pg.Graph("poll")
    g.add("reader", reader)
    lua = g._lua_state()
    lua.env["world_n"], lua.env["world_v"] = 3, 1
    return g, lua


def test_explore_recooks_a_graph_when_a_digest_moves_and_not_while_hidden():
    """Seed (cpu.read): "the graph's live digest folds it in, so a Generator cooks the graph
    again when that state moves"; the view polls it (issue 14, item 7)."""
    g, lua = _live_graph()
    v = explore(g, poll_interval=3600)  # the thread sleeps: the test drives the ticks
    try:
        assert v.wait(60).counts["reader"] == 3
        poller = v.poller
        assert poller is not None and poller.running and poller.interval == 3600
        cooks = v.cooks
        assert poller.poll() == [] and v.cooks == cooks  # nothing moved: no cook
        lua.env["world_n"], lua.env["world_v"] = 4, 2
        # the canvas reports the picture hidden: the digests are not asked
        v.canvas._on_message(v.canvas, {"type": "visibility", "visible": False}, [])
        assert not poller.visible and poller.poll() == [] and v.cooks == cooks
        v.canvas._on_message(v.canvas, {"type": "visibility", "visible": True}, [])
        assert poller.poll() == ["reader"]
        assert v.wait(60).counts["reader"] == 4 and v.cooks == cooks + 1
        assert poller.poll() == []  # cooked: the digest answers what it answered then
    finally:
        v.close()
    assert not poller.running and v.poller is poller


def test_explore_polls_on_its_own_at_the_interval():
    g, lua = _live_graph()
    v = explore(g, poll_interval=0.02)
    try:
        assert v.wait(60).counts["reader"] == 3
        lua.env["world_n"], lua.env["world_v"] = 5, 9
        assert _until(lambda: v.frame.counts.get("reader") == 5, timeout=20)
    finally:
        v.close()
    assert not any(t.name == "procgen-nb-poll" and t.is_alive() for t in threading.enumerate())


def test_no_polling_without_digests_or_when_turned_off():
    assert POLL_INTERVAL == 0.5
    v = explore(build_demo_graph())
    w = None
    try:
        v.wait(60)
        assert v.poller is None  # no cpu.read digest in the demo graph
        g, _ = _live_graph()
        w = explore(g, poll_interval=0)
        w.wait(60)
        assert w.poller is None
    finally:
        v.close()
        if w is not None:
            w.close()


@pytest.mark.parametrize("bad", [-1, -0.5, float("nan"), float("inf"), "0.5", True, [0.5]])
def test_a_bad_poll_interval_is_refused_naming_it(bad):
    with pytest.raises(ParamsError) as err:
        explore(build_demo_graph(), poll_interval=bad, cook=False)
    msg = str(err.value)
    assert "explore poll_interval" in msg and "expected seconds > 0" in msg
    assert "0 or None: no polling" in msg and f"got {bad!r}" in msg
    with pytest.raises(ParamsError, match=r"DigestPoller interval: expected seconds > 0, got"):
        DigestPoller(list, print, interval=bad)


def test_a_poll_interval_of_none_or_zero_turns_polling_off():
    for off in (None, 0, 0.0):
        v = explore(build_demo_graph(), poll_interval=off, cook=False)
        try:
            assert v.poll_interval == 0.0 and v.poller is None
        finally:
            v.close()
