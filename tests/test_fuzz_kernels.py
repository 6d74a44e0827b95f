"""Fuzz every kernel of the library (kernels/*) with hypothesis, in child processes.

Each example draws bind lengths, a domain (a number or a live count whose word may lie
past its capacity, or past 2**31), capacities and index values from the whole i32 range,
runs ``ops.device.kernel`` and either compares every slot of every output with a NumPy
(or plain Python) reference written from the kernel's documented contract, or, when one
input is drawn shorter than the domain, requires the BindingError naming it.

The examples run in a child process per group of kernels (``python -X faulthandler
tests/test_fuzz_kernels.py <group>``): a crash (a read outside a buffer) kills the child,
not pytest, and fails the test with the child's traceback. ``PROCGEN_FUZZ_EXAMPLES``
scales the examples per kernel (default 150); ``PROCGEN_FUZZ_RANDOM=1`` draws new
examples each run instead of the derandomized ones.

Runs on the CPU, where a dispatch runs slot by slot in order (the references follow that
order for the kernels whose result depends on it: compact, hash_gather, hash_hook).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

GROUPS = {
    "plain": ["gather", "compact", "scan", "scatter", "inside", "reduce"],
    "pointers": ["jump", "loops", "loops_cut", "loops_place", "edges_runs"],
    "tables": ["expand", "hash_gather", "hash_hook", "walk"],
    "intersect": ["intersect_pairs", "intersect_cuts", "intersect_unify", "intersect_retri"],
}
LIBRARY = sorted(p.parent.name for p in (Path(__file__).parents[1] / "kernels").glob("*/*.yaml"))


def test_every_kernel_of_the_library_is_fuzzed():
    assert sorted(k for g in GROUPS.values() for k in g) == LIBRARY


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_fuzz_kernels_in_a_child_process(group):
    env = dict(os.environ)
    env.setdefault("PROCGEN_FUZZ_EXAMPLES", "150")
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", __file__, group],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=Path(__file__).parents[1],
    )
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, f"fuzz child {group!r} exited with {proc.returncode}:\n{tail}"
    for kernel in GROUPS[group]:
        # every kernel ran examples compared with its reference and examples refused
        line = next(s for s in proc.stdout.splitlines() if s.startswith(f"{kernel}:"))
        ran, refused = (int(x.split("=")[1]) for x in line.split()[1:3])
        assert ran > 0, line
        assert refused > 0 or kernel == "walk", line  # walk's read bindings: pos only


# ======================================================================================
# the child: references and strategies (imported only when run as a script)
# ======================================================================================

I32 = 2**31


def i32(x: int) -> int:
    """Wraps an integer to i32 as the device word does."""
    return (int(x) + I32) % (2 * I32) - I32


def _child(group: str) -> None:  # noqa: C901 - one closure per kernel keeps them together
    import warp as wp
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from procgen_nb import asset, ops
    from procgen_nb.columns import Column
    from procgen_nb.errors import BindingError

    examples = int(os.environ.get("PROCGEN_FUZZ_EXAMPLES", "150"))
    derandomize = os.environ.get("PROCGEN_FUZZ_RANDOM", "") != "1"
    stats: dict[str, list[int]] = {}

    def col(values, dtype) -> Column:
        np_dtype = {wp.int32: np.int32, wp.uint32: np.uint32, wp.float32: np.float32}.get(dtype)
        arr = np.asarray(values, np_dtype) if np_dtype else np.asarray(values, np.float32)
        return Column(wp.array(arr, dtype=dtype, device="cpu"))

    def wide(lo: int, hi: int):
        """Small values near the range that matters, and any i32."""
        return st.one_of(st.integers(lo, hi), st.integers(-I32, I32 - 1))

    def ints(d, n: int, lo: int, hi: int) -> list[int]:
        return d.draw(st.lists(wide(lo, hi), min_size=n, max_size=n))

    raw_counts: list[int | None] = [None]

    def domain(d, n: int):
        """Returns (domain, live): live is the count word clamped to the capacity (the
        seed: min(domain_count, zero_n()) with the word read as u32; the word stays in
        ``raw_counts[0]``, None over a plain number)."""
        if d.draw(st.booleans()):
            raw_counts[0] = None
            return n, n
        count = d.draw(st.one_of(st.integers(0, n + 3), st.integers(0, 2**32 - 1)))
        raw_counts[0] = count
        return {"count": col([count], wp.uint32), "capacity": n}, min(count, n)

    def lengths(d, n: int, names: list[str]) -> tuple[dict[str, int], str | None]:
        """A length per domain-sized binding; at most one drawn shorter than the domain."""
        short = d.draw(st.sampled_from([None, None, None, *names])) if n > 0 else None
        out = {}
        for name in names:
            if name == short:
                out[name] = d.draw(st.integers(0, n - 1))
            else:
                out[name] = n + d.draw(st.integers(0, 3))
        return out, short

    def launch(kernel, spec, bind, dom, n, short, lens, uniforms=None):
        """Runs the kernel; returns its outputs as NumPy arrays, or None after a refusal."""
        stat = stats.setdefault(kernel, [0, 0])
        try:
            out = ops.device.kernel(
                kernel=asset.resolve(f"procgen/{kernel}"),
                specialize=spec,
                bind=bind,
                domain=dom,
                uniforms=uniforms,
            )["columns"]
        except BindingError as e:
            assert short is not None, f"refused with no short input: {e}"
            what = (
                f"the domain of {n}"
                if isinstance(dom, int)
                else f"the capacity {n} of the live-count domain"
            )
            assert str(e) == (
                f"procgen/{kernel}: binding {short!r}: expected a Column of at least {n} "
                f"elements ({what}), got one of {lens[short]}"
            ), str(e)
            stat[1] += 1
            return None
        assert short is None, f"{kernel}: {short} of {lens[short]} < {n} was not refused"
        stat[0] += 1
        wp.synchronize()
        return {k: (v.data.numpy().copy() if isinstance(v, Column) else v) for k, v in out.items()}

    def count_of(out, name) -> int:
        return int(out[f"{name}_count"].words.numpy()[0])

    # -- the kernels ---------------------------------------------------------------------
    def gather(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["idx"])
        src = d.draw(st.lists(st.integers(-50, 50), max_size=30))
        idx = ints(d, lens["idx"], -3, len(src) + 3)
        t = d.draw(st.sampled_from(["f32", "i32"]))
        dtype = wp.float32 if t == "f32" else wp.int32
        out = launch(
            "gather",
            {"TYPE": t},
            {"src": col(src, dtype), "idx": col(idx, wp.int32)},
            dom,
            n,
            short,
            lens,
        )
        if out is None:
            return
        want = [src[idx[i]] if i < live and 0 <= idx[i] < len(src) else 0 for i in range(n)]
        assert out["dst"].tolist() == want

    def compact(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["flags"])
        flags = ints(d, lens["flags"], -1, 2)
        out = launch("compact", None, {"flags": col(flags, wp.int32)}, dom, n, short, lens)
        if out is None:
            return
        kept = [i for i in range(max(live, 0)) if flags[i] != 0]
        assert count_of(out, "indices") == len(kept)
        assert out["indices"].tolist() == kept + [-1] * (n - len(kept))
        inverse = [-1] * n
        for k, i in enumerate(kept):
            inverse[i] = k
        assert out["inverse"].tolist() == inverse

    def scan(d, mode):
        if mode == "plain":
            n = d.draw(st.integers(0, 24))
            dom, live = domain(d, n)
            lens, short = lengths(d, n, ["src"])
            src = d.draw(
                st.lists(st.integers(-100, 100), min_size=lens["src"], max_size=lens["src"])
            )
            out = launch("scan", {"TYPE": "i32"}, {"src": col(src, wp.int32)}, dom, n, short, lens)
            if out is None:
                return
            m = max(live, 0)
            ends = np.cumsum(np.asarray(src[:m], np.int64)).tolist()
            total = ends[-1] if ends else 0
            assert out["dst"].tolist() == [0, *ends[:-1]][:m] + [total] * (n - m)
            assert out["ends"].tolist() == ends + [total] * (n - m)
            assert out["total"].tolist() == [total]
            return
        segs = d.draw(st.integers(0, 10))
        dom, live = domain(d, segs)
        lens, short = lengths(d, segs, ["starts"])
        src = d.draw(st.lists(st.integers(-100, 100), max_size=30))
        m = d.draw(st.integers(0, 32))
        starts = ints(d, lens["starts"], -2, len(src) + 2)
        out = launch(
            "scan",
            {"TYPE": "i32", "SEGMENTS": "device"},
            {"src": col(src, wp.int32), "starts": col(starts, wp.int32), "n": m},
            dom,
            segs,
            short,
            lens,
        )
        if out is None:
            return
        dst, total = [0] * m, [0] * segs
        n_el = min(len(src), m)
        nseg = min(max(live, 0), segs, len(starts)) if live >= 0 else 0
        for s in range(nseg):
            lo = max(starts[s], 0)
            hi = n_el if s + 1 >= nseg else min(starts[s + 1], n_el)
            acc = 0
            for i in range(lo, hi):
                dst[i] = acc
                acc += src[i]
            total[s] = acc
        assert out["dst"].tolist() == dst and out["total"].tolist() == total

    def scatter(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        fold = d.draw(st.sampled_from(["add", "min", "max"]))
        by = d.draw(st.sampled_from(["buffer", "index"]))
        names = ["idx", "src"] if by == "buffer" else ["idx"]
        lens, short = lengths(d, n, names)
        ndst = d.draw(st.integers(0, 30))
        dst = d.draw(st.lists(st.integers(-100, 100), min_size=ndst, max_size=ndst))
        idx = ints(d, lens["idx"], -3, ndst + 3)
        bind = {"idx": col(idx, wp.int32), "dst": col(dst, wp.int32)}
        if by == "buffer":
            src = d.draw(
                st.lists(st.integers(-100, 100), min_size=lens["src"], max_size=lens["src"])
            )
            bind["src"] = col(src, wp.int32)
        spec = {"FOLD": fold, "TYPE": "i32", "SRC": by}
        out = launch("scatter", spec, bind, dom, n, short, lens)
        if out is None:
            return
        want = list(dst)
        for i in range(min(live, n, len(idx))):
            j = idx[i]
            if 0 <= j < ndst:
                v = src[i] if by == "buffer" else i
                want[j] = {"add": want[j] + v, "min": min(want[j], v), "max": max(want[j], v)}[fold]
        assert out["dst"].tolist() == want

    def inside(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["points"])
        pts = np.asarray(
            d.draw(
                st.lists(
                    st.tuples(st.integers(-8, 8), st.integers(-8, 8)),
                    min_size=lens["points"],
                    max_size=lens["points"],
                )
            ),
            np.float32,
        ).reshape(-1, 2) * np.float32(0.25)
        shape = d.draw(st.sampled_from(["disk", "square", "ring"]))
        cx, cy = (
            float(v) * 0.25 for v in d.draw(st.tuples(st.integers(-4, 4), st.integers(-4, 4)))
        )
        radius, inner = float(d.draw(st.integers(0, 12))) * 0.25 + 0.1, 0.3
        uniforms = {"center": (cx, cy), "radius": radius}
        if shape == "ring":
            uniforms["inner"] = inner
        out = launch(
            "inside",
            {"SHAPE": shape},
            {"points": Column(wp.array(pts, dtype=wp.vec2f, device="cpu"))},
            dom,
            n,
            short,
            lens,
            uniforms,
        )
        if out is None:
            return
        dv = pts[:n] - np.array([cx, cy], np.float32)
        r = np.sqrt((dv * dv).sum(axis=1, dtype=np.float32))
        if shape == "disk":
            keep = r <= np.float32(radius)
        elif shape == "square":
            keep = (np.abs(dv) <= np.float32(radius)).all(axis=1)
        else:
            keep = (r <= np.float32(radius)) & (r >= np.float32(inner))
        want = [int(keep[i]) if i < live else 0 for i in range(n)]
        assert out["flags"].tolist() == want

    def reduce(d):
        segs = d.draw(st.integers(0, 10))
        dom, live = domain(d, segs)
        lens, short = lengths(d, segs, ["starts"])
        src = d.draw(st.lists(st.integers(-100, 100), max_size=30))
        starts = ints(d, lens["starts"], -2, len(src) + 2)
        fold = d.draw(st.sampled_from(["add", "min", "max"]))
        bind = {"src": col(src, wp.int32), "starts": col(starts, wp.int32)}
        n_el = len(src)
        if not isinstance(dom, int):
            sc = d.draw(st.one_of(st.integers(0, n_el + 2), st.integers(0, 2**32 - 1)))
            bind["src_count"] = col([sc], wp.uint32)
            n_el = min(sc, n_el)
        out = launch("reduce", {"FOLD": fold, "TYPE": "i32"}, bind, dom, segs, short, lens)
        if out is None:
            return
        ident = {"add": 0, "min": I32 - 1, "max": -I32}[fold]
        want = [0] * segs
        nseg = min(live, segs, len(starts))
        for s in range(max(nseg, 0)):
            lo = max(starts[s], 0)
            hi = n_el if s + 1 >= nseg else min(starts[s + 1], n_el)
            vals = src[lo:hi] if hi > lo else []
            acc = ident
            for v in vals:
                acc = {"add": acc + v, "min": min(acc, v), "max": max(acc, v)}[fold]
            want[s] = acc
        assert out["out"].tolist() == want

    def jump(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["parent", "value", "span"])
        parent = ints(d, lens["parent"], -2, n + 2)
        value = d.draw(
            st.lists(st.integers(-1000, 1000), min_size=lens["value"], max_size=lens["value"])
        )
        span = d.draw(st.lists(st.integers(0, 2**30), min_size=lens["span"], max_size=lens["span"]))
        mode = d.draw(st.sampled_from(["rank", "min"]))
        bind = {
            "parent": col(parent, wp.int32),
            "value": col(value, wp.int32),
            "span": col(span, wp.int32),
        }
        out = launch("jump", {"MODE": mode}, bind, dom, n, short, lens)
        if out is None:
            return
        live = min(live, len(parent), len(value), len(span))
        po, vo, so, moved = list(range(n)), [0] * n, [0] * n, 0
        for i in range(max(live, 0)):
            p = parent[i]
            if p < 0 or p >= live or p == i:
                vo[i], so[i] = value[i], span[i]
                continue
            q = parent[p]
            if q < 0 or q >= live or q == p:
                po[i] = p
                vo[i] = min(value[i], value[p]) if mode == "min" else value[i]
                so[i] = span[i]
                continue
            po[i], moved = q, moved + 1
            vo[i] = min(value[i], value[p]) if mode == "min" else value[i] + value[p]
            so[i] = min(span[i] + span[p], 2**30)
        assert out["parent_out"].tolist() == po
        assert out["value_out"].tolist() == vo and out["span_out"].tolist() == so
        assert out["moved"].tolist() == [moved]

    def loops(d, stage):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        names = ["a", "b"] if stage == "link" else []
        lens, short = lengths(d, n, names)
        na, nb = (lens.get(k, d.draw(st.integers(0, 30))) for k in ("a", "b"))
        nv = d.draw(st.integers(0, 30))
        a, b = ints(d, na, -2, nv + 2), ints(d, nb, -2, nv + 2)
        bind = {"a": col(a, wp.int32), "b": col(b, wp.int32)}
        tables = {}
        for name in ("out_edge", "in_edge"):
            if stage == "link" or d.draw(st.booleans()):
                tables[name] = ints(d, d.draw(st.integers(0, 30)), -2, n + 2)
                bind[name] = col(tables[name], wp.int32)
        out = launch("loops", {"STAGE": stage}, bind, dom, n, short, lens)
        if out is None:
            return
        if stage == "clear":
            for name in ("out_edge", "in_edge"):
                table = tables.get(name, [0] * n)  # allocated: n slots
                assert out[name].tolist() == [-1 if i < n else v for i, v in enumerate(table)]
            assert out["next"].tolist() == list(range(n)) and out["head"].tolist() == [0] * n
            return
        oe, ie = tables["out_edge"], tables["in_edge"]
        nxt, head = list(range(n)), [0] * n
        for i in range(max(live, 0)):
            e = oe[b[i]] if 0 <= b[i] < len(oe) else -1
            nxt[i] = e if 0 <= e < live else i
            e = ie[a[i]] if 0 <= a[i] < len(ie) else -1
            head[i] = 0 if 0 <= e < live else 1
        assert out["next"].tolist() == nxt and out["head"].tolist() == head

    def loops_cut(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        names = ["prev", "start", "rep", "root"]
        lens, short = lengths(d, n, names)
        v = {k: ints(d, lens[k], -2, n + 2) for k in names}
        out = launch(
            "loops_cut", None, {k: col(x, wp.int32) for k, x in v.items()}, dom, n, short, lens
        )
        if out is None:
            return
        live = min(live, *(len(x) for x in v.values()))
        head, cut = [0] * n, list(range(n))
        for i in range(max(live, 0)):
            r = v["root"][i]
            chain = 0 <= r < live and v["start"][r] != 0
            h = (v["start"][i] != 0) if chain else (v["rep"][i] == i)
            head[i] = int(h)
            p = v["prev"][i]
            cut[i] = p if not h and 0 <= p < live else i
        assert out["head"].tolist() == head and out["cut"].tolist() == cut

    def loops_place(d):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        names = ["head", "ring_of", "root", "rank"]
        lens, short = lengths(d, n, names)
        v = {k: ints(d, lens[k], -2, n + 2) for k in names}
        out = launch(
            "loops_place", None, {k: col(x, wp.int32) for k, x in v.items()}, dom, n, short, lens
        )
        if out is None:
            return
        live = min(live, *(len(x) for x in v.values()))
        ring, pos = [-1] * n, [0] * n
        for i in range(max(live, 0)):
            r = v["root"][i]
            ring[i] = v["ring_of"][r] if 0 <= r < live and v["head"][r] != 0 else -1
            pos[i] = v["rank"][i]
        assert out["ring"].tolist() == ring and out["pos"].tolist() == pos

    def edges_runs(d, stage):
        n = d.draw(st.integers(0, 24))
        dom, live = domain(d, n)
        names = ["ka", "kb"] + (["flag", "edge"] if stage == "table" else [])
        lens, short = lengths(d, n, names)
        ka = sorted(ints(d, lens["ka"], 0, 4))
        kb = ints(d, lens["kb"], 0, 4)
        bind = {"ka": col(ka, wp.int32), "kb": col(kb, wp.int32)}
        if stage == "table":
            flag = ints(d, lens["flag"], 0, 1)
            edge = ints(d, lens["edge"], -2, n + 2)
            edge = [max(e, -I32 + 1) for e in edge]
            bind.update(flag=col(flag, wp.int32), edge=col(edge, wp.int32))
        out = launch("edges_runs", {"STAGE": stage}, bind, dom, n, short, lens)
        if out is None:
            return
        plain = isinstance(dom, int)
        # the kernel takes the live count from its inputs (and the word), not the capacity
        live = min(len(ka), len(kb)) if plain else min(raw_counts[0], len(ka), len(kb))
        if stage == "heads":
            flags = [0] * n
            for i in range(max(min(live, n), 0)):
                flags[i] = int(i == 0 or (ka[i], kb[i]) != (ka[i - 1], kb[i - 1]))
            assert out["flag"].tolist() == flags
            assert out["runs"].tolist() == [sum(flags)]
            return
        m = min(live, len(flag), len(edge))
        e2, a, b, fc, runs = list(edge), [-1] * n, [-1] * n, [0] * n, 0
        for i in range(n):
            if i >= m:
                if i < len(e2):
                    e2[i] = -1
                a[i], b[i], fc[i] = -1, -1, 0
                continue
            r = e2[i] - 1
            e2[i] = r
            if flag[i] == 0:
                continue
            j = i + 1
            while j < m and flag[j] == 0:
                j += 1
            if 0 <= r < n:
                a[r], b[r], fc[r] = ka[i], kb[i], j - i
            runs += 1
        assert out["edge"].tolist() == e2
        assert (out["a"].tolist(), out["b"].tolist(), out["fcount"].tolist()) == (a, b, fc)
        if plain:
            assert out["runs"].tolist() == [runs]

    def expand(d, mode):
        m = d.draw(st.integers(0, 30))  # the outputs' capacity (bind n)
        if mode == "plain":  # ELEMENTS=plain: one thread per element
            n = d.draw(st.integers(0, 12))
            dom, live = domain(d, n)
            lens, short = lengths(d, n, ["counts", "offsets"])
            counts = ints(d, lens["counts"], -2, 6)
            offsets = ints(d, lens["offsets"], -4, m + 4)
            bind = {"counts": col(counts, wp.int32), "offsets": col(offsets, wp.int32), "n": m}
            out = launch("expand", None, bind, dom, n, short, lens)
            if out is None:
                return
            owner, local, total = [-1] * m, [-1] * m, 0
            for i in range(min(live, n, len(counts), len(offsets))):
                c, base = max(counts[i], 0), offsets[i]
                total += c
                for t in range(max(0, -base), min(c, m - base)):
                    owner[base + t], local[base + t] = i, t
            assert count_of(out, "owner") == total % 2**32
            assert out["owner"].tolist() == owner and out["local_index"].tolist() == local
            return
        n_el = d.draw(st.integers(0, 12))
        counts = d.draw(st.lists(st.integers(0, 5), min_size=n_el, max_size=n_el))
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64).tolist()
        offsets = offsets[:n_el]
        counts = counts + d.draw(st.lists(st.integers(-9, 9), max_size=3))  # past the live ones
        ec = d.draw(st.one_of(st.integers(0, n_el), st.integers(0, 2**32 - 1)))
        dom, _ = domain(d, m)
        bind = {
            "counts": col(counts, wp.int32),
            "offsets": col(offsets, wp.int32),
            "element_count": col([ec], wp.uint32),
            "n": m,
        }
        out = launch("expand", {"ELEMENTS": "device"}, bind, dom, m, None, {})
        ne = min(ec, len(counts), len(offsets))
        owner = np.repeat(np.arange(ne), counts[:ne]).tolist()
        local = [t for c in counts[:ne] for t in range(c)]
        k = min(len(owner), m)
        assert count_of(out, "owner") == (len(owner) if m > 0 else 0)
        assert out["owner"].tolist() == owner[:k] + [-1] * (m - k)
        assert out["local_index"].tolist() == local[:k] + [-1] * (m - k)

    def hash_gather(d):
        n = d.draw(st.integers(0, 16))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["qcell"])
        start = ints(d, d.draw(st.integers(0, 10)), -3, 20)
        order = ints(d, d.draw(st.integers(0, 20)), -2, 12)
        qcell = ints(d, lens["qcell"], -2, len(start) + 1)
        total = d.draw(st.integers(0, 30))
        bind = {
            "qcell": col(qcell, wp.int32),
            "start": col(start, wp.int32),
            "order": col(order, wp.int32),
            "total": total,
        }
        points = len(order)
        if not isinstance(dom, int):
            pc = d.draw(st.one_of(st.integers(0, 14), st.integers(0, 2**32 - 1)))
            bind["point_count"] = col([pc], wp.uint32)
            points = min(pc, points)
        out = launch("hash_gather", None, bind, dom, n, short, lens)
        if out is None:
            return
        pairs = []
        for q in range(min(live, len(qcell))):
            c = qcell[q]
            if c < 0 or c + 1 >= len(start):
                continue
            for s in range(max(start[c], 0), min(start[c + 1], len(order))):
                if 0 <= order[s] < points:
                    pairs.append((order[s], q))
        k = min(len(pairs), total)
        assert count_of(out, "items") == len(pairs)
        assert out["items"].tolist() == [p for p, _ in pairs[:k]] + [0] * (total - k)
        assert out["query"].tolist() == [q for _, q in pairs[:k]] + [0] * (total - k)

    def mix(k: int) -> int:
        h = k ^ (k >> 16)
        h = (h * 0x7FEB352D) & 0xFFFFFFFF
        h ^= h >> 15
        h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
        return h ^ (h >> 16)

    axes = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0)]

    def hash_hook(d, stage):
        n = d.draw(st.integers(0, 16))
        dom, live = domain(d, n)
        if stage == "find":  # parent in place
            lens, short = lengths(d, n, ["parent"])
            parent = ints(d, lens["parent"], -2, n + 2)
            out = launch(
                "hash_hook",
                {"STAGE": "find"},
                {"parent": col(parent, wp.int32)},
                dom,
                n,
                short,
                lens,
            )
            if out is None:
                return
            want, size = list(parent), len(parent)
            for i in range(min(live, n)):
                r, steps = want[i], 0
                while steps < size and 0 <= r < size and want[r] != r:
                    r, steps = want[r], steps + 1
                if 0 <= r < size:
                    want[i] = r
            assert out["parent"].tolist() == want
            return
        match = d.draw(st.sampled_from(["key", "normal"]))
        names = ["keys"] + (["normal"] if match == "normal" else [])
        lens, short = lengths(d, n, names)
        keys = d.draw(st.lists(st.integers(0, 4), min_size=lens["keys"], max_size=lens["keys"]))
        bind = {"keys": col(keys, wp.uint32)}
        normals = []
        if match == "normal":
            normals = [
                axes[j]
                for j in d.draw(
                    st.lists(st.integers(0, 2), min_size=lens["normal"], max_size=lens["normal"])
                )
            ]
            bind["normal"] = Column(
                wp.array(
                    np.asarray(normals, np.float32).reshape(-1, 3), dtype=wp.vec3f, device="cpu"
                )
            )
        if d.draw(st.booleans()):
            slots = [
                d.draw(st.one_of(st.just(-1), wide(-2, n + 2)))
                for _ in range(d.draw(st.integers(0, 24)))
            ]
            bind["slots"] = col(slots, wp.int32)
        else:
            slots = [-1] * d.draw(st.integers(0, 24))
            bind["table"] = len(slots)
        spec = {"STAGE": "hook", "MATCH": match}
        uniforms = {"cos_tol": 0.5} if match == "normal" else None
        out = launch("hash_hook", spec, bind, dom, n, short, lens, uniforms)
        if out is None:
            return
        t, known = len(slots), min(live, len(keys), *([len(normals)] if normals else []))
        parent, hooked, full = [0] * n, 0, 0
        for i in range(max(min(live, n), 0)):
            done = False
            h = mix(keys[i]) % t if t else 0
            for probe in range(t):
                s = (h + probe) % t
                cur = slots[s]
                if cur == -1:
                    slots[s], parent[i], done = i, i, True
                    break
                if (
                    0 <= cur < known
                    and keys[cur] == keys[i]
                    and (match == "key" or np.dot(normals[i], normals[cur]) >= 0.5)
                ):
                    parent[i], done, hooked = cur, True, hooked + 1
                    break
            if not done:
                parent[i], full = i, full + 1
        assert out["parent"].tolist() == parent and out["slots"].tolist() == slots
        assert (out["hooked"].tolist(), out["full"].tolist()) == ([hooked], [full])

    def walk(d):
        n = d.draw(st.integers(0, 12))
        dom, live = domain(d, n)
        lens, short = lengths(d, n, ["pos"])
        pos = np.asarray(
            d.draw(
                st.lists(
                    st.tuples(st.integers(-4, 4), st.integers(-4, 4)),
                    min_size=lens["pos"],
                    max_size=lens["pos"],
                )
            ),
            np.float32,
        ).reshape(-1, 2)
        steps = d.draw(st.integers(0, 3))
        word = st.one_of(
            st.integers(-2, 60).map(float),
            st.floats(allow_nan=True, allow_infinity=True, width=32),
        )
        u = d.draw(st.lists(word, max_size=40))
        cols = {
            f"c{k}": col(d.draw(st.lists(st.integers(-3, 3), max_size=14)), wp.float32)
            for k in range(d.draw(st.integers(0, 2)))
        }
        bind = {
            "pos": Column(wp.array(pos, dtype=wp.vec2f, device="cpu")),
            "u": col(u, wp.float32),
            "cols": cols,
        }
        out = launch("walk", None, bind, dom, n, short, lens, {"dt": 0.5, "steps": steps})
        if out is None:
            return
        # a malformed program gives any numbers, but every slot is written as documented
        m = max(min(live, n), 0)
        assert out["taken"].tolist() == [steps] * m + [0] * (n - m)
        assert (out["out"][m:] == 0).all()
        if steps == 0:
            assert out["out"][:m].tolist() == pos[:m].tolist()

    fns = {
        f.__name__: f
        for f in (
            gather,
            compact,
            scan,
            scatter,
            inside,
            reduce,
            jump,
            loops,
            loops_cut,
            loops_place,
            edges_runs,
            expand,
            hash_gather,
            hash_hook,
            walk,
        )
    }

    if group == "intersect":  # the intersect kernels' fuzzers live with their tests
        import importlib.util

        path = Path(__file__).parent / "kernels" / "test_intersect_fuzz.py"
        spec = importlib.util.spec_from_file_location("_intersect_fuzz", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fns.update(
            mod.fuzzers(
                st=st, wp=wp, Column=Column, col=col, domain=domain, lengths=lengths,
                launch=launch, count_of=count_of,
            )
        )  # fmt: skip

    def fuzz(fn):
        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=derandomize,
            suppress_health_check=list(HealthCheck),
            print_blob=True,
        )
        @given(st.data())
        def run(data):
            fn(data)

        return run

    modes = {
        "scan": ["plain", "segments"],
        "loops": ["clear", "link"],
        "edges_runs": ["heads", "table"],
        "expand": ["plain", "device"],
        "hash_hook": ["hook", "find"],
        "intersect_pairs": ["count", "write"],
        "intersect_retri": ["split", "classify"],
    }
    for name in GROUPS[group]:
        print(f"-- {name}", flush=True)
        if name in modes:
            for mode in modes[name]:
                fuzz(
                    functools.partial(
                        fns[name], **{"mode" if name in ("scan", "expand") else "stage": mode}
                    )
                )()
        else:
            fuzz(fns[name])()
        ran, refused = stats.get(name, [0, 0])
        print(f"{name}: ran={ran} refused={refused}", flush=True)


if __name__ == "__main__":
    _child(sys.argv[1])
