"""Fuzzers of intersect_pairs, intersect_cuts, intersect_unify and intersect_retri.

``fuzzers(...)`` is called by the child process of tests/test_fuzz_kernels.py (group
``intersect``) with its helpers (column upload, live-count domain, short-binding lengths,
the launch that checks refusals); each fuzzer draws an example, runs the kernel and
compares every slot of every output with a reference written from the kernel's
documented contract (plain Python / NumPy: the grid walk, a brute-force edge-triangle
test in float64 or an exact integer xy-overlap test, np.unique for the weld, the
ray parity of a box for the classification).
"""

from __future__ import annotations

import numpy as np


def test_the_fuzzers_are_run_by_the_fuzz_suite():
    from pathlib import Path

    text = (Path(__file__).parents[1] / "test_fuzz_kernels.py").read_text()
    assert "test_intersect_fuzz.py" in text and '"intersect"' in text


def _edge_hits(p, q, tri):
    a, b, c = tri
    d = q - p
    e1, e2 = b - a, c - a
    h = np.cross(d, e2)
    det = e1 @ h
    if abs(det) < 1e-12:
        return None, 0.0
    s = p - a
    u = (s @ h) / det
    qq = np.cross(s, e1)
    v = (d @ qq) / det
    t = (e2 @ qq) / det
    margin = min(abs(u), abs(v), abs(1 - u - v), abs(t), abs(1 - t))
    if u >= 0 and v >= 0 and u + v <= 1 and 0 <= t <= 1:
        return p + t * d, margin
    return None, margin


def _cut(ta, tb):
    pts, margin = [], np.inf
    for tri, other in ((ta, tb), (tb, ta)):
        for i, j in ((0, 1), (1, 2), (2, 0)):
            x, m = _edge_hits(tri[i], tri[j], other)
            margin = min(margin, m)
            if x is not None:
                pts.append(x)
    return pts, margin


def _o2(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _overlap2(ta, tb):
    """Exact on small integers: no edge line of one has the other on its outer side."""
    sa, sb = _o2(*ta), _o2(*tb)
    if sa == 0 or sb == 0:
        return False
    for t, s, o in ((ta, sa, tb), (tb, sb, ta)):
        for i, j in ((0, 1), (1, 2), (2, 0)):
            if all(_o2(t[i], t[j], p) * s <= 0 for p in o):
                return False
    return True


def _live(dom, n: int) -> int:
    """The live count of a domain: a count word is read as u32 and clamped to the capacity."""
    if isinstance(dom, dict):
        return min(int(dom["count"].data.numpy()[0]), n)
    return n


def _cell(x, o, cell, n):
    f = (np.float32(x) - np.float32(o)) / np.float32(cell)
    c = n - 1 if f >= np.float32(n) else (int(f) if f > 0 else 0)
    return min(max(c, 0), n - 1)


def fuzzers(*, st, wp, Column, col, domain, lengths, launch, count_of):  # noqa: C901
    def vec3(values):
        arr = np.asarray(values, np.float32).reshape(-1, 3)
        return Column(wp.array(arr, dtype=wp.vec3f, device="cpu"))

    def soup(d, ntri, integer):
        seed = d.draw(st.integers(0, 2**31 - 1))
        rng = np.random.default_rng(seed)
        if integer:
            return rng.integers(-3, 4, size=(ntri, 3, 3)).astype(np.float32)
        c = rng.uniform(0, 3, size=(ntri, 1, 3))
        return (c + rng.uniform(-1, 1, size=(ntri, 3, 3))).astype(np.float32)

    def intersect_pairs(d, stage):
        n = d.draw(st.integers(0, 10))
        dom, _ = domain(d, n)
        live = _live(dom, n)
        lens, short = lengths(d, n, ["start"] if stage == "write" else [])
        test = d.draw(st.sampled_from(["tri3", "tri2"]))
        na = n + d.draw(st.integers(-2, 2))  # triangles of a: some past the buffer
        a = soup(d, max(na, 0), test == "tri2")
        nb = d.draw(st.integers(0, 10))
        b = soup(d, nb, test == "tri2")
        if test == "tri2":
            a[:, :, 2] = 0
            b[:, :, 2] = 0
        nx, ny, nz = (d.draw(st.integers(0, 3)) for _ in range(3))
        cell = d.draw(st.sampled_from([0.0, 0.7, 1.5, 4.0, -1.0]))
        origin = (-3.5, -3.5, d.draw(st.sampled_from([-3.5, 0.5])))
        cells = nx * ny * nz
        # the grid: a cell lists any ids (some past b) in clamped or hostile ranges
        body = d.draw(st.lists(st.integers(-1, nb + 1), max_size=12))
        bounds = sorted(
            d.draw(st.lists(st.integers(0, len(body)), min_size=cells + 1, max_size=cells + 1))
        )
        grid = [cells + 1 + x for x in bounds] + body
        if d.draw(st.booleans()) and grid:
            grid[d.draw(st.integers(0, len(grid) - 1))] = d.draw(st.integers(-(2**31), 2**31 - 1))
        if d.draw(st.integers(0, 9)) == 0:
            grid = grid[: d.draw(st.integers(0, len(grid)))]  # shorter than its cells
        self_pairs = d.draw(st.integers(0, 1))
        group, period, near = (
            d.draw(st.integers(1, 2)),
            d.draw(st.integers(0, 4)),
            d.draw(st.integers(-1, 1)),
        )
        uni = dict(
            origin=origin, cell=cell, nx=nx, ny=ny, nz=nz,
            self_pairs=self_pairs, group=group, period=period, near=near,
        )  # fmt: skip
        # the reference: the documented grid walk and test, slot by slot
        want = []
        m = max(min(live, n), 0)
        for t in range(m):
            found = []
            if t >= na or cells == 0 or not cell > 0 or cells + 1 > len(grid):
                want.append(found)
                continue
            lo, hi = a[t].min(axis=0), a[t].max(axis=0)
            r = [
                (_cell(lo[k], origin[k], cell, nn), _cell(hi[k], origin[k], cell, nn))
                for k, nn in enumerate((nx, ny, nz))
            ]
            for cz in range(r[2][0], r[2][1] + 1):
                for cy in range(r[1][0], r[1][1] + 1):
                    for cx in range(r[0][0], r[0][1] + 1):
                        c = (cz * ny + cy) * nx + cx
                        s0 = min(max(grid[c], cells + 1), len(grid))
                        s1 = min(max(grid[c + 1], s0), len(grid))
                        for s in range(s0, s1):
                            u = grid[s]
                            if u < 0 or u >= nb:
                                continue
                            if self_pairs:
                                dd = abs(t // group - u // group)
                                if period > 0:
                                    dd %= period
                                    dd = min(dd, period - dd)
                                if u <= t or dd <= near:
                                    continue
                            blo, bhi = b[u].min(axis=0), b[u].max(axis=0)
                            ref = [
                                max(r[k][0], _cell(blo[k], origin[k], cell, nn))
                                for k, nn in enumerate((nx, ny, nz))
                            ]
                            if (cx, cy, cz) != tuple(ref):
                                continue
                            if (bhi[:2] < lo[:2]).any() or (blo[:2] > hi[:2]).any():
                                continue
                            if test == "tri3":
                                if bhi[2] < lo[2] or blo[2] > hi[2]:
                                    continue
                                pts, margin = _cut(a[t].astype(np.float64), b[u].astype(np.float64))
                                if margin < 1e-6:
                                    return  # too close to call: the example is dropped
                                if not pts:
                                    continue
                            elif not _overlap2(
                                a[t].astype(np.int64).tolist(), b[u].astype(np.int64).tolist()
                            ):
                                continue
                            found.append(u)
            want.append(found)
        bind = {"a": vec3(a), "b": vec3(b), "grid": col(grid, wp.int32)}
        spec = {"STAGE": stage, "TEST": test}
        if stage == "count":
            out = launch("intersect_pairs", spec, bind, dom, n, short, lens, uni)
            if out is None:
                return
            assert out["hits"].tolist() == [len(f) for f in want] + [0] * (n - m)
            return
        hits = [len(f) for f in want] + [0] * (lens["start"] - m)
        start = (np.cumsum(hits) - hits).tolist()[: lens["start"]]
        cap = d.draw(st.integers(0, sum(hits) + 2))
        bind.update(start=col(start, wp.int32), n=cap)
        out = launch("intersect_pairs", spec, bind, dom, n, short, lens, uni)
        if out is None:
            return
        pa, pb = [-1] * cap, [-1] * cap
        for t, f in enumerate(want):
            for j, u in enumerate(f):
                if start[t] + j < cap:
                    pa[start[t] + j], pb[start[t] + j] = t, u
        assert out["pair_a"].tolist() == pa and out["pair_b"].tolist() == pb
        assert count_of(out, "pair_a") == sum(len(f) for f in want)

    def intersect_cuts(d):
        n = d.draw(st.integers(0, 16))
        dom, _ = domain(d, n)
        live = _live(dom, n)
        lens, short = lengths(d, n, ["pair_a", "pair_b"])
        na, nb = d.draw(st.integers(0, 6)), d.draw(st.integers(0, 6))
        a, b = soup(d, na, False), soup(d, nb, False)
        pa = d.draw(st.lists(st.integers(-1, na), min_size=lens["pair_a"], max_size=lens["pair_a"]))
        pb = d.draw(st.lists(st.integers(-1, nb), min_size=lens["pair_b"], max_size=lens["pair_b"]))
        bind = {
            "pair_a": col(pa, wp.int32),
            "pair_b": col(pb, wp.int32),
            "a": vec3(a),
            "b": vec3(b),
        }
        out = launch("intersect_cuts", None, bind, dom, n, short, lens)
        if out is None:
            return
        want0 = np.zeros((n, 3), np.float32)
        want1 = np.zeros((n, 3), np.float32)
        for k in range(max(min(live, n), 0)):
            t, u = pa[k], pb[k]
            if 0 <= t < na and 0 <= u < nb:
                pts, margin = _cut(a[t].astype(np.float64), b[u].astype(np.float64))
                if margin < 1e-6:
                    return
                if pts:
                    e = sorted(pts, key=tuple)
                    want0[k], want1[k] = e[0], e[1]
        np.testing.assert_allclose(out["p0"].reshape(-1, 3), want0, atol=2e-5)
        np.testing.assert_allclose(out["p1"].reshape(-1, 3), want1, atol=2e-5)

    def intersect_unify(d):
        n = d.draw(st.integers(0, 16))
        dom, _ = domain(d, n)
        live = _live(dom, n)
        lens, short = lengths(d, n, ["p0", "p1"])
        pool = d.draw(
            st.lists(
                st.tuples(*[st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0])] * 3),
                min_size=1,
                max_size=5,
            )
        )
        pick = st.sampled_from(pool)
        p0 = [d.draw(pick) for _ in range(lens["p0"])]
        p1 = [d.draw(pick) for _ in range(lens["p1"])]
        size = d.draw(st.integers(0, 12))
        cap = d.draw(st.integers(0, 2 * n + 1))
        bind = {"p0": vec3(p0), "p1": vec3(p1), "table": col([-1] * size, wp.int32), "n": cap}
        out = launch("intersect_unify", None, bind, dom, n, short, lens)
        if out is None:
            return
        m = max(min(live, n), 0)
        ends = [np.asarray(x, np.float32) for k in range(m) for x in (p0[k], p1[k])]
        # in end order (the CPU's slot order), the first `size` distinct points claim a slot
        seen = []
        for e in ends:
            if not any((e == s).all() for s in seen):
                seen.append(e)
        claimed = seen[:size]
        ids = np.concatenate([out["id0"][:m, None], out["id1"][:m, None]], axis=1).reshape(-1)
        for e, i in zip(ends, ids):
            has = any((e == s).all() for s in claimed)
            assert (i >= 0) == has
        for (e, i), (f, j) in ((x, y) for x in zip(ends, ids) for y in zip(ends, ids)):
            if i >= 0 and j >= 0:
                assert (i == j) == bool((e == f).all())
        assert (out["id0"][m:] == -1).all() and (out["id1"][m:] == -1).all()
        assert count_of(out, "fresh") == len(claimed)
        fresh = out["fresh"].tolist()
        k = min(len(claimed), cap)
        assert set(fresh[:k]) <= set(ids.tolist()) and fresh[k:] == [-1] * (cap - k)
        assert len(set(fresh[:k])) == k

    def intersect_retri(d, stage):
        n = d.draw(st.integers(0, 8))
        dom, _ = domain(d, n)
        live = _live(dom, n)
        room = d.draw(st.integers(-1, 12))
        m = max(min(live, n), 0)
        if stage == "split":
            lens, short = lengths(d, n, ["start", "hits"])
            tris = soup(d, max(n + d.draw(st.integers(-1, 1)), 0), False)
            ncut = d.draw(st.integers(0, 6))
            p0, p1 = soup(d, ncut, False)[:, 0], soup(d, ncut, False)[:, 1]
            start = d.draw(
                st.lists(st.integers(-1, ncut), min_size=lens["start"], max_size=lens["start"])
            )
            hits = d.draw(
                st.lists(st.integers(-1, 3), min_size=lens["hits"], max_size=lens["hits"])
            )
            size = d.draw(st.integers(0, 3 * max(room, 0) * n + 3))
            bind = {"tris": vec3(tris), "start": col(start, wp.int32), "hits": col(hits, wp.int32),
                    "p0": vec3(p0), "p1": vec3(p1), "n": size}  # fmt: skip
            out = launch(
                "intersect_retri", {"STAGE": "split"}, bind, dom, n, short, lens, {"room": room}
            )
            if out is None:
                return
            count = out["piece_count"]
            pieces = out["pieces"].reshape(-1, 3)
            assert (count[m:] == 0).all()
            for t in range(n):
                base = 3 * max(room, 0) * t
                fit = min(max(room, 0), (size - base) // 3) if base < size else 0
                if t >= m or room <= 0:
                    assert count[t] == 0
                    continue
                if fit == 0 or t >= len(tris):
                    assert count[t] == -1
                    continue
                c = int(count[t])
                assert c == -1 or 1 <= c <= fit
                if c == -1:
                    continue
                mine = pieces[base : base + 3 * c].reshape(-1, 3, 3).astype(np.float64)
                tri = tris[t].astype(np.float64)
                area = 0.5 * np.linalg.norm(np.cross(tri[1] - tri[0], tri[2] - tri[0]))
                got = 0.5 * np.linalg.norm(
                    np.cross(mine[:, 1] - mine[:, 0], mine[:, 2] - mine[:, 0]), axis=1
                )
                assert abs(got.sum() - area) <= 1e-4 * max(area, 1.0)
                if c == 1:
                    np.testing.assert_array_equal(mine[0], tri)
            written = np.zeros(len(pieces), bool)
            for t in range(m):
                if count[t] > 0:
                    written[3 * room * t : 3 * room * t + 3 * count[t]] = True
                elif count[t] == -1 and t < len(tris):  # an overflow leaves what it wrote
                    written[3 * room * t : 3 * room * t + 3 * room] = True
            assert (pieces[~written] == 0).all()
            return
        lens, short = lengths(d, n, ["piece_count"])
        size = d.draw(st.integers(0, 3 * max(room, 0) * n + 3))
        pieces = soup(d, size // 3 + 1, False).reshape(-1, 3)[:size]
        pc = d.draw(
            st.lists(
                st.integers(-1, max(room, 0) + 1),
                min_size=lens["piece_count"],
                max_size=lens["piece_count"],
            )
        )
        from procgen_nb.mesh import box_mesh
        from procgen_nb.mesh._cells import _grid

        other = box_mesh((0.5, 0.5, 0.5), (2.5, 2.5, 2.5)).soup()
        words, uni = _grid(other, d.draw(st.sampled_from([None, 0.3, 1.0, 5.0])))
        device = isinstance(dom, dict)
        no = 12 if not device else d.draw(st.integers(0, 2**32 - 1))
        cap = d.draw(st.integers(0, max(room, 0) * n + 2))
        bind = {
            "pieces": vec3(pieces),
            "piece_count": col(pc, wp.int32),
            "other": vec3(other),
            "grid": col(words, wp.int32),
            "m": cap,
        }
        if device:
            bind["other_count"] = col([no], wp.uint32)
        spec = {"STAGE": "classify"}
        out = launch("intersect_retri", spec, bind, dom, n, short, lens, {"room": room, **uni})
        if out is None:
            return
        nlive = min(no, 12)  # the word read as u32
        tri = other.reshape(-1, 3, 3).astype(np.float64)
        want = [-1] * cap
        for t in range(m):
            if room <= 0:
                break
            base = 3 * room * t
            if base >= size:
                continue
            fit = min(room, (size - base) // 3)
            for j in range(min(pc[t], fit)):
                slot = room * t + j
                if slot >= cap:
                    continue
                q = pieces[base + 3 * j : base + 3 * j + 3].astype(np.float64)
                c = (((q[0] + q[1]) + q[2]) / 3.0).astype(np.float32).astype(np.float64)
                # the +z ray crosses a live triangle seen face-on whose xy holds c's xy
                # strictly and whose plane lies above c (the box: faces 0-1 at z 0.5,
                # faces 2-3 at z 2.5; the side faces are seen edge-on)
                crossings = 0
                for u in range(max(min(nlive, 4), 0)):
                    a, b, e = tri[u, :, :2]
                    den = (b[0] - a[0]) * (e[1] - a[1]) - (b[1] - a[1]) * (e[0] - a[0])
                    l1 = ((b[0] - c[0]) * (e[1] - c[1]) - (b[1] - c[1]) * (e[0] - c[0])) / den
                    l2 = ((e[0] - c[0]) * (a[1] - c[1]) - (e[1] - c[1]) * (a[0] - c[0])) / den
                    l3 = 1 - l1 - l2
                    if min(abs(l1), abs(l2), abs(l3), abs(tri[u, 0, 2] - c[2])) < 1e-7:
                        return  # on an edge or the plane: too close to call
                    if min(l1, l2, l3) > 0 and tri[u, 0, 2] > c[2]:
                        crossings += 1
                want[slot] = crossings % 2
        assert out["inside"].tolist() == want

    return {
        "intersect_pairs": intersect_pairs,
        "intersect_cuts": intersect_cuts,
        "intersect_unify": intersect_unify,
        "intersect_retri": intersect_retri,
    }
