"""Kernel assets: resolve, add_path, the bindings.yaml loader, the preprocessor, direct_limit."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import abi, asset
from procgen_nb.asset import preprocess

GOOD_SRC = """
import warp as wp

@wp.kernel
def {name}(
    a: wp.array(dtype=wp.float32),
    b: wp.array(dtype=wp.float32),
    # @when COUNT device
    domain_count: wp.array(dtype=wp.uint32),
    # @end
    scale: float,
):
    i = wp.tid()
    b[i] = a[i] * scale
"""


def make_kernel(root: Path, name: str, yml: str, src: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / f"{name}.py").write_text(src if src is not None else GOOD_SRC.format(name=name))
    (folder / "bindings.yaml").write_text(textwrap.dedent(yml))
    return folder


GOOD_YAML = """
bindings:
  - { name: a, kind: buffer, access: read, element: f32 }
  - { name: b, kind: buffer, access: write, element: f32, count: domain }
  - { name: domain_count, kind: buffer, access: read, element: u32, when: "COUNT=device" }
specialize:
  - { name: COUNT, options: [plain, device] }
"""


@pytest.fixture
def lab(tmp_path):
    asset.add_path("lab", tmp_path)
    yield tmp_path
    asset.remove_path("lab")


def test_direct_limit_is_eight():
    assert abi.direct_limit == 8


def test_resolve_builtin_and_refusals():
    ref = asset.resolve("procgen/gather", "computeShader")
    assert ref.identity == "procgen/gather"
    assert asset.resolve("procgen/gather") is ref
    with pytest.raises(pg.AssetError, match=r"a bare name is refused\), got 'gather'"):
        asset.resolve("gather", "computeShader")
    with pytest.raises(
        pg.AssetError, match=r"expected a prefix among \[.*'procgen'.*\], got 'nope'"
    ):
        asset.resolve("nope/gather", "computeShader")
    with pytest.raises(
        pg.AssetError, match=r"expected one of \[.*'procgen/gather'.*\], got 'procgen/nothing'"
    ):
        asset.resolve("procgen/nothing", "computeShader")
    with pytest.raises(pg.AssetError, match="expected 'computeShader', got 'fragmentShader'"):
        asset.resolve("procgen/gather", "fragmentShader")
    assert {"procgen/compact", "procgen/gather", "procgen/scan"} <= set(asset.identities())


def test_add_path_refusals(tmp_path):
    with pytest.raises(pg.AssetError, match="expected a lowercase name like 'mylab', got 'My Lab'"):
        asset.add_path("My Lab", tmp_path)
    with pytest.raises(pg.AssetError, match="other than the built-in 'procgen'"):
        asset.add_path("procgen", tmp_path)
    with pytest.raises(pg.AssetError, match="expected an existing folder, got"):
        asset.add_path("lab", tmp_path / "missing")


def test_user_kernel_resolves_and_runs(lab):
    make_kernel(lab, "scale", GOOD_YAML)
    ref = asset.resolve("lab/scale", "computeShader")
    a = pg.ops.transfer.upload(values={"a": [1.0, 2.0, 3.0]})["columns"]["a"]
    out = pg.ops.device.kernel(kernel=ref, bind={"a": a}, domain=a, uniforms={"scale": 2.0})
    assert pg.ops.transfer.readback(columns={"b": out["columns"]["b"]})["values"]["b"] == [2, 4, 6]


@pytest.mark.parametrize(
    "yml, match",
    [
        ("bindings: [\n", r"bindings.yaml: expected valid YAML, got a parse error"),
        ("- 1\n- 2\n", r"bindings.yaml: <top>: expected a mapping"),
        ("bindings: []\nshaders: 3\n", r"bindings.yaml: shaders: expected one of the keys"),
        ("bindings: 5\n", r"bindings.yaml: bindings: expected a list of bindings, got 5"),
        (
            "bindings:\n  - { name: a, kind: pixel, access: read, element: f32 }\n",
            r"bindings\[a\].kind: expected one of \['buffer', 'columns', 'texture'\], got 'pixel'",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: rw, element: f32 }\n",
            r"bindings\[a\].access: expected one of \['read', 'write', 'read_write'\], got 'rw'",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read, element: f64 }\n",
            r"bindings\[a\].element: expected one of \['f32', 'i32'.*got 'f64'",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read }\n",
            r"bindings\[0\].element: expected a value \(the key is required\), got None",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read, element: f32, colour: red }\n",
            r"bindings\[0\].colour: expected one of the keys",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read, element: f32, when: 'MODE=fast' }\n",
            r"bindings\[a\].when: expected keys among \[\], got 'MODE=fast'",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read, element: f32, count: -2 }\n",
            r"bindings\[a\].count: expected an integer >= 0",
        ),
        (
            "bindings:\n  - { name: a, kind: buffer, access: read, element: f32, count: 4 }\n",
            r"bindings\[a\].access: expected write or read_write for an output, got 'read'",
        ),
        (
            "bindings: []\nspecialize:\n  - { name: COUNT, options: [] }\n",
            r"specialize\[COUNT\].options: expected a non-empty list of names, got \[\]",
        ),
        (
            "bindings: []\ndispatch: warp\n",
            r"dispatch: expected one of \['domain', 'serial'\], got 'warp'",
        ),
    ],
)
def test_malformed_bindings_refused_naming_file_key_value(lab, yml, match):
    make_kernel(lab, "bad", yml)
    with pytest.raises(pg.BindingsFileError, match=match) as info:
        asset.resolve("lab/bad", "computeShader")
    assert str(lab / "bad" / "bindings.yaml") in str(info.value)


def test_schema_and_source_mismatch_refused(lab):
    make_kernel(
        lab,
        "mism",
        GOOD_YAML.replace(
            "name: a, kind: buffer, access: read, element: f32",
            "name: a, kind: buffer, access: read, element: i32",
        ),
    )
    with pytest.raises(
        pg.BindingsFileError,
        match=r"bindings\[a\].element: the kernel declares f32, the schema states i32",
    ):
        asset.resolve("lab/mism").variant()


def test_direct_limit_refused_naming_kernel_variant_count(lab):
    n = 9
    params = "\n".join(f"    a{i}: wp.array(dtype=wp.float32)," for i in range(n))
    src = f"import warp as wp\n\n@wp.kernel\ndef wide(\n{params}\n):\n    i = wp.tid()\n    a0[i] = 1.0\n"
    yml = "bindings:\n" + "".join(
        f"  - {{ name: a{i}, kind: buffer, access: read_write, element: f32 }}\n" for i in range(n)
    )
    make_kernel(lab, "wide", yml, src)
    with pytest.raises(
        pg.DirectLimitError,
        match=r"kernel lab/wide variant \[default\]: expected at most abi.direct_limit=8 storage buffers, got 9",
    ):
        asset.resolve("lab/wide").variant()


def test_variant_built_once_per_process(lab):
    make_kernel(lab, "once", GOOD_YAML)
    ref = asset.resolve("lab/once")
    a = pg.ops.transfer.upload(values={"a": [1.0, 2.0]})["columns"]["a"]
    before = pg.traffic().loads
    for _ in range(3):
        pg.ops.device.kernel(kernel=ref, bind={"a": a}, domain=2, uniforms={"scale": 1.0})
    assert pg.traffic().loads - before == 1  # loaded once (and compiled on a cold cache)
    assert ref.variant({"COUNT": "plain"}) is ref.variant()


# -- the preprocessor ---------------------------------------------------------------------


def test_preprocess_hand_worked():
    src = "a\n# @when K x\nb\n  # @when J y|z\nc\n  # @end\n# @end\nd\n"
    assert preprocess(src, {"K": "x", "J": "z"}).splitlines() == [
        "a",
        "",
        "b",
        "",
        "c",
        "",
        "",
        "d",
    ]
    assert preprocess(src, {"K": "x", "J": "q"}).splitlines() == ["a", "", "b", "", "", "", "", "d"]
    assert preprocess(src, {"K": "w", "J": "y"}).splitlines() == ["a", "", "", "", "", "", "", "d"]


def test_preprocess_refusals():
    with pytest.raises(
        pg.BindingsFileError, match="expected '# @end' for every '# @when', got 1 open"
    ):
        preprocess("# @when K x\nb\n", {"K": "x"})
    with pytest.raises(pg.BindingsFileError, match="expected '# @when' before '# @end'"):
        preprocess("b\n# @end\n", {"K": "x"})
    with pytest.raises(pg.BindingsFileError, match=r"names 'Q', expected one of \['K'\]"):
        preprocess("# @when Q x\n# @end\n", {"K": "x"})


@st.composite
def blocks(draw, depth=0):
    """A random nest of lines and @when blocks, with the lines a reference keeps."""
    lines, kept = [], []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 3 and draw(st.booleans()):
            key = draw(st.sampled_from(["A", "B"]))
            val = draw(st.sampled_from(["0", "1", "0|1"]))
            inner, inner_kept = draw(blocks(depth + 1))
            lines += [f"# @when {key} {val}", *inner, "# @end"]
            kept.append((key, val, inner_kept))
        else:
            text = f"line{draw(st.integers(0, 999))}"
            lines.append(text)
            kept.append(text)
    return lines, kept


def _reference(kept, opts):
    out = []
    for item in kept:
        if isinstance(item, str):
            out.append(item)
        elif opts[item[0]] in item[1].split("|"):
            out += _reference(item[2], opts)
    return out


@settings(max_examples=200, deadline=None)
@given(blocks(), st.sampled_from(["0", "1"]), st.sampled_from(["0", "1"]))
def test_preprocess_matches_reference(tree, a, b):
    lines, kept = tree
    got = [x for x in preprocess("\n".join(lines) + "\n", {"A": a, "B": b}).splitlines() if x]
    assert got == _reference(kept, {"A": a, "B": b})
    if lines:  # line numbers are kept: removed lines become blank lines
        assert len(preprocess("\n".join(lines) + "\n", {"A": a, "B": b}).splitlines()) == len(lines)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["name", "kind", "access", "element", "count", "when", "extra"]),
        st.one_of(st.text(max_size=6), st.integers(-3, 3), st.none(), st.booleans()),
    )
)
def test_loader_never_crashes_on_random_bindings(tmp_path_factory, raw):
    root = tmp_path_factory.mktemp("fuzz")
    folder = root / "k"
    folder.mkdir()
    (folder / "k.py").write_text("import warp as wp\n")
    (folder / "bindings.yaml").write_text(yaml.safe_dump({"bindings": [raw]}))
    from procgen_nb.asset._bindings import load_spec

    try:
        spec = load_spec(folder, "k")
    except pg.BindingsFileError as e:
        assert "bindings.yaml" in str(e) and "expected" in str(e)
    else:
        b = spec.bindings[0]
        assert b.kind in ("buffer", "columns", "texture")
        assert b.access in ("read", "write", "read_write")
