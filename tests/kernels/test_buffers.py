"""The seed's storage-buffer table, asserted for every variant of every kernel of the library."""

from __future__ import annotations

import itertools

import pytest

from procgen_nb import abi, asset

# kernel -> list of (condition on the variant's options, plain buffers, device buffers)
TABLE = {
    "gather": [({}, 3, 4)],
    "compact": [({}, 4, 5)],
    "scan": [({}, 4, 5)],
    "jump": [({}, 7, 8)],
    "loops": [({}, 6, 7)],
    "loops_cut": [({}, 6, 7)],
    "loops_place": [({}, 6, 7)],
    "edges_runs": [({"STAGE": "heads"}, 8, 5), ({"STAGE": "table"}, 8, 8)],
    # ELEMENTS=device reads its count (element_count) in place of domain_count: the device
    # figure of the table in either COUNT variant
    "expand": [({"ELEMENTS": "plain"}, 5, 6), ({"ELEMENTS": "device"}, 6, 6)],
    "hash_gather": [({}, 6, 8)],
    "hash_hook": [
        ({"STAGE": "hook", "MATCH": "normal"}, 6, 7),
        ({"STAGE": "find"}, 1, 2),
    ],
    "intersect_pairs": [({"STAGE": "count"}, 4, 5), ({"STAGE": "write"}, 7, 8)],
    "intersect_cuts": [({}, 6, 7)],
    "intersect_unify": [({}, 7, 8)],
    # classify over a live count reads the other mesh's live count too (other_count)
    "intersect_retri": [({"STAGE": "split"}, 7, 8), ({"STAGE": "classify"}, 5, 7)],
}


def _variants(name: str):
    ref = asset.resolve(f"procgen/{name}", "computeShader")
    keys = ref.spec.option_names()
    for combo in itertools.product(*keys.values()):
        yield ref, dict(zip(keys, combo))


def _holds(cond: dict, opts: dict) -> bool:
    return all(opts[k] == v for k, v in cond.items())


@pytest.mark.parametrize("name", sorted(TABLE))
def test_storage_buffer_table(name):
    checked = 0
    for ref, opts in _variants(name):
        rows = [r for r in TABLE[name] if _holds(r[0], opts)]
        if not rows:
            continue
        (_, plain, device) = rows[0]
        want = device if opts["COUNT"] == "device" else plain
        v = ref.variant(opts)
        assert v.buffers == want, (name, opts, v.buffers, want)
        assert v.buffers <= abi.direct_limit
        assert ("domain_count" in v.bindings) == (
            opts["COUNT"] == "device" and opts.get("ELEMENTS", "plain") == "plain"
        )
        checked += 1
    assert checked >= 2


def test_edges_runs_binds_its_own_stage_in_the_device_variant():
    ref = asset.resolve("procgen/edges_runs", "computeShader")
    heads = ref.variant({"STAGE": "heads", "COUNT": "device"})
    table = ref.variant({"STAGE": "table", "COUNT": "device"})
    assert set(heads.bindings) == {"ka", "kb", "flag", "runs", "domain_count"}
    assert set(table.bindings) == {"ka", "kb", "flag", "edge", "a", "b", "fcount", "domain_count"}
    plain = ref.variant({"STAGE": "heads", "COUNT": "plain"})
    assert set(plain.bindings) == {"ka", "kb", "flag", "runs", "edge", "a", "b", "fcount"}


@pytest.mark.parametrize("name", ["scatter", "reduce", "inside"])
def test_other_kernels_stay_within_the_direct_limit(name):
    for ref, opts in _variants(name):
        v = ref.variant(opts)
        extra = 1 if opts["COUNT"] == "device" else 0
        plain = ref.variant({**opts, "COUNT": "plain"})
        assert v.buffers == plain.buffers + extra + (1 if name == "reduce" and extra else 0)
        assert v.buffers <= abi.direct_limit


def test_direct_limit_counts_domain_count(tmp_path):
    folder = tmp_path / "wide"
    folder.mkdir()
    params = "\n".join(f"    b{i}: wp.array(dtype=wp.float32)," for i in range(8))
    (folder / "wide.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef wide(\n"
        + params
        + "\n    # @when COUNT device\n    domain_count: wp.array(dtype=wp.uint32),\n"
        "    # @end\n):\n    i = wp.tid()\n    b0[i] = 0.0\n"
    )
    binds = "\n".join(
        f"  - {{ name: b{i}, kind: buffer, access: read_write, element: f32, count: domain }}"
        for i in range(8)
    )
    (folder / "bindings.yaml").write_text(
        "bindings:\n"
        + binds
        + '\n  - { name: domain_count, kind: buffer, access: read, element: u32, when: "COUNT=device" }\n'
        "specialize:\n  - { name: COUNT, options: [plain, device] }\n"
    )
    asset.add_path("widetest", tmp_path)
    try:
        ref = asset.resolve("widetest/wide", "computeShader")
        assert ref.variant({"COUNT": "plain"}).buffers == 8
        from procgen_nb.errors import DirectLimitError

        with pytest.raises(DirectLimitError, match=r"widetest/wide.*COUNT=device.*got 9"):
            ref.variant({"COUNT": "device"})
    finally:
        asset.remove_path("widetest")
