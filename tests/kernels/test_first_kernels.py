"""gather, compact and scan against NumPy, plain and over live counts, inert values included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_util import DEVICES, domain, host, run, up, word

SIZES = st.integers(0, 3000)


@st.composite
def live_run(draw, max_n=3000):
    n = draw(st.integers(0, max_n))
    live = draw(st.one_of(st.none(), st.integers(0, n)))
    seed = draw(st.integers(0, 2**31 - 1))
    return n, live, np.random.default_rng(seed)


_TYPES = {"f32": ("Float", 1), "i32": ("Int", 1), "vec2": ("Vec2", 2), "vec3": ("Vec3", 3)}


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), m=st.integers(0, 200), ty=st.sampled_from(sorted(_TYPES)))
def test_gather(device, case, m, ty):
    n, live, rng = case
    ctype, lanes = _TYPES[ty]
    shape = (m,) if lanes == 1 else (m, lanes)
    src = rng.integers(-50, 50, size=shape).astype(np.int32 if ty == "i32" else np.float32)
    idx = rng.integers(-3, m + 3, size=n).astype(np.int32)
    out = run(
        "gather",
        {"TYPE": ty},
        {"src": up(src, ctype, device), "idx": up(idx, "Int", device)},
        domain(n, live, device),
    )
    want = np.zeros((n,) + shape[1:], src.dtype)
    k = n if live is None else live
    ok = (idx >= 0) & (idx < m) & (np.arange(n) < k)
    want[ok] = src[idx[ok]]
    np.testing.assert_array_equal(host(out["dst"]), want)
    assert (out["dst"].live is None) == (live is None)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), p=st.floats(0.0, 1.0))
def test_compact(device, case, p):
    n, live, rng = case
    flags = (rng.random(n) < p).astype(np.int32) * rng.integers(1, 5, size=n).astype(np.int32)
    out = run("compact", None, {"flags": up(flags, "Int", device)}, domain(n, live, device))
    k = n if live is None else live
    kept = np.flatnonzero(flags[:k]).astype(np.int32)
    indices, inverse = host(out["indices"]), host(out["inverse"])
    assert word(out["indices_count"]) == len(kept)
    assert out["indices"].live is out["indices_count"]
    assert out["indices_count"].capacity == n
    if device == "cpu":
        np.testing.assert_array_equal(indices[: len(kept)], kept)
    else:
        np.testing.assert_array_equal(np.sort(indices[: len(kept)]), kept)
    assert np.all(indices[len(kept) :] == -1)
    want_inv = np.full(n, -1, np.int32)
    want_inv[indices[: len(kept)]] = np.arange(len(kept), dtype=np.int32)
    np.testing.assert_array_equal(inverse, want_inv)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), ty=st.sampled_from(["i32", "f32"]))
def test_scan(device, case, ty):
    n, live, rng = case
    dt = np.int32 if ty == "i32" else np.float32
    src = rng.integers(-20, 20, size=n).astype(dt)
    out = run(
        "scan",
        {"TYPE": ty},
        {"src": up(src, "Int" if ty == "i32" else "Float", device)},
        domain(n, live, device),
    )
    k = n if live is None else live
    incl = np.cumsum(src[:k], dtype=dt)
    total = incl[-1] if k else dt(0)
    want = np.full(n, total, dt)
    want[:k] = incl - src[:k]
    want_ends = np.full(n, total, dt)
    want_ends[:k] = incl
    np.testing.assert_array_equal(host(out["dst"]), want)
    np.testing.assert_array_equal(host(out["ends"]), want_ends)
    np.testing.assert_array_equal(host(out["total"]), [total])
    assert out["dst"].type == ("Int" if ty == "i32" else "Float")


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(case=live_run(), segs=st.integers(0, 60), ty=st.sampled_from(["i32", "f32"]))
def test_scan_segments(device, case, segs, ty):
    n, live, rng = case
    dt = np.int32 if ty == "i32" else np.float32
    src = rng.integers(-20, 20, size=n).astype(dt)
    starts = np.sort(rng.integers(0, n + 1, size=segs)).astype(np.int32)
    seg_live = None if live is None else min(live, segs)
    out = run(
        "scan",
        {"TYPE": ty, "SEGMENTS": "device"},
        {
            "src": up(src, "Int" if ty == "i32" else "Float", device),
            "starts": up(starts, "Int", device),
            "n": n,
        },
        domain(segs, seg_live, device),
    )
    k = segs if seg_live is None else seg_live
    want = np.zeros(n, dt)
    totals = np.zeros(segs, dt)
    for s in range(k):
        lo, hi = starts[s], (starts[s + 1] if s + 1 < k else n)
        seg = src[lo:hi]
        incl = np.cumsum(seg, dtype=dt)
        want[lo:hi] = incl - seg
        totals[s] = incl[-1] if len(seg) else 0
    np.testing.assert_array_equal(host(out["dst"]), want)
    np.testing.assert_array_equal(host(out["total"]), totals)


def test_scan_total_is_a_count():
    flags = up(np.array([1, 0, 1, 1, 0], np.int32), "Int")
    out = run("scan", {"TYPE": "i32"}, {"src": flags}, 5)
    got = run(
        "gather",
        {"TYPE": "i32"},
        {"src": flags, "idx": up(np.arange(5, dtype=np.int32), "Int")},
        {"count": out["total"], "capacity": 5},
    )
    np.testing.assert_array_equal(host(got["dst"]), [1, 0, 1, 0, 0])
