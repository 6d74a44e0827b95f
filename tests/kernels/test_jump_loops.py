"""jump, loops, loops_cut and loops_place against NumPy, one stage at a time and chained."""

from __future__ import annotations

import math

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


def jump_ref(parent, value, span, live, mode):
    n = len(parent)
    po, vo, so = np.arange(n, dtype=np.int32), np.zeros(n, np.int32), np.zeros(n, np.int32)
    moved = 0
    for i in range(live):
        p = parent[i]
        if p < 0 or p >= live or p == i:
            po[i], vo[i], so[i] = i, value[i], span[i]
            continue
        q = parent[p]
        if q < 0 or q >= live or q == p:
            po[i], so[i] = p, span[i]
            vo[i] = value[i] if mode == "rank" else min(value[i], value[p])
            continue
        moved += 1
        po[i] = q
        vo[i] = value[i] + value[p] if mode == "rank" else min(value[i], value[p])
        so[i] = min(span[i] + span[p], 2**30)
    return po, vo, so, moved


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), mode=st.sampled_from(["rank", "min"]))
def test_jump_round(device, case, mode):
    n, live, rng = case
    parent = rng.integers(-2, n + 2, size=n).astype(np.int32)
    value = rng.integers(-100, 100, size=n).astype(np.int32)
    span = rng.integers(0, 5, size=n).astype(np.int32)
    out = run(
        "jump",
        {"MODE": mode},
        {
            "parent": up(parent, "Int", device),
            "value": up(value, "Int", device),
            "span": up(span, "Int", device),
        },
        domain(n, live, device),
    )
    po, vo, so, moved = jump_ref(parent, value, span, n if live is None else live, mode)
    np.testing.assert_array_equal(host(out["parent_out"]), po)
    np.testing.assert_array_equal(host(out["value_out"]), vo)
    np.testing.assert_array_equal(host(out["span_out"]), so)
    assert host(out["moved"])[0] == moved


def _jump_to_convergence(parent, value, span, mode, n, dom):
    cols = {"parent": parent, "value": value, "span": span}
    for _ in range(max(1, math.ceil(math.log2(max(n, 2))))):
        out = run("jump", {"MODE": mode}, cols, dom)
        cols = {"parent": out["parent_out"], "value": out["value_out"], "span": out["span_out"]}
    return cols


def _rings_and_chains(rng, n_edges):
    """Random chains and rings over shuffled edge slots and vertex ids; returns a, b and truth."""
    lengths = []
    left = n_edges
    while left > 0:
        k = int(min(left, rng.integers(1, 12)))
        lengths.append(k)
        left -= k
    rings = [bool(rng.random() < 0.5) and k >= 2 for k in lengths]
    verts = rng.permutation(2 * n_edges + 8)
    edge_slot = rng.permutation(n_edges)
    a = np.zeros(n_edges, np.int32)
    b = np.zeros(n_edges, np.int32)
    vi = 0
    e = 0
    truth = []
    for k, ring in zip(lengths, rings):
        vs = verts[vi : vi + k + 1]
        vi += k + 1
        members = []
        for t in range(k):
            s = edge_slot[e]
            e += 1
            a[s] = vs[t]
            b[s] = vs[0] if (ring and t == k - 1) else vs[t + 1]
            members.append(int(s))
        truth.append((ring, members))
    return a, b, truth, len(verts)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=10, deadline=None)
@given(n=st.integers(0, 600), seed=st.integers(0, 2**31 - 1), spare=st.integers(0, 40))
def test_loops_chain_to_rings(device, n, seed, spare):
    """loops clear/link, scatter, gather, jump min, loops_cut, scan, jump rank, loops_place."""
    rng = np.random.default_rng(seed)
    a, b, truth, nv = _rings_and_chains(rng, n)
    cap = n + spare  # edges live over a capacity with spare slots: COUNT=device everywhere
    a_pad = np.concatenate([a, rng.integers(0, nv, size=spare).astype(np.int32)])
    b_pad = np.concatenate([b, rng.integers(0, nv, size=spare).astype(np.int32)])
    A, B = up(a_pad, "Int", device), up(b_pad, "Int", device)
    edges = domain(cap, n, device)
    cleared = run("loops", {"STAGE": "clear"}, {"a": A, "b": B}, nv)
    assert np.all(host(cleared["out_edge"]) == -1) and np.all(host(cleared["in_edge"]) == -1)
    tables = {}
    for name, idx in (("out_edge", A), ("in_edge", B)):
        tables[name] = run(
            "scatter",
            {"FOLD": "max", "TYPE": "i32", "SRC": "index"},
            {"idx": idx, "dst": cleared[name]},
            edges,
        )["dst"]
    linked = run("loops", {"STAGE": "link"}, {"a": A, "b": B, **tables}, edges)
    nxt, start = host(linked["next"]), host(linked["head"])
    assert np.all(nxt[n:] == np.arange(n, cap)) and np.all(start[n:] == 0)
    prev = run("gather", {"TYPE": "i32"}, {"src": tables["in_edge"], "idx": A}, edges)["dst"]
    prev_h = host(prev)
    ids = up(np.arange(cap, dtype=np.int32), "Int", device)
    ones = up(np.ones(cap, np.int32), "Int", device)
    mins = _jump_to_convergence(prev, ids, ones, "min", cap, edges)
    cut = run(
        "loops_cut",
        None,
        {"prev": prev, "start": linked["head"], "rep": mins["value"], "root": mins["parent"]},
        edges,
    )
    head_h, cut_h = host(cut["head"]), host(cut["cut"])
    assert np.all(head_h[n:] == 0) and np.all(cut_h[n:] == np.arange(n, cap))
    ring_of = run("scan", {"TYPE": "i32"}, {"src": cut["head"]}, edges)["dst"]
    step = up((cut_h != np.arange(cap)).astype(np.int32), "Int", device)
    ranks = _jump_to_convergence(cut["cut"], step, step, "rank", cap, edges)
    placed = run(
        "loops_place",
        None,
        {"head": cut["head"], "ring_of": ring_of, "root": ranks["parent"], "rank": ranks["value"]},
        edges,
    )
    ring, pos = host(placed["ring"]), host(placed["pos"])
    assert np.all(ring[n:] == -1) and np.all(pos[n:] == 0)
    # the truth: every chain/ring is one ring id, in order from its head
    heads = []
    for is_ring, members in truth:
        if is_ring:
            k = members.index(min(members))
            members = members[k:] + members[:k]
        heads.append(members[0])
        got_ring = ring[members]
        assert len(set(got_ring.tolist())) == 1
        np.testing.assert_array_equal(pos[members], np.arange(len(members)))
        np.testing.assert_array_equal(prev_h[members[1:]], members[:-1])
    order = np.argsort(heads)
    want_ids = np.empty(len(heads), np.int64)
    want_ids[order] = np.arange(len(heads))
    for (_, members), rid in zip(truth, want_ids):
        assert ring[members[0]] == rid
    assert word_count(head_h[:n]) == len(truth)


def word_count(flags):
    return int(np.count_nonzero(flags))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=20, deadline=None)
@given(case=live_run())
def test_loops_link_and_cut_stages(device, case):
    n, live, rng = case
    nv = max(1, n // 2)
    a = rng.integers(-1, nv + 1, size=n).astype(np.int32)
    b = rng.integers(-1, nv + 1, size=n).astype(np.int32)
    oe = rng.integers(-1, n + 2, size=nv).astype(np.int32)
    ie = rng.integers(-1, n + 2, size=nv).astype(np.int32)
    out = run(
        "loops",
        {"STAGE": "link"},
        {
            "a": up(a, "Int", device),
            "b": up(b, "Int", device),
            "out_edge": up(oe, "Int", device),
            "in_edge": up(ie, "Int", device),
        },
        domain(n, live, device),
    )
    k = n if live is None else live
    nxt = np.arange(n, dtype=np.int32)
    head = np.zeros(n, np.int32)
    for i in range(k):
        if 0 <= b[i] < nv and 0 <= oe[b[i]] < k:
            nxt[i] = oe[b[i]]
        head[i] = 0 if (0 <= a[i] < nv and 0 <= ie[a[i]] < k) else 1
    np.testing.assert_array_equal(host(out["next"]), nxt)
    np.testing.assert_array_equal(host(out["head"]), head)

    prev = rng.integers(-1, n + 1, size=n).astype(np.int32)
    start = rng.integers(0, 2, size=n).astype(np.int32)
    rep = rng.integers(0, n + 1, size=n).astype(np.int32)
    root = rng.integers(-1, n + 1, size=n).astype(np.int32)
    cut = run(
        "loops_cut",
        None,
        {
            "prev": up(prev, "Int", device),
            "start": up(start, "Int", device),
            "rep": up(rep, "Int", device),
            "root": up(root, "Int", device),
        },
        domain(n, live, device),
    )
    want_h = np.zeros(n, np.int32)
    want_c = np.arange(n, dtype=np.int32)
    for i in range(k):
        chain = 0 <= root[i] < k and start[root[i]] != 0
        h = (start[i] != 0) if chain else (rep[i] == i)
        want_h[i] = int(h)
        if not h and 0 <= prev[i] < k:
            want_c[i] = prev[i]
    np.testing.assert_array_equal(host(cut["head"]), want_h)
    np.testing.assert_array_equal(host(cut["cut"]), want_c)

    ring_of = rng.integers(0, 50, size=n).astype(np.int32)
    rank = rng.integers(0, 50, size=n).astype(np.int32)
    placed = run(
        "loops_place",
        None,
        {
            "head": up(start, "Int", device),
            "ring_of": up(ring_of, "Int", device),
            "root": up(root, "Int", device),
            "rank": up(rank, "Int", device),
        },
        domain(n, live, device),
    )
    want_r = np.full(n, -1, np.int32)
    want_p = np.zeros(n, np.int32)
    for i in range(k):
        if 0 <= root[i] < k and start[root[i]] != 0:
            want_r[i] = ring_of[root[i]]
        want_p[i] = rank[i]
    np.testing.assert_array_equal(host(placed["ring"]), want_r)
    np.testing.assert_array_equal(host(placed["pos"]), want_p)


def test_loops_clear_writes_every_slot_of_the_dispatch():
    out = run(
        "loops",
        {"STAGE": "clear", "COUNT": "device"},
        {
            "a": up(np.zeros(3, np.int32), "Int"),
            "b": up(np.zeros(3, np.int32), "Int"),
            "out_edge": up(np.arange(6, dtype=np.int32), "Int"),
            "in_edge": up(np.arange(6, dtype=np.int32), "Int"),
        },
        domain(6, 2),
    )
    assert host(out["out_edge"]).tolist() == [-1] * 6
    assert host(out["in_edge"]).tolist() == [-1] * 6
    assert host(out["next"]).tolist() == list(range(6))
    assert word(out["next"].live) == 2
