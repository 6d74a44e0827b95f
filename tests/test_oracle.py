"""The oracle of exact cooks: random graphs of 2-5 nodes, cooked through a sequence of
values, each cook equal to the bit to a fresh graph cooked once at the same values.

The graphs mix the node kinds of ``tests/oracle_nodes.py``: kernel nodes over live counts
that move (compact, gather, hash_gather, scan, reduce, segmented scan, hash_hook, expand
sized by a dynamic number) and nodes over dynamic numbers (uniforms, expressions, pure and
impure calls, curves, reads in Python, device words read back into Python and uploaded
again: ``readback``, ``track_flip``). Every output is compared whole: each Column's
words past its live count too, each live count, each number. Results kept from earlier
cooks must still hold their values at the end. A kind with outside calls (a generator
other cells call too) gets one between cooks, on the long-lived graph's objects.
"""

from __future__ import annotations

import pytest
from exact_util import assert_same, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle_nodes import FOLDER, KINDS, K, N

import procgen_nb as pg
from procgen_nb import asset


@pytest.fixture(scope="module", autouse=True)
def _kernels():
    asset.add_path("oracle", FOLDER)
    yield
    asset.remove_path("oracle")


def _world(kinds):
    return {k: KINDS[k].world() for k in set(kinds) if KINDS[k].world is not None}


def _build(kinds, wiring, world, record=True):
    g = pg.Graph("oracle", record=record)
    for i, kind in enumerate(kinds):
        fn = KINDS[kind].make(world.get(kind))
        node = pg.node(name=kind, params={"k": K, "n": N})(fn)
        up = f"n{wiring[i]}" if wiring[i] is not None else pg.Const(None)
        g.add(f"n{i}", node, up=up)
    return g


_values = st.fixed_dictionaries(
    {
        "k": st.sampled_from([-1.5, 0.0, 0.25, 0.5, 0.75, 2.0]),
        "n": st.integers(0, 12),
    }
)


@st.composite
def _graphs(draw):
    size = draw(st.integers(2, 5))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=size, max_size=size))
    wiring = [None] + [draw(st.one_of(st.none(), st.integers(0, i - 1))) for i in range(1, size)]
    n_steps = draw(st.integers(2, 5))
    steps = draw(
        st.lists(
            st.lists(_values, min_size=size, max_size=size), min_size=n_steps, max_size=n_steps
        )
    )
    shared = draw(
        st.lists(
            st.tuples(st.sampled_from([0.0, 0.5, 1.5]), st.integers(0, 3), st.integers(0, 9)),
            min_size=n_steps,
            max_size=n_steps,
        )
    )
    return kinds, wiring, steps, shared


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_graphs())
def test_oracle_every_cook_equals_a_fresh_graph_past_the_live_counts(case):
    kinds, wiring, steps, shared = case
    world = _world(kinds)
    g = _build(kinds, wiring, world)
    kept = []
    for step, (t, f, x) in zip(steps, shared):
        for kind in set(kinds):
            if KINDS[kind].outside is not None:
                KINDS[kind].outside(world[kind], x)  # another cell calls the same objects
        params = {}
        for i, vals in enumerate(step):
            params[f"n{i}.k"] = vals["k"]
            params[f"n{i}.n"] = vals["n"]
        result = g.cook(params=params, time=t, frame=f)
        got = snapshot(result)
        fresh = _build(kinds, wiring, _world(kinds), record=False)
        want = snapshot(fresh.cook(params=params, time=t, frame=f))
        assert_same(got, want, f"{kinds} {wiring} {params} t={t} f={f}")
        kept.append((result, got))
    for i, (result, got) in enumerate(kept):  # a kept result keeps its values
        assert_same(snapshot(result), got, f"kept result {i} of {kinds} {wiring}")
