"""Slider to picture in the browser: JupyterLab + headless Chromium, the explore view.

A notebook ``explore("polar", num_envs=E, num_points=N)`` runs in JupyterLab; Chromium
(Playwright, Debian's binary) focuses the ``radius jitter`` slider and presses an arrow key
``--repeats`` times (alternating right and left, one step each: every press is a new value
and a new cook). For each press it records, on one clock (both processes run on this
machine; ms since the epoch):

* key: the keydown, seen by a capture listener in the page;
* edited / started / cooked / sent: when the kernel got the slider's new value, the cook
  thread started, the cook (the target's, read back included) ended, and the frame was
  sent (``TrackCanvas.timing`` and ``sent_ms``);
* recv / drawn / painted: when the browser got the message, finished drawing it on the
  canvas, and the next animation frame after that (the picture on screen).

It prints the median and p90 of key to painted, and the split: the slider's message to the
kernel, the queue, the cook, metrics and sending, transfer to the browser, draw. Targets (reported, not asserted):
median <= 100 ms and p90 <= 150 ms for E=16, N=128; median <= 200 ms for E=64, N=256.

Run: ``python benchmarks/browser_latency.py`` (both sizes), ``--smoke`` (tiny, a few
presses: run by tests/browser), ``--sizes 16x128`` to choose.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "browser"))

import lab  # noqa: E402  (tests/browser/lab.py: the JupyterLab and Chromium helpers)

KEY_LISTENER = """() => {
    if (window.__procgenKeys) return;
    window.__procgenKeys = [];
    document.addEventListener('keydown', () => {
        window.__procgenKeys.push(performance.timeOrigin + performance.now());
    }, true);
}"""


def _notebook(sizes: list[tuple[int, int]]) -> list[str]:
    cells = ["from procgen_nb.ui import explore\nviews = {}"]
    for e, n in sizes:
        cells.append(
            f"views[{e}, {n}] = explore('polar', num_envs={e}, num_points={n})\nviews[{e}, {n}]"
        )
    return cells


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def measure(page, index: int, repeats: int, timeout_s: float = 30.0) -> list[dict]:
    """Presses the arrow keys on view ``index``'s radius-jitter slider; returns one record
    per press (key, sent, cook, recv, drawn, painted, draw, in ms)."""
    view = page.locator(".procgen-explore").nth(index)
    view.scroll_into_view_if_needed()
    canvas = view.locator(".procgen-canvas")
    slider = view.locator(".widget-slider", has_text="radius jitter").first
    handle = slider.locator(".noUi-handle").first
    page.wait_for_function("el => Number(el.dataset.seq || 0) >= 1", arg=canvas.element_handle())
    page.evaluate(KEY_LISTENER)
    page.wait_for_timeout(2000)  # the view settles (its first cook's status and report)
    handle.focus()
    out = []
    for k in range(repeats):
        seq = int(canvas.get_attribute("data-seq"))
        keys_before = page.evaluate("window.__procgenKeys.length")
        page.keyboard.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
        try:
            page.wait_for_function(
                "([el, s]) => Number(el.dataset.seq) > s",
                arg=[canvas.element_handle(), seq],
                timeout=timeout_s * 1000,
            )
        except Exception:
            readout = slider.locator(".widget-readout").inner_text()
            active = page.evaluate("document.activeElement.className")
            print(f"press {k}: no new picture (seq {seq}, readout {readout}, focus {active})")
            raise
        page.wait_for_timeout(60)  # let the animation frame after the draw run
        key = page.evaluate(f"window.__procgenKeys[{keys_before}]")
        rec = canvas.evaluate(
            "(el, s) => (el.__procgenDraws || []).filter(d => d.seq > s && d.painted)"
            ".sort((a, b) => a.seq - b.seq).slice(-1)[0]",
            seq,
        )
        if rec is None or key is None:
            continue
        rec["key"] = key
        out.append(rec)
        page.wait_for_timeout(150)  # one press at a time: each cook starts from idle
    return out


def report(name: str, recs: list[dict]) -> dict[str, float]:
    """Prints the latency and its split; returns the medians."""
    total = [r["painted"] - r["key"] for r in recs]
    split = {
        "key to picture": total,
        "browser to kernel (slider message)": [r["edited"] - r["key"] for r in recs],
        "queued (cook thread wakes)": [r["started"] - r["edited"] for r in recs],
        "cook (target.cook, read back included)": [r["cooked"] - r["started"] for r in recs],
        "frame to message (kernel)": [r["sent"] - r["cooked"] for r in recs],
        "send and transfer to the browser": [r["recv"] - r["sent"] for r in recs],
        "draw (canvas)": [r["drawn"] - r["recv"] for r in recs],
        "to the next frame": [r["painted"] - r["drawn"] for r in recs],
    }
    print(f"\n{name}: {len(recs)} presses")
    print(f"{'':42s} {'median':>8s} {'p90':>8s}   ms")
    for label, vals in split.items():
        print(f"{label:42s} {statistics.median(vals):8.1f} {_pct(vals, 0.9):8.1f}")
    return {
        "median": statistics.median(total),
        "p90": _pct(total, 0.9),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="E=4, N=32, 3 presses")
    ap.add_argument("--sizes", nargs="*", default=None, help="ExN sizes (16x128 64x256)")
    ap.add_argument("--repeats", type=int, default=30, help="presses per size")
    args = ap.parse_args(argv)
    if args.smoke:
        sizes, repeats = [(4, 32)], 3
    else:
        given = args.sizes or ["16x128", "64x256"]
        sizes = [tuple(int(v) for v in s.lower().split("x")) for s in given]
        repeats = args.repeats
    reason = lab.missing()
    if reason is not None:
        print(f"browser_latency: skipped: {reason}")
        return 0
    lab.warm_kernel_cache()
    targets = {(16, 128): (100.0, 150.0), (64, 256): (200.0, None)}

    def fill(root: pathlib.Path) -> None:
        lab.write_notebook(root / "latency.ipynb", _notebook(sizes))

    t0 = time.perf_counter()
    with lab.lab_server(fill) as base, lab.browser((1280, 800)) as (_ctx, page):
        lab.open_and_run(page, base, "latency.ipynb")
        for i, (e, n) in enumerate(sizes):
            recs = measure(page, i, repeats)
            if not recs:
                print(f"E={e}, N={n}: no press was measured")
                return 1
            got = report(f"E={e}, N={n}", recs)
            med, p90 = targets.get((e, n), (None, None))
            if med is not None:
                verdict = "meets" if got["median"] <= med else "misses"
                line = f"target median <= {med:.0f} ms: {verdict} ({got['median']:.0f} ms)"
                if p90 is not None:
                    verdict = "meets" if got["p90"] <= p90 else "misses"
                    line += f"; p90 <= {p90:.0f} ms: {verdict} ({got['p90']:.0f} ms)"
                print(line)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
