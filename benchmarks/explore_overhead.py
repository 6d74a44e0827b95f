"""The explore view's cook against a plain ``generate()``, in one process (issue 16, item 5).

For ``polar`` at E=16, N=128 it times, interleaved in rounds (median of each):

* plain: ``TrackGenerator.generate()`` of a generator built with ``presets.track``;
* plain + read back: the same and ``result.numpy()``;
* view cook: what ``explore()`` runs for one cook on its thread, ``target.cook(params)``:
  the generator reused, ``generate()``, the read back of what the view draws and the
  ``Frame`` (counts, reasons), with the traffic and the cook report;
* view cook and send: ``ExploreView._cook``: the view cook, the canvas message (binary
  buffers), the report table and the status line;
* edit: a dynamic field moved between two values (``radius_jitter``), in the view
  (``target.cook``) and in a plain loop (``update`` then ``generate``).

Target: view cook <= 1.5x plain, three runs in a row. It prints the load average, since
the machine is shared.

Run: ``python benchmarks/explore_overhead.py`` (3 runs), ``--runs 1 --rounds 5`` for a
quick look, ``--smoke`` for a test (1 run, few rounds, no verdict).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

TARGET = 1.5


def _median_us(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def run_once(rounds: int, reps: int, envs: int = 16, points: int = 128) -> dict[str, float]:
    """Times each case ``rounds`` times ``reps`` calls, interleaved; returns medians (us)."""
    from procgen_nb.track_gen import presets
    from procgen_nb.ui import explore

    gen = presets.track(generator="polar", num_envs=envs, num_points=points)
    gen.generate()
    view = explore("polar", num_envs=envs, num_points=points)
    try:
        view.wait()
        target, params = view.target, view.form.value
        target.cook(params)
        jit = params.radius_jitter
        other = params.replace(radius_jitter=round(jit * 0.5, 4))
        state = {"i": 0}

        def view_edit() -> None:
            state["i"] ^= 1
            target.cook(other if state["i"] else params)

        def plain_edit() -> None:
            state["i"] ^= 1
            gen.update(
                generator_params={"radius_jitter": other.radius_jitter if state["i"] else jit}
            )
            gen.generate()

        cases = {
            "plain generate()": gen.generate,
            "plain generate() + numpy()": lambda: gen.generate().numpy(),
            "view cook (target.cook)": lambda: target.cook(params),
            "view cook and send (_cook)": lambda: view._cook(params),
            "plain edit (update + generate)": plain_edit,
            "view edit (target.cook)": view_edit,
        }
        got: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(rounds):
            for k, fn in cases.items():
                got[k].append(_median_us(fn, reps))
        return {k: statistics.median(v) for k, v in got.items()}
    finally:
        view.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs (the target must hold in each)")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds per run")
    ap.add_argument("--reps", type=int, default=40, help="calls per case per round")
    ap.add_argument("--smoke", action="store_true", help="1 run, 2 rounds of 5 calls")
    args = ap.parse_args(argv)
    if args.smoke:
        args.runs, args.rounds, args.reps = 1, 2, 5
    met = 0
    for run in range(args.runs):
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        m = run_once(args.rounds, args.reps)
        base = m["plain generate()"]
        print(f"\nrun {run + 1} (E=16, N=128, polar; load average {load:.2f}), median us:")
        for k, v in m.items():
            ref = m["plain edit (update + generate)"] if "edit" in k else base
            print(f"  {k:34s} {v:8.1f}   {v / ref:5.2f}x")
        ratio = m["view cook (target.cook)"] / base
        ok = ratio <= TARGET
        met += ok
        cook, send = m["view cook (target.cook)"], m["view cook and send (_cook)"]
        print(
            f"  the view's own work: cook {cook - base:.1f} us over plain generate() "
            f"({cook - m['plain generate() + numpy()']:+.1f} us against generate() + numpy()), "
            f"send {send - cook:.1f} us"
        )
        if not args.smoke:
            print(
                f"  view cook / plain generate() = {ratio:.2f}x: "
                f"{'meets' if ok else 'misses'} the target <= {TARGET}x"
            )
    if not args.smoke:
        print(f"\ntarget met in {met} of {args.runs} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
