"""End to end in a real browser: JupyterLab + headless Chromium run the explore notebook.

JupyterLab runs on 127.0.0.1 over a temporary root holding a clean copy of
``notebooks/06_explore.ipynb``; Debian's Chromium, driven by Playwright at 1280x800 with the
file browser open, runs all cells. Then, in the browser and in the notebook's own kernel
(a second client runs code there):

* the views are drawn on their canvases, and showing them sent no value to the kernel;
* each view fits the notebook's panel (no horizontal overflow, at most the panel's height);
* hovering an env shows its metrics; a click draws it large; Escape goes back;
* moving the graph view's ``keep.radius`` slider changes the picture and the kept count
  (the dead-slider case), against NumPy;
* the kernel-level gather TYPE offers only vec2 (what binds the vec2 points); a failed
  cook (a node's own choice making gather read f32 from the vec2 points) greys the picture
  with the message under that control; the next valid edit recovers;
* "Copy as code" copies exactly the values in effect in the kernel.

Screenshots are kept under ``artifacts/``. Every wait is bounded. Skipped, with the reason,
where Chromium, Playwright or JupyterLab is missing (``tools/install_browser.sh``); with
``CI=true`` a missing piece fails the test instead.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import lab  # noqa: E402

pytestmark = pytest.mark.browser

ROOT = lab.ROOT
NOTEBOOK = ROOT / "notebooks" / "06_explore.ipynb"
ARTIFACTS = ROOT / "artifacts"
FOLLOW_S = 60

_REASON = lab.missing()
if _REASON is not None:
    if os.environ.get("CI") == "true":
        pytest.fail(
            f"browser test: {_REASON} (CI=true: tools/install_browser.sh must install it)",
            pytrace=False,
        )
    pytest.skip(f"browser test skipped: {_REASON}", allow_module_level=True)


@pytest.fixture(scope="module")
def session():
    """JupyterLab with 06 run in Chromium at 1280x800; yields (page, kernel client)."""
    lab.warm_kernel_cache()
    ARTIFACTS.mkdir(exist_ok=True)

    def fill(root: pathlib.Path) -> None:
        lab.clean_copy(NOTEBOOK, root / NOTEBOOK.name)

    with lab.lab_server(fill) as server, lab.browser((1280, 800)) as (_ctx, page):
        try:
            lab.open_and_run(page, server, NOTEBOOK.name)
            client = lab.kernel_client(server)
        except Exception:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(ARTIFACTS / "browser_explore_failure.png"))
            raise
        try:
            yield page, client
        except Exception:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(ARTIFACTS / "browser_explore_failure.png"))
            raise
        finally:
            client.stop_channels()


def _kernel(client, expr: str):
    """Evaluates ``expr`` in the notebook's kernel; returns it through JSON."""
    return json.loads(lab.run_code(client, f"import json as _j; print(_j.dumps({expr}))"))


def _view(page, index: int):
    """View ``index``, scrolled into view once the notebook's layout settles (JupyterLab
    renders the cells above it lazily and corrects their heights after a scroll)."""
    view = page.locator(".procgen-explore").nth(index)
    box = None
    for _ in range(20):
        # its top (a view can be taller than the page: the form scrolls with it)
        view.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(150)
        now = view.bounding_box()
        if now == box:
            break
        box = now
    return view


def _seq(canvas) -> int:
    return int(canvas.get_attribute("data-seq") or 0)


def _wait_seq(page, canvas, above: int) -> None:
    page.wait_for_function(
        "([el, s]) => Number(el.dataset.seq || 0) > s",
        arg=[canvas.element_handle(), above],
        timeout=FOLLOW_S * 1000,
    )


def _count(view, label: str) -> str:
    row = view.locator(f".pc-row[data-label='{label}'] .pc-value")
    return row.inner_text().strip()


def _press(page, slider, key: str, times: int) -> None:
    slider.locator(".noUi-handle").first.focus()
    for _ in range(times):
        page.keyboard.press(key)


def test_views_are_drawn_and_showing_them_sends_nothing(session):
    page, client = session
    views = page.locator(".procgen-explore")
    assert views.count() == 3
    for i in range(3):
        canvas = _view(page, i).locator(".procgen-canvas")
        page.wait_for_function(
            "el => Number(el.dataset.seq || 0) >= 1", arg=canvas.element_handle()
        )
    page.wait_for_timeout(2000)  # what a shown slider would echo has arrived by now
    names = "{'view': view, 'course_view': course_view, 'graph_view': graph_view}"
    got = _kernel(client, f"{{k: [v.browser_values, v.cooks] for k, v in {names}.items()}}")
    assert {k: v[0] for k, v in got.items()} == {"view": 0, "course_view": 0, "graph_view": 0}
    page.wait_for_timeout(2000)
    again = _kernel(client, f"{{k: [v.browser_values, v.cooks] for k, v in {names}.items()}}")
    assert again == got  # nothing cooks after Run All unless a control moves


def test_each_view_fits_1280x800_with_the_file_browser_open(session):
    """No view is wider than the notebook; its picture (canvas, nodes, counts) is at most
    the panel's height, so it can stay in view beside the form, which scrolls with the
    page."""
    page, _ = session
    assert page.locator(".jp-FileBrowser").first.is_visible()
    panel = page.locator(".jp-NotebookPanel-notebook").first.bounding_box()
    for i in range(3):
        view = _view(page, i)
        view.screenshot(path=str(ARTIFACTS / f"browser_explore_view{i}.png"))
        box = view.bounding_box()
        assert box["x"] >= panel["x"] - 1 and box["x"] + box["width"] <= panel["x"] + panel["width"]
        picture = view.locator(".procgen-picture").first.bounding_box()
        assert picture["height"] <= panel["height"], (i, picture, panel)
        over = view.evaluate("el => el.scrollWidth - el.clientWidth")
        assert over <= 1, f"view {i} overflows by {over}px"


def _poll(client, expr: str, want, timeout: float = FOLLOW_S):
    """Evaluates ``expr`` in the kernel until it equals ``want`` (or the time is up)."""
    import time

    end = time.monotonic() + timeout
    got = _kernel(client, expr)
    while got != want and time.monotonic() < end:
        time.sleep(0.25)
        got = _kernel(client, expr)
    return got


def test_every_key_press_lands_at_30_ms_and_at_0_ms(session):
    """The issue's case: 30 ArrowRight presses on min radius, 30 ms apart and then at once
    (0 ms): the kernel ends exactly 30 steps on, and so does the readout."""
    page, client = session
    view = _view(page, 0)
    slider = view.locator(".widget-slider", has_text="min radius").first
    first = _kernel(client, "view.value.min_radius")
    try:
        for gap in (30, 0):
            start, step, d = _kernel(
                client,
                "[view.value.min_radius, view.form.widget('min_radius').step, "
                "int(view.form.widget('min_radius').readout_format[1:-1])]",
            )
            sent = _kernel(client, "view.browser_values")
            slider.locator(".noUi-handle").first.focus()
            for _ in range(30):
                page.keyboard.press("ArrowRight")
                if gap:
                    page.wait_for_timeout(gap)
            want = round(start + 30 * step, d)
            assert _poll(client, "view.value.min_radius", want) == want, gap
            # ipywidgets merges the values of presses made while the kernel is busy into
            # one message (the newest): at most 30 messages, and the value of all 30
            assert 1 <= _kernel(client, "view.browser_values") - sent <= 30
            page.wait_for_timeout(300)  # the last echo
            assert float(slider.locator(".widget-readout").inner_text()) == pytest.approx(want)
    finally:
        _kernel(client, f"view.update(min_radius={first!r}) and None")
        _kernel(client, "view.wait() and None")


def test_a_refused_text_greys_picture_and_counts_and_escape_works_from_a_slider(session):
    page, client = session
    view = _view(page, 0)
    root = view.locator(".procgen-canvas")
    box = view.locator(".procgen-control", has_text="seed").locator("input").first
    box.fill("3.7")
    box.press("Enter")
    page.wait_for_function("el => el.classList.contains('pc-stale')", arg=root.element_handle())
    side = view.locator(".pc-side").first
    assert float(side.evaluate("el => getComputedStyle(el).opacity")) < 1  # counts greyed
    assert box.input_value() == "3.7"  # never rewritten
    msgs = view.locator(".procgen-control-error, .procgen-form-error")
    assert sum(m.inner_text().count("not accepted") for m in msgs.all()) == 1  # once
    view.screenshot(path=str(ARTIFACTS / "browser_explore_refused.png"))
    box.fill("0")
    box.press("Enter")
    page.wait_for_function("el => !el.classList.contains('pc-stale')", arg=root.element_handle())
    assert _kernel(client, "view.value.seed") == 0
    # Escape wherever the focus is in the view: click an env, focus a slider, Escape
    canvas = view.locator("canvas.pc-canvas")
    page.wait_for_timeout(300)  # the picture has followed the scroll to the seed box
    b = canvas.bounding_box()
    assert 0 <= b["y"] <= 800 - 40, b  # still in view
    page.mouse.click(b["x"] + 20, b["y"] + 20)
    page.wait_for_function("el => el.dataset.zoomed === '0'", arg=root.element_handle())
    assert _poll(client, "view.selected.env if view.selected else None", 0) == 0  # a click selects
    view.locator(".widget-slider", has_text="lobes").first.locator(".noUi-handle").first.focus()
    page.keyboard.press("Escape")
    page.wait_for_function("el => el.dataset.zoomed === undefined", arg=root.element_handle())


_UNCOVERED_JS = """
async (view) => {
  // every control shown (not in a closed section), and "Copy as code"; each is scrolled
  // to 70% down the notebook's visible height (below the picture, where a person scrolls
  // it to), then the element on top at its centre is asked for: the control itself or a
  // child of it
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  let scroller = view.parentElement;
  // the notebook's scroller (an output area that has nothing to scroll is passed over)
  while (
    scroller &&
    !(/(auto|scroll)/.test(getComputedStyle(scroller).overflowY) &&
      scroller.scrollHeight > scroller.clientHeight + 1)
  ) {
    scroller = scroller.parentElement;
  }
  const items = [...view.querySelectorAll(".procgen-controls .procgen-control")];
  items.push(view.querySelector(".procgen-copy"));
  const out = [];
  for (const box of items) {
    const r0 = box.getBoundingClientRect();
    if (r0.width === 0 || r0.height === 0) continue;
    const el = box.classList.contains("procgen-control")
      ? box.querySelector("input, .widget-slider, select, .widget-toggle-buttons, button") || box
      : box;
    const s = scroller.getBoundingClientRect();
    const top = Math.max(0, s.top), bottom = Math.min(window.innerHeight, s.bottom);
    const at = el.getBoundingClientRect();
    scroller.scrollTop += at.top + at.height / 2 - (top + 0.7 * (bottom - top));
    await frame();
    await new Promise((r) => setTimeout(r, 60));
    await frame();
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const pic = view.querySelector(".procgen-picture").getBoundingClientRect();
    out.push({
      name: box.textContent.trim().slice(0, 40),
      onTop: !!hit && box.contains(hit),
      hit: hit ? hit.className.toString().slice(0, 60) : null,
      y: r.top,
      picTop: pic.top,
      picBottom: pic.bottom,
    });
  }
  return out;
}
"""


def test_at_800_px_the_picture_stays_in_view_while_the_form_scrolls(session):
    page, _ = session
    page.set_viewport_size({"width": 800, "height": 800})
    try:
        page.wait_for_timeout(800)
        view = _view(page, 0)
        canvas = view.locator("canvas.pc-canvas").first
        # the last control of the form (the batch section's epoch box), scrolled to
        last = view.locator(".procgen-control", has_text="epoch").locator("input").first
        last.scroll_into_view_if_needed()
        page.wait_for_timeout(400)
        page.screenshot(path=str(ARTIFACTS / "browser_explore_800.png"))
        c, e = canvas.bounding_box(), last.bounding_box()
        assert c["y"] >= -1 and c["y"] + c["height"] <= 800 + 1, c  # the picture in view
        assert e["y"] >= 0 and e["y"] + e["height"] <= 800, e  # and the control moved
        # the picture takes at most about 45% of the height: the form keeps the rest
        pic = view.locator(".procgen-picture").first.bounding_box()
        assert pic["height"] <= 0.5 * 800, pic
        # and no control is covered by it where a person scrolls to it
        found = view.evaluate(_UNCOVERED_JS)
        page.screenshot(path=str(ARTIFACTS / "browser_explore_800_end.png"))
        names = [f["name"] for f in found]
        assert any(n.startswith("Copy as code") for n in names), names
        assert any("epoch" in n for n in names), names
        covered = [f for f in found if not f["onTop"]]
        assert not covered, covered
    finally:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.wait_for_timeout(500)


def test_hover_shows_metrics_click_enlarges_escape_returns(session):
    page, client = session
    view = _view(page, 0)
    root = view.locator(".procgen-canvas")
    canvas = view.locator("canvas.pc-canvas")
    b = canvas.bounding_box()
    page.mouse.move(b["x"] + 20, b["y"] + 20)
    tip = view.locator(".pc-tip")
    tip.wait_for(state="visible")
    assert tip.get_attribute("data-env") == "0"
    # the metrics are measured in the kernel when the first hover asks for them
    page.wait_for_function(
        "el => el.textContent.includes('clearance')",
        arg=tip.element_handle(),
        timeout=FOLLOW_S * 1000,
    )
    text = tip.inner_text()
    assert "env 0" in text and "length" in text and "clearance" in text
    # the length shown is env 0's closed length, measured here on the kernel's frame
    xy = np.array(_kernel(client, "view.frame.tracks[0].tolist()"))
    want = np.sum(np.hypot(*(np.roll(xy, -1, axis=0) - xy).T))
    shown = float(text.split("length ", 1)[1].split()[0])
    assert shown == pytest.approx(want, rel=1e-2)
    page.mouse.click(b["x"] + 20, b["y"] + 20)
    page.wait_for_function("el => el.dataset.zoomed === '0'", arg=root.element_handle())
    view.screenshot(path=str(ARTIFACTS / "browser_explore_zoom.png"))
    page.keyboard.press("Escape")
    page.wait_for_function("el => el.dataset.zoomed === undefined", arg=root.element_handle())


def _inside(n: int, seed: int, r: float) -> int:
    pts = np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, 2)).astype(np.float32)
    return int(np.sum(np.hypot(pts[:, 0], pts[:, 1]) <= np.float32(r)))


def test_a_node_slider_moves_the_picture(session):
    """The dead-slider case: keep.radius (a node parameter) changes what is kept."""
    page, client = session
    view = _view(page, 2)
    # kernel-level values sit in collapsed sections under their node
    for section in view.locator(".procgen-kernel-section").all():
        assert not section.locator(".widget-dropdown, .widget-slider").first.is_visible()
    canvas = view.locator(".procgen-canvas")
    slider = view.locator(".widget-slider", has_text="radius").first
    before = _seq(canvas)
    _press(page, slider, "ArrowRight", 5)
    _wait_seq(page, canvas, before)
    page.wait_for_timeout(1500)  # the last press's cook
    radius = _kernel(client, "graph_view.value.to_dict()['keep.radius']")
    shown = float(slider.locator(".widget-readout").inner_text())
    assert shown == pytest.approx(radius, abs=1e-9)
    n, seed = _kernel(
        client, "[graph_view.value.to_dict()[k] for k in ('points.n', 'points.seed')]"
    )
    page.wait_for_function(
        "([el, want]) => el.textContent.trim() === want",
        arg=[
            view.locator(".pc-row[data-label='kept'] .pc-value").element_handle(),
            str(_inside(n, seed, radius)),
        ],
        timeout=FOLLOW_S * 1000,
    )


def test_a_failed_cook_is_recovered_by_the_next_valid_edit(session):
    page, client = session
    view = _view(page, 2)
    root = view.locator(".procgen-canvas")
    # the kernel-level TYPE offers only what binds the vec2 points: vec2 alone
    offered = _kernel(client, "graph_view.form.controls['kept.gather.TYPE'].field.choices")
    assert offered == ["vec2"]
    # a node's own choice (again.element = f32) still asks gather for what cannot bind
    again = view.locator(".procgen-section", has_text="again").last
    buttons = again.locator(".widget-toggle-buttons button")
    buttons.first.wait_for(state="visible")
    again.locator(".widget-toggle-buttons button", has_text="f32").first.click()
    page.wait_for_function("el => el.classList.contains('pc-stale')", arg=root.element_handle())
    msg = again.locator(".procgen-control-error").first
    page.wait_for_function(
        "el => el.textContent.includes('did not cook')", arg=msg.element_handle()
    )
    assert "element = 'f32' did not cook: expected" in msg.inner_text()
    view.screenshot(path=str(ARTIFACTS / "browser_explore_failed.png"))
    active = again.locator(".widget-toggle-buttons button.mod-active").first
    page.wait_for_function("el => el.textContent.trim() === 'vec2'", arg=active.element_handle())
    before = _seq(root)
    slider = view.locator(".widget-slider", has_text="radius").first
    _press(page, slider, "ArrowLeft", 2)
    _wait_seq(page, root, before)
    page.wait_for_function("el => !el.classList.contains('pc-stale')", arg=root.element_handle())
    assert _kernel(client, "graph_view.error") == ""


def test_copy_as_code_copies_the_values_in_effect(session):
    page, client = session
    view = _view(page, 0)
    view.locator(".procgen-copy-button").click()
    page.wait_for_function(
        "el => el.textContent.includes('copied the parameters')",
        arg=view.locator(".procgen-copy-note").element_handle(),
        timeout=FOLLOW_S * 1000,
    )
    copied = page.evaluate("navigator.clipboard.readText()")
    tree = ast.parse(copied)
    assigned = {n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)}
    own = ast.literal_eval(assigned["generator_params"])
    values = _kernel(client, "view.value.to_dict()")
    assert own == {k: values[k] for k in own}
    assert own["radius_jitter"] == 0.9 and own["min_radius"] == 0.2  # as the notebook set
    call = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "track"
    )
    kw = {k.arg: k.value for k in call.keywords}
    from procgen_nb.track_gen.config import ValidityParams

    assert ast.literal_eval(kw["validity"]) == {k: values[k] for k in ValidityParams.fields()}
    for k in ("num_envs", "num_points", "seed", "epoch"):
        assert ast.literal_eval(kw[k]) == values[k]


def test_sweep_mode_draws_the_curves_in_place_of_the_picture(session):
    """Issue 15, item 3: the sweep mode of the parameter last moved, from its button: the
    progress bar, then the curves in the picture's place; the toggle brings the picture
    back. The curves are those of the kernel's sweep result (its PNG)."""
    page, client = session
    view = _view(page, 0)
    section = view.locator(".procgen-sweep-section")
    section.locator(
        ".jupyter-widget-Collapse-header, .lm-Accordion-title, .p-Accordion-title, "
        ".widget-accordion .jupyter-widgets-accordion-title"
    ).first.click()
    panel = view.locator(".procgen-sweep")
    button = panel.locator("button", has_text="Sweep").first
    button.wait_for(state="visible")
    runs = _kernel(client, "view.sweep_panel.runs")
    field = _kernel(client, "view.sweep_panel.field.value")
    sent = _kernel(client, "view.browser_values")
    points = panel.locator(".widget-inline-hbox", has_text="points").locator("input").first
    points.fill("5")
    points.press("Enter")
    button.click()
    img = view.locator("img").first
    img.wait_for(state="visible", timeout=FOLLOW_S * 1000)
    assert _kernel(client, "view.sweep_panel.runs") == runs + 1
    assert _kernel(client, "view.sweep_panel.result.keys")[0].endswith(field)
    assert _kernel(client, "len(view.sweep_panel.result.values[0])") == 5
    assert view.locator("canvas.pc-canvas").count() == 0  # the curves in its place
    view.screenshot(path=str(ARTIFACTS / "browser_explore_sweep.png"))
    panel.locator("button", has_text="live picture").first.click()
    view.locator("canvas.pc-canvas").wait_for(state="visible")
    assert _kernel(client, "view.browser_values") == sent  # the sweep sent no control value


def test_the_racing_line_toggle_draws_it_and_the_hover_shows_the_lap_time(session):
    """Issue 25 item 3: ticking "racing line" cooks once and draws each env's racing line
    coloured by speed (its key shows); the hover names the env's lap time, the kernel's
    racing_line value; unticking takes it away without a cook."""
    page, client = session
    view = _view(page, 0)
    root = view.locator(".procgen-canvas")
    canvas = view.locator("canvas.pc-canvas")
    key = view.locator(".pc-speed-key")
    assert not key.is_visible()  # off by default
    before = _seq(root)
    plain = canvas.evaluate("c => c.toDataURL()")
    view.locator(".widget-checkbox", has_text="racing line").locator("input").click()
    _wait_seq(page, root, before)
    key.wait_for(state="visible", timeout=FOLLOW_S * 1000)
    assert _kernel(client, "view.racing_toggle.value") is True
    assert canvas.evaluate("c => c.toDataURL()") != plain  # the line is drawn
    view.screenshot(path=str(ARTIFACTS / "browser_explore_racing.png"))
    b = canvas.bounding_box()
    page.mouse.move(b["x"] + 25, b["y"] + 25)
    tip = view.locator(".pc-tip")
    tip.wait_for(state="visible")
    assert tip.get_attribute("data-env") == "0"
    lap = _kernel(client, "float(np.frombuffer(view.canvas.lap_time, '<f4')[0])")
    shown = float(tip.locator(".pc-lap").inner_text().split("lap time ", 1)[1].split()[0])
    assert shown == pytest.approx(lap, rel=1e-3)
    page.mouse.move(b["x"] - 40, b["y"] - 40)
    cooks = _kernel(client, "view.cooks")
    view.locator(".widget-checkbox", has_text="racing line").locator("input").click()
    key.wait_for(state="hidden", timeout=FOLLOW_S * 1000)
    assert _kernel(client, "view.cooks") == cooks and _kernel(
        client, "view.canvas.racing_xy == b''"
    )


def test_the_preset_dropdown_restores_every_value_from_the_browser(session):
    """A preset saved in the kernel shows in the view's dropdown; choosing it in the
    browser sets exactly its values (and the picture follows them)."""
    page, client = session
    view = _view(page, 0)
    saved = _kernel(client, "[view.save_preset('browser') and None, view.value.to_dict()][1]")
    _kernel(client, "[view.update(lobes=8, radius_jitter=0.3), view.wait() and None][1]")
    assert _kernel(client, "view.value.to_dict()") != saved
    picker = view.locator(".procgen-presets select").first
    picker.wait_for(state="visible")
    assert "browser" in picker.evaluate("s => [...s.options].map(o => o.textContent)")
    root = view.locator(".procgen-canvas")
    before = _seq(root)
    picker.select_option(label="browser")  # what choosing it with the mouse does
    _wait_seq(page, root, before)
    assert _poll(client, "view.value.to_dict()", saved) == saved
    assert _kernel(client, "view.preset_picker.dropdown.value") == "browser"
