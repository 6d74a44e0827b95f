"""ops.device.kernel: every rule of the seed's device.kernel section, checked by hand-worked cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import warp as wp

import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb.columns import Column, LiveCount

KERNELS = Path(__file__).parent / "assets" / "kernels"


@pytest.fixture(scope="module", autouse=True)
def test_kernels():
    asset.add_path("tk", KERNELS)
    yield
    asset.remove_path("tk")


def K(name):
    return asset.resolve(f"tk/{name}", "computeShader")


def up(values, device, **kw):
    return ops.transfer.upload(values=values, device=device)["columns"]


def read(**cols):
    return ops.transfer.readback(columns=cols)["values"]


def test_ops_state_where_they_run():
    assert ops.device.kernel.runs == "gpu"
    assert ops.transfer.upload.runs == "cpu_to_gpu"
    assert ops.transfer.readback.runs == "gpu_to_cpu"


def test_bare_name_refused():
    with pytest.raises(
        pg.BindingError, match=r"expected a reference from asset.resolve.*got 'procgen/gather'"
    ):
        ops.device.kernel(kernel="procgen/gather", domain=1)


def test_unknown_keyword_refused():
    with pytest.raises(
        pg.BindingError, match=r"device.kernel: expected keyword arguments among .*got \['binds'\]"
    ):
        ops.device.kernel(kernel=K("tk_sized"), binds={})


def test_uniforms_vec_spread_step_and_auto_names(device):
    out = ops.device.kernel(
        kernel=K("tk_uniforms"),
        domain=5,
        uniforms={"a": 1.5, "off": (2.0, 3.0), "flag": True, "time": 4.25, "frame": 9},
        step={"dt": 0.5, "gravity": 9.8},  # gravity is not declared: left out
        device=device,
    )["columns"]
    assert read(d=out["dst"])["d"] == [1.5, 2.0, 3.0, 4.25, 9.0, 5.0, 1.0, 0.5]


def test_uniform_refusals(device):
    with pytest.raises(
        pg.BindingError,
        match=r"tk/tk_uniforms: uniform 'speed': expected one of \[.*'a'.*\], got 3",
    ):
        ops.device.kernel(kernel=K("tk_uniforms"), domain=1, uniforms={"speed": 3}, device=device)
    with pytest.raises(
        pg.BindingError, match=r"uniform 'a': expected a Number, a Bool or a Vec, got 'x'"
    ):
        ops.device.kernel(kernel=K("tk_uniforms"), domain=1, uniforms={"a": "x"}, device=device)
    with pytest.raises(
        pg.BindingError, match=r"uniforms \['a', .*expected a value for each declared param"
    ):
        ops.device.kernel(kernel=K("tk_uniforms"), domain=1, uniforms={}, device=device)


def test_count_is_a_name_any_node_may_give(device):
    # gather declares no count/time/frame: they are left out, not refused
    src = up({"s": [1.0, 2.0]}, device)["s"]
    idx = up({"i": {"type": "Int", "values": [1, 0]}}, device)["i"]
    out = ops.device.kernel(
        kernel=asset.resolve("procgen/gather"),
        bind={"src": src, "idx": idx},
        domain=2,
        uniforms={"count": 2, "time": 1.0, "frame": 3},
    )
    assert read(d=out["columns"]["dst"])["d"] == [2.0, 1.0]


def test_specialize_refusals(device):
    g = asset.resolve("procgen/gather")
    src = up({"s": [1.0]}, device)["s"]
    with pytest.raises(
        pg.BindingError,
        match=r"procgen/gather: specialize TYPE: expected one of \['f32', .*got 'f64'",
    ):
        ops.device.kernel(kernel=g, specialize={"TYPE": "f64"}, bind={"src": src}, domain=1)
    with pytest.raises(
        pg.BindingError, match=r"specialize: expected keys among \['COUNT', 'TYPE'\], got 'MODE'"
    ):
        ops.device.kernel(kernel=g, specialize={"MODE": "x"}, bind={"src": src}, domain=1)


def test_bind_refusals(device):
    g = asset.resolve("procgen/gather")
    src = up({"s": [1.0, 2.0]}, device)["s"]
    with pytest.raises(
        pg.BindingError,
        match=r"binding 'idx': expected a Column \(bind, columns or bind.columns\), got nothing bound",
    ):
        ops.device.kernel(kernel=g, bind={"src": src}, domain=2)
    with pytest.raises(
        pg.BindingError, match=r"bind 'source': expected a binding among \['dst', 'idx', 'src'\]"
    ):
        ops.device.kernel(kernel=g, bind={"source": src}, domain=2)
    with pytest.raises(
        pg.BindingError, match=r"bind 'domain_count': expected a binding among .* in this variant"
    ):
        ops.device.kernel(kernel=g, bind={"src": src, "idx": src, "domain_count": src}, domain=2)
    with pytest.raises(pg.BindingError, match=r"binding 'src': expected a Column, got \[1, 2\]"):
        ops.device.kernel(kernel=g, bind={"src": [1, 2], "idx": src}, domain=2)
    v2 = up({"v": [{"x": 1, "y": 2}]}, device)["v"]
    with pytest.raises(
        pg.BindingError,
        match=r"binding 'src': expected a column of f32 elements \(Float\), got Vec2",
    ):
        ops.device.kernel(kernel=g, bind={"src": v2, "idx": src}, domain=1)


def test_domain_refusals(device):
    g = asset.resolve("procgen/gather")
    src = up({"s": [1.0]}, device)["s"]
    for bad, match in [
        (-1, r"domain: expected a Number >= 0, got -1"),
        (
            "ten",
            r"domain: expected a Number, a Column, a live count or \{count=, capacity=\}, got str",
        ),
        ({"count": src}, r"domain.capacity: expected a Number >= 0, got None"),
        (None, r"procgen/gather: domain: expected a Number, a Column or a live count, got nothing"),
    ]:
        with pytest.raises(pg.BindingError, match=match):
            ops.device.kernel(kernel=g, bind={"src": src, "idx": src}, domain=bad)


def test_written_binding_returns_a_copy_and_in_place_cast(device):
    v = up({"v": [1.5, 2.0, -3.0]}, device)["v"]  # a Float column meeting an i32 binding
    w = up({"w": {"type": "Int", "values": [1, 2, 3]}}, device)["w"]  # an Int column meeting f32
    out = ops.device.kernel(kernel=K("tk_inplace"), bind={"v": v, "w": w}, domain=3)["columns"]
    assert out["v"].type == "Int" and out["w"].type == "Float"
    got = read(v=out["v"], w=out["w"], v0=v, w0=w)
    assert got["v"] == [2, 4, -6]  # cast by value (1.5 -> 1), then doubled
    assert got["w"] == [1.5, 2.5, 3.5]
    assert got["v0"] == [1.5, 2.0, -3.0] and got["w0"] == [
        1,
        2,
        3,
    ]  # the bound columns are untouched


def test_texture_binding_sets_width_and_height(device):
    texels = up({"t": list(np.arange(6, dtype=float))}, device)["t"]
    tex = pg.Texture(texels, 3, 2)
    out = ops.device.kernel(kernel=K("tk_texture"), bind={"tex": tex}, domain=6)["columns"]
    assert read(d=out["dst"])["d"] == [float(i) + 300 + 2000 for i in range(6)]
    with pytest.raises(pg.BindingError, match=r"binding 'tex': expected a Texture, got Column"):
        ops.device.kernel(kernel=K("tk_texture"), bind={"tex": texels}, domain=6)


def test_columns_binding_order_and_sorted_names(device):
    cols = up({"a": [1.0, 2.0], "b": [3.0, 4.0]}, device)
    out = ops.device.kernel(
        kernel=K("tk_columns"),
        bind={"ordered": cols, "byname": {"b": cols["b"], "a": cols["a"]}},
        domain=2,
    )["columns"]
    got = read(d=out["dst"], d2=out["dst2"])
    assert got["d"] == [31.0, 42.0]  # order "b a": slot 0 is b
    assert got["d2"] == [13.0, 24.0]  # sorted names: slot 0 is a
    with pytest.raises(
        pg.BindingError,
        match=r"binding 'ordered': expected exactly the columns \['b', 'a'\], got \['a'\]",
    ):
        ops.device.kernel(
            kernel=K("tk_columns"), bind={"ordered": {"a": cols["a"]}, "byname": cols}, domain=2
        )


def test_columns_input_and_bind_columns_fill_unbound_read_bindings(device):
    cols = up({"a": [1.0, 2.0], "b": [3.0, 4.0]}, device)
    geo = pg.Geometry(point=cols)
    out = ops.device.kernel(kernel=K("tk_columns"), columns=geo.point)[
        "columns"
    ]  # domain from the class
    assert read(d=out["dst"])["d"] == [31.0, 42.0]
    src = up({"src": [5.0, 6.0], "idx": {"type": "Int", "values": [1, 1]}}, device)
    g = ops.device.kernel(kernel=asset.resolve("procgen/gather"), bind={"columns": src}, domain=2)
    assert read(d=g["columns"]["dst"])["d"] == [6.0, 6.0]


def test_output_sized_by_named_bind_number_and_live(device):
    out = ops.device.kernel(kernel=K("tk_sized"), bind={"nv": 5}, domain=8)["columns"]["out"]
    assert out.type == "UInt" and len(out) == 5
    assert read(o=out)["o"] == [0, 3, 6, 9, 12]
    words = wp.array([2], dtype=wp.uint32, device=device)
    live = LiveCount(words, 4)
    before = pg.traffic().readbacks
    out = ops.device.kernel(kernel=K("tk_sized"), bind={"nv": {"live": live}}, domain=4)["columns"][
        "out"
    ]
    assert pg.traffic().readbacks == before  # nothing read back to size it
    assert len(out) == 4 and out.live is live
    assert read(o=out)["o"] == [0, 3]
    with pytest.raises(
        pg.BindingError,
        match=r"output 'out' is sized by 'nv': expected a bind or uniform of that name, got none",
    ):
        ops.device.kernel(kernel=K("tk_sized"), domain=4)
    with pytest.raises(
        pg.BindingError,
        match=r"bind 'nv': expected a Number or \{live = <count>\} sizing 'out', got 'x'",
    ):
        ops.device.kernel(kernel=K("tk_sized"), bind={"nv": "x"}, domain=4)


def test_appended_output_counter_and_continuing_append(device):
    src = up({"s": [0.1, 0.9, 0.8, 0.2]}, device)["s"]
    first = ops.device.kernel(
        kernel=K("tk_append"), bind={"src": src}, domain=4, uniforms={"thresh": 0.5, "tag": 1}
    )["columns"]
    items = first["items"]
    assert isinstance(first["items_count"], LiveCount) and items._capacity == 16
    got = read(n=first["items_count"], items=items)
    assert got["n"] == 2 and got["items"] == [1001, 1002]
    second = ops.device.kernel(
        kernel=K("tk_append"),
        bind={"src": src, "items": items},
        domain=4,
        uniforms={"thresh": 0.15, "tag": 2},
    )["columns"]
    got = read(n=second["items_count"], items=second["items"], old=first["items_count"])
    assert got["n"] == 5 and got["items"] == [1001, 1002, 2001, 2002, 2003]
    assert got["old"] == 2  # the earlier output keeps its own count
    raw = second["items"].data.numpy()
    assert list(raw[5:]) == [-1] * 11  # init: -1 past the appended ones


def test_live_count_domain_runs_device_variant(device):
    words = wp.array([3], dtype=wp.uint32, device=device)
    src = up({"s": [1.0, 2.0, 3.0, 4.0, 5.0]}, device)["s"]
    idx = up({"i": {"type": "Int", "values": [4, 3, 2, 1, 0]}}, device)["i"]
    g = asset.resolve("procgen/gather")
    for domain in ({"count": Column(words), "capacity": 5}, LiveCount(words, 5)):
        out = ops.device.kernel(kernel=g, bind={"src": src, "idx": idx}, domain=domain)["columns"][
            "dst"
        ]
        assert len(out) == 5 and out.live is not None
        assert out.data.numpy().tolist() == [5.0, 4.0, 3.0, 0.0, 0.0]  # inert zeros past the count
    with pytest.raises(
        pg.BindingError,
        match=r"specialize COUNT: expected 'device' over a live count domain, got 'plain'",
    ):
        ops.device.kernel(
            kernel=g,
            specialize={"COUNT": "plain"},
            bind={"src": src, "idx": idx},
            domain=LiveCount(words, 5),
        )


def test_domain_count_over_plain_number_gets_the_number(device):
    src = up({"s": [1.0, 2.0, 3.0]}, device)["s"]
    idx = up({"i": {"type": "Int", "values": [0, 1, 2]}}, device)["i"]
    out = ops.device.kernel(
        kernel=asset.resolve("procgen/gather"),
        specialize={"COUNT": "device"},
        bind={"src": src, "idx": idx},
        domain=3,
    )["columns"]["dst"]
    assert read(d=out)["d"] == [1.0, 2.0, 3.0]


def test_first_run_waits_for_the_build_then_readback_sees_writes(device, tmp_path):
    # a fresh kernel (new source): its first run builds, and a readback right after sees it
    folder = tmp_path / "fresh"
    folder.mkdir()
    token = int.from_bytes(tmp_path.name.encode()[-4:], "little") % 1000
    (folder / "fresh.py").write_text(
        "import warp as wp\n\n@wp.kernel\ndef fresh(d: wp.array(dtype=wp.float32)):\n"
        f"    i = wp.tid()\n    d[i] = float(i) + {token}.0\n"
    )
    (folder / "bindings.yaml").write_text(
        "bindings:\n  - { name: d, kind: buffer, access: write, element: f32, count: domain }\n"
    )
    asset.add_path("fresh", tmp_path)
    try:
        before = pg.traffic().loads
        out = ops.device.kernel(kernel=asset.resolve("fresh/fresh"), domain=3, device=device)
        assert pg.traffic().loads == before + 1
        assert read(d=out["columns"]["d"])["d"] == [token, token + 1.0, token + 2.0]
    finally:
        asset.remove_path("fresh")


def test_columns_binding_packs_vector_lanes(device):
    cols = up({"a": [{"x": 1, "y": 2}, {"x": 3, "y": 4}], "z": [7.0, 8.0], "b": [0.0, 0.0]}, device)
    out = ops.device.kernel(
        kernel=K("tk_columns"),
        bind={
            "ordered": {"a": cols["z"], "b": cols["b"]},
            "byname": {"a": cols["a"], "z": cols["z"]},
        },
        domain=2,
    )["columns"]
    assert read(d=out["dst2"])["d"] == [12.0, 34.0]  # rows: a.x, a.y, z
