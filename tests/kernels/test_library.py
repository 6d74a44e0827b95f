"""edges_runs, expand, hash_gather, hash_hook, scatter and reduce against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_util import DEVICES, domain, host, run, up, word


@st.composite
def live_run(draw, max_n=3000):
    n = draw(st.integers(0, max_n))
    live = draw(st.one_of(st.none(), st.integers(0, n)))
    seed = draw(st.integers(0, 2**31 - 1))
    return n, live, np.random.default_rng(seed)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run())
def test_edges_runs(device, case):
    n, live, rng = case
    k = n if live is None else live
    keys = rng.integers(0, max(1, n // 2), size=(n, 2)).astype(np.int32)
    keys = np.sort(keys, axis=1)
    keys[:k] = keys[:k][np.lexsort((keys[:k, 1], keys[:k, 0]))]
    ka, kb = up(keys[:, 0], "Int", device), up(keys[:, 1], "Int", device)
    dom = domain(n, live, device)
    heads = run("edges_runs", {"STAGE": "heads"}, {"ka": ka, "kb": kb}, dom)
    flag = np.zeros(n, np.int32)
    if k:
        flag[0] = 1
        flag[1:k] = np.any(keys[1:k] != keys[: k - 1], axis=1)
    runs = int(flag.sum())
    np.testing.assert_array_equal(host(heads["flag"]), flag)
    assert host(heads["runs"])[0] == runs
    incl = run("scan", {"TYPE": "i32"}, {"src": heads["flag"]}, dom)["ends"]
    table = run(
        "edges_runs",
        {"STAGE": "table"},
        {"ka": ka, "kb": kb, "flag": heads["flag"], "edge": incl},
        dom,
    )
    starts = np.flatnonzero(flag[:k])
    ends = np.append(starts[1:], k).astype(np.int64)
    a = np.full(n, -1, np.int32)
    b = np.full(n, -1, np.int32)
    f = np.zeros(n, np.int32)
    a[:runs], b[:runs], f[:runs] = keys[starts, 0], keys[starts, 1], ends - starts
    edge = np.full(n, -1, np.int32)
    edge[:k] = np.cumsum(flag[:k]) - 1
    np.testing.assert_array_equal(host(table["a"]), a)
    np.testing.assert_array_equal(host(table["b"]), b)
    np.testing.assert_array_equal(host(table["fcount"]), f)
    np.testing.assert_array_equal(host(table["edge"]), edge)
    if live is None:
        assert host(table["runs"])[0] == runs


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(
    case=live_run(1000),
    kmax=st.integers(0, 6),
    room=st.floats(0.0, 1.5),
    form=st.sampled_from(["plain", "device"]),
)
def test_expand(device, case, kmax, room, form):
    n, live, rng = case
    k = n if live is None else live
    counts = rng.integers(-1, kmax + 1, size=n).astype(np.int32)
    c = np.maximum(counts, 0)
    offsets = (np.cumsum(c) - c).astype(np.int32)
    total = int(c[:k].sum())
    cap = int(total * room)
    bind = {"counts": up(counts, "Int", device), "offsets": up(offsets, "Int", device), "n": cap}
    if form == "plain":
        out = run("expand", None, bind, domain(n, live, device))
    else:
        bind["element_count"] = up(np.array([k], np.uint32), "UInt", device)
        out = run("expand", {"ELEMENTS": "device"}, bind, cap)
    owner = np.full(cap, -1, np.int32)
    local = np.full(cap, -1, np.int32)
    for e in range(k):
        for t in range(c[e]):
            if offsets[e] + t < cap:
                owner[offsets[e] + t] = e
                local[offsets[e] + t] = t
    np.testing.assert_array_equal(host(out["owner"]), owner)
    np.testing.assert_array_equal(host(out["local_index"]), local)
    if form == "plain" or cap > 0:
        assert word(out["owner_count"]) == total  # the true count, past the capacity too
    assert out["owner_count"].capacity == cap


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), cells=st.integers(1, 64), room=st.floats(0.0, 1.5))
def test_hash_gather(device, case, cells, room):
    nq, live, rng = case
    npts = int(rng.integers(0, 400))
    pcell = rng.integers(0, cells, size=npts)
    order = np.argsort(pcell, kind="stable").astype(np.int32)
    start = np.searchsorted(pcell[order], np.arange(cells + 1)).astype(np.int32)
    qcell = rng.integers(-1, cells + 1, size=nq).astype(np.int32)
    plive = None if live is None else int(rng.integers(0, npts + 1))
    kq = nq if live is None else live
    kp = npts if plive is None else plive
    pairs = []
    for q in range(kq):
        c = qcell[q]
        if 0 <= c < cells:
            pairs += [(int(p), q) for p in order[start[c] : start[c + 1]] if p < kp]
    total = int(len(pairs) * room)
    bind = {
        "qcell": up(qcell, "Int", device),
        "start": up(start, "Int", device),
        "order": up(order, "Int", device),
        "total": total,
    }
    if live is not None:
        bind["point_count"] = up(np.array([kp], np.uint32), "UInt", device)
    out = run("hash_gather", None, bind, domain(nq, live, device))
    assert word(out["items_count"]) == len(pairs)
    items, query = host(out["items"]), host(out["query"])
    got = sorted(
        zip(items[: min(total, len(pairs))].tolist(), query[: min(total, len(pairs))].tolist())
    )
    if total >= len(pairs):
        assert got == sorted(pairs)
        assert np.all(items[len(pairs) :] == 0) and np.all(query[len(pairs) :] == 0)
    elif device == "cpu":
        assert got == sorted(pairs[:total])


def _hook_ref(keys, normals, live, cos_tol, match):
    parent = np.zeros(len(keys), np.int32)
    owners: dict[int, list[int]] = {}
    for i in range(live):
        found = i
        for j in owners.get(int(keys[i]), []):
            if match == "key" or float(np.dot(normals[i], normals[j])) >= cos_tol:
                found = j
                break
        if found == i:
            owners.setdefault(int(keys[i]), []).append(i)
        parent[i] = found
    return parent


@settings(max_examples=25, deadline=None)
@given(case=live_run(), nkeys=st.integers(1, 300), match=st.sampled_from(["normal", "key"]))
def test_hash_hook_and_find(case, nkeys, match):
    n, live, rng = case
    k = n if live is None else live
    keys = rng.integers(0, nkeys, size=n).astype(np.uint32)
    dirs = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0.6, 0.8]], np.float32)
    normals = dirs[rng.integers(0, 4, size=n)]
    table = 1 << max(1, int(2 * n).bit_length())
    bind = {"keys": up(keys, "UInt"), "table": table}
    uniforms = None
    if match == "normal":
        bind["normal"] = up(normals, "Vec3")
        uniforms = {"cos_tol": 0.9}
    out = run("hash_hook", {"STAGE": "hook", "MATCH": match}, bind, domain(n, live), uniforms)
    want = _hook_ref(keys, normals, k, 0.9, match)
    parent = host(out["parent"])
    np.testing.assert_array_equal(parent[:k], want[:k])
    assert np.all(parent[k:] == 0)  # past the live count: nothing written
    assert host(out["hooked"])[0] == int(np.count_nonzero(want[:k] != np.arange(k)))
    assert host(out["full"])[0] == 0
    slots = host(out["slots"])
    assert sorted(slots[slots >= 0].tolist()) == [i for i in range(k) if want[i] == i]
    # find: chains of pointers collapse to their roots
    chain = np.arange(n, dtype=np.int32)
    chain[1:] = np.where(rng.random(max(n - 1, 0)) < 0.7, np.arange(n - 1), np.arange(1, n))
    found = run("hash_hook", {"STAGE": "find"}, {"parent": up(chain, "Int")}, domain(n, live))
    roots = chain.copy()
    for i in range(k):
        r = chain[i]
        while chain[r] != r:
            r = chain[r]
        roots[i] = r
    np.testing.assert_array_equal(host(found["parent"]), roots)


def test_hash_hook_counts_a_full_table():
    keys = up(np.arange(5, dtype=np.uint32), "UInt")
    out = run("hash_hook", {"STAGE": "hook", "MATCH": "key"}, {"keys": keys, "table": 4}, 5)
    assert host(out["full"])[0] == 1
    assert host(out["parent"]).tolist() == list(range(5))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(
    case=live_run(),
    fold=st.sampled_from(["add", "min", "max"]),
    ty=st.sampled_from(["i32", "f32"]),
    src_kind=st.sampled_from(["buffer", "index"]),
)
def test_scatter(device, case, fold, ty, src_kind):
    n, live, rng = case
    k = n if live is None else live
    dt = np.int32 if ty == "i32" else np.float32
    m = int(rng.integers(0, 200))
    idx = rng.integers(-2, m + 2, size=n).astype(np.int32)
    src = rng.integers(-50, 50, size=n).astype(dt)
    dst = rng.integers(-50, 50, size=m).astype(dt)
    ctype = "Int" if ty == "i32" else "Float"
    bind = {"idx": up(idx, "Int", device), "dst": up(dst, ctype, device)}
    if src_kind == "buffer":
        bind["src"] = up(src, ctype, device)
    out = run("scatter", {"FOLD": fold, "TYPE": ty, "SRC": src_kind}, bind, domain(n, live, device))
    vals = src if src_kind == "buffer" else np.arange(n).astype(dt)
    want = dst.copy()
    ok = (idx[:k] >= 0) & (idx[:k] < m)
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum}[fold]
    ufunc.at(want, idx[:k][ok], vals[:k][ok])
    np.testing.assert_array_equal(host(out["dst"]), want)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(
    case=live_run(),
    segs=st.integers(0, 80),
    fold=st.sampled_from(["add", "min", "max"]),
    ty=st.sampled_from(["i32", "f32"]),
)
def test_reduce(device, case, segs, fold, ty):
    n, live, rng = case
    dt = np.int32 if ty == "i32" else np.float32
    src = rng.integers(-1000, 1000, size=n).astype(dt)
    starts = np.sort(rng.integers(0, n + 1, size=segs)).astype(np.int32)
    ctype = "Int" if ty == "i32" else "Float"
    bind = {"src": up(src, ctype, device), "starts": up(starts, "Int", device)}
    seg_live = None
    if live is not None:
        seg_live = int(rng.integers(0, segs + 1))
        bind["src_count"] = up(np.array([live], np.uint32), "UInt", device)
    out = run("reduce", {"FOLD": fold, "TYPE": ty}, bind, domain(segs, seg_live, device))
    k = n if live is None else live
    ks = segs if seg_live is None else seg_live
    ident = {
        "add": 0,
        "min": np.iinfo(dt).max if ty == "i32" else np.inf,
        "max": np.iinfo(dt).min if ty == "i32" else -np.inf,
    }[fold]
    want = np.zeros(segs, dt)
    f = {"add": np.sum, "min": np.min, "max": np.max}[fold]
    for s in range(ks):
        lo, hi = starts[s], (min(starts[s + 1], k) if s + 1 < ks else k)
        seg = src[lo:hi]
        want[s] = (
            f(seg, dtype=dt) if fold == "add" and len(seg) else (f(seg) if len(seg) else ident)
        )
    np.testing.assert_array_equal(host(out["out"]), want)
