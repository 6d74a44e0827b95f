"""Issue 21, item 7: tests that fail five one-token changes the rest of the suite passed.

Each test names the change it kills: the real ``load`` mode ``"t"`` -> ``"bt"``
(lua/_sandbox.py), ``check_capacity``'s ``n > bound`` -> ``>=`` (counts.py), ``plot_gates``
drawing through the order permutation instead of its inverse (plot.py), the ``truncated``
flag's ``>`` -> ``>=`` (track_gen/ops/_resample_kernels.py) and the late-echo tolerance
``step / 2`` -> ``step * 2`` (ui/_controls.py)."""

from __future__ import annotations

import lupa.lua54 as lupa
import numpy as np
import pytest
import warp as wp

from procgen_nb.errors import CapacityError, LuaSandboxError
from procgen_nb.lua import LuaState


def test_load_through_a_reader_refuses_bytecode():
    # kills load mode "t" -> "bt": a reader function handing over a precompiled chunk
    dumped = lupa.LuaRuntime(encoding=None).eval("string.dump(function() return 'escaped' end)")
    assert dumped[:1] == b"\x1b"
    lua = LuaState()
    src = (
        "function(bc) local done = false "
        "local f, err = load(function() if done then return nil end done = true return bc end) "
        "if f then return f() end return err end"
    )
    with pytest.raises(LuaSandboxError, match="precompiled"):
        lua.call(src, [dumped])
    # the same chunk as a string is refused too
    with pytest.raises(LuaSandboxError, match="precompiled"):
        lua.call("function(bc) return load(bc) end", [dumped])


def test_a_count_equal_to_its_capacity_passes():
    # kills check_capacity's n > bound -> n >= bound
    from procgen_nb.columns import LiveCount
    from procgen_nb.counts import check_capacity

    def word(n):  # a live count word holding n, as a kernel's appended output leaves it
        return LiveCount(wp.array(np.array([n], np.uint32), dtype=wp.uint32, device="cpu"), 7)

    assert check_capacity(word(7), 7, node="n") == 7
    assert check_capacity(word(7), node="n") == 7  # the bound the count carries
    with pytest.raises(CapacityError, match="got count 8 over capacity 7"):
        check_capacity(word(8), 7, node="n")


def test_plot_gates_draws_through_the_inverse_of_a_non_involutive_order():
    # kills drawing through `order` instead of argsort(order): [1, 2, 0] is its own
    # inverse's inverse only, not its own (the only order tested before was an involution)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from procgen_nb import plot

    gates = np.array([[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]])
    order = np.array([[1, 2, 0]])  # slot s is visited at place order[s]
    assert not np.array_equal(order[0][order[0]], np.arange(3))  # not an involution
    fig, ax = plt.subplots()
    try:
        layout = plot._layout(gates, [0], None)
        plot.plot_gates(gates, [3], ax=ax, layout=layout, order=order, numbers=True)
        # the brute-force visiting sequence: for each place k, the slot whose order is k
        visit = [next(s for s in range(3) if order[0, s] == k) for k in range(3)]
        assert visit == [2, 0, 1]
        dots = next(ln for ln in ax.lines if ln.get_marker() == "o")
        np.testing.assert_allclose(dots.get_xydata(), layout.place(0, gates[0, visit]))
        start = next(ln for ln in ax.lines if ln.get_marker() == "s")
        np.testing.assert_allclose(start.get_xydata()[0], layout.place(0, gates[0, 2]))
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("max_points", "truncated"), [(8, 0), (7, 1), (9, 0)])
def test_truncated_only_when_the_loop_needs_more_points_than_max(max_points, truncated):
    # kills the truncated flag's want > max_points -> >=: a unit square (length 4) at
    # spacing 0.5 wants exactly 8 points
    from procgen_nb.track_gen import ops
    from procgen_nb.track_gen.exec import LaunchContext

    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float32)
    src = wp.array(square, dtype=wp.vec2, device="cpu")
    dst = wp.zeros(max_points, dtype=wp.vec2, device="cpu")
    count = wp.zeros(1, dtype=wp.int32, device="cpu")
    trunc = wp.zeros(1, dtype=wp.int32, device="cpu")
    ctx = LaunchContext("cpu")
    ops.resample_constant_spacing(ctx, src, 1, 4, 0.5, dst, max_points, count, trunc)
    assert int(count.numpy()[0]) == min(8, max_points)
    assert int(trunc.numpy()[0]) == truncated


def test_a_value_more_than_half_a_step_from_an_earlier_one_is_an_edit():
    # kills the late-echo tolerance step / 2 -> step * 2: the kernel showed 0.3 then 1.0;
    # the browser sends 0.3 + 0.75 step, a value the kernel never showed: an edit
    from procgen_nb.params import Field, params_class
    from procgen_nb.ui import params_form

    cls = params_class("G", {"x": Field(0.6, bounds=(0.2, 1.2))}, "g")
    # a slider that reports while dragged: only it sends back what it is shown
    form = params_form(cls, continuous_update=True)
    seen = []
    form.observe(lambda c: seen.append(c["new"].x), names="value")
    w = form.widget("x")
    w.value = 0.3
    w.value = 1.0
    step = w.step
    sent = 0.3 + 0.75 * step
    with w._lock_property(value=sent):
        w.value = sent
    assert len(seen) == 3 and abs(seen[-1] - sent) <= step, (seen, step)
    assert form.value.x != 1.0
    # a hair from 0.3 (under half a step) is still the late echo it was
    w.value = 0.5
    w.value = 1.0
    n = len(seen)
    echo = 0.5 + 0.25 * step
    with w._lock_property(value=echo):
        w.value = echo
    assert len(seen) == n and form.value.x == 1.0
