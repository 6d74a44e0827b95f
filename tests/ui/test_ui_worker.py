"""CookLoop: the newest request wins, cooks are throttled, the last value always cooks."""

from __future__ import annotations

import threading
import time

import pytest

from procgen_nb.ui import CookLoop


def test_request_during_a_cook_replaces_the_queued_one():
    started = threading.Event()
    release = threading.Event()
    done = []

    def work(item):
        started.set()
        if item == 0:
            assert release.wait(10)
        done.append(item)

    loop = CookLoop(work, min_interval=0.0)
    try:
        loop.request(0)
        assert started.wait(10)
        for k in range(1, 6):
            loop.request(k)
        assert not loop.idle
        release.set()
        assert loop.wait(10)
        assert done == [0, 5]
        assert loop.runs == 2
    finally:
        loop.close()


def test_a_drag_cooks_a_few_times_a_second_and_once_at_its_end():
    done = []
    loop = CookLoop(lambda item: done.append((item, time.monotonic())), min_interval=0.2)
    try:
        t0 = time.monotonic()
        k = 0
        while time.monotonic() - t0 < 1.0:  # a drag: 100 values a second for one second
            loop.request(k)
            k += 1
            time.sleep(0.01)
        assert loop.wait(10)
        items = [i for i, _ in done]
        assert items[-1] == k - 1  # the release value cooked
        assert 2 <= len(items) <= 8  # about 1 / min_interval per second, not 100
        starts = [t for _, t in done]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert min(gaps) >= 0.19
        assert items == sorted(items)
    finally:
        loop.close()


def test_an_error_is_kept_and_the_loop_goes_on():
    def work(item):
        if item == "bad":
            raise ValueError("nope")

    loop = CookLoop(work, min_interval=0.0)
    try:
        loop.request("bad")
        assert loop.wait(10)
        assert isinstance(loop.last_error, ValueError)
        loop.request("good")
        assert loop.wait(10)
        assert loop.last_error is None and loop.runs == 2
    finally:
        loop.close()


def test_wait_times_out_and_close_refuses_requests():
    gate = threading.Event()
    loop = CookLoop(lambda item: gate.wait(10), min_interval=0.0)
    loop.request(1)
    assert loop.wait(0.05) is False
    gate.set()
    assert loop.wait(10)
    loop.close()
    with pytest.raises(RuntimeError, match="expected an open loop"):
        loop.request(2)
