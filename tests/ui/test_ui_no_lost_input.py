"""No lost input: key presses at key-repeat speed, the kernel answering late.

The browser side is ``browser_model.Link`` (the ipywidgets front end's echo rules); the
kernel side is the real ``ParamsForm``. Reference: a person pressing ArrowRight 30 times
on a slider at ``v0`` ends at ``v0 + 30 * step`` (the slider's grid, computed as the
browser computes it, in float64), and the kernel sees each of the 30 values in order.
"""

from __future__ import annotations

import ipywidgets as widgets
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb.params import Field, params_class
from procgen_nb.ui import params_form
from procgen_nb.ui._controls import FieldControl
from tests.ui.browser_model import Link

PRESSES = 30


def _form():
    cls = params_class(
        "G", {"min_radius": Field(0.2, bounds=(0.05, 1.0), soft=(0.05, 0.5), unit="m")}, "g"
    )
    form = params_form(cls)
    seen: list[float] = []
    form.observe(lambda c: seen.append(c["new"].min_radius), names="value")
    return form, form.widget("min_radius"), seen


def _right(w, value: float) -> float:
    """ArrowRight as noUiSlider does it: the next point of the grid min + k * step."""
    k = round((value - w.min) / w.step) + 1
    return min(w.max, w.min + k * w.step)


def _press_all(schedule: list[int]) -> tuple:
    """Presses ArrowRight once per entry of ``schedule``; after each press, that many
    messages (kernel first, then browser) get through; then everything arrives."""
    form, w, seen = _form()
    link = Link(w)
    for n in schedule:
        link.edit(_right(w, link.value))
        for _ in range(n):
            if link.to_kernel:
                link.kernel_receives()
            if link.to_browser:
                link.browser_receives()
    link.settle()
    return form, w, seen, link


def _expected(w, start: float, presses: int) -> list[float]:
    k0 = round((start - w.min) / w.step)
    d = int(w.readout_format[1:-1])
    return [round(w.min + (k0 + i) * w.step, d) for i in range(1, presses + 1)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=PRESSES, max_size=PRESSES))
def test_every_press_lands_whatever_the_kernel_latency(schedule):
    form, w, seen, link = _press_all(schedule)
    want = _expected(w, 0.2, PRESSES)
    assert seen == want  # every press counted, in order
    assert form.value.min_radius == want[-1]
    assert abs(link.value - want[-1]) < w.step / 2  # the browser ends where it was pressed
    assert form.browser_values == PRESSES


def test_thirty_presses_at_0_ms_and_at_30_ms():
    """0 ms: every press is sent before the kernel answers any; 30 ms: the kernel (a few
    ms per message) answers each press before the next."""
    for schedule in ([0] * PRESSES, [1] * PRESSES, [2, 0] * (PRESSES // 2)):
        form, w, seen, link = _press_all(schedule)
        assert seen == _expected(w, 0.2, PRESSES), schedule
        assert abs(link.value - seen[-1]) < w.step / 2


def test_the_reference_catches_a_kernel_that_writes_the_rounded_value_back(monkeypatch):
    """The fault the browser found (3-9 of 30 presses lost at key-repeat speed): a kernel
    that shows each rounded edit again (writes it to the widget) overwrites the press the
    browser made meanwhile. The same schedule with that write-back loses presses."""
    monkeypatch.setattr(FieldControl, "shows", lambda self, v: self.shown() == v)
    form, w, seen, link = _press_all([0, 2] * (PRESSES // 2))
    assert len(seen) < PRESSES or seen != _expected(w, 0.2, PRESSES)


def test_a_press_back_onto_a_value_python_set_is_an_edit():
    """Python sets 0.3, a person presses ArrowLeft then ArrowRight at once: both land (the
    late-echo rule is for sliders that report while dragged only)."""
    form, w, seen = _form()
    form.value = {"min_radius": 0.3}
    link = Link(w)
    link.value = w.value
    link.edit(_right(w, 0.3) - 2 * w.step)  # 0.299
    link.edit(_right(w, link.value))  # back to 0.3
    link.settle()
    assert seen == [0.3, 0.299, 0.3] and form.value.min_radius == 0.3


def test_typed_text_is_never_rewritten_and_the_next_edit_lands():
    cls = params_class("G", {"seed": Field(5, bounds=(0, 2**31 - 1))}, "g")
    form = params_form(cls)
    box = form.widget("seed")
    assert isinstance(box, widgets.Text)
    link = Link(box)
    for typed in ("3.7", "1e3", "-1"):
        link.edit(typed)
        link.settle()
        assert link.value == typed and box.value == typed and form.value.seed == 5
        assert form.message("seed").count("is not accepted") == 1
    link.edit("37")
    link.edit("42")  # typed before the kernel answered
    link.settle()
    assert form.value.seed == 42 and link.value == "42" and form.message("seed") == ""
