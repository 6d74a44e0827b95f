"""Hardening (issue 12): bindings.yaml without aliases, repeated keys or binding names; a
binding's ``length``; identities that stay inside their folder."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from procgen_nb import asset
from procgen_nb.errors import AssetError, BindingsFileError

SRC = """
import warp as wp

@wp.kernel
def {name}(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32)):
    i = wp.tid()
    b[i] = a[i]
"""

GOOD = """
bindings:
  - { name: a, kind: buffer, access: read, element: f32 }
  - { name: b, kind: buffer, access: write, element: f32, count: domain }
"""


@pytest.fixture
def lab(tmp_path):
    asset.add_path("hardlab", tmp_path)
    yield tmp_path
    asset.remove_path("hardlab")


def kernel(root: Path, name: str, yml: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / f"{name}.py").write_text(SRC.format(name=name))
    (folder / "bindings.yaml").write_text(textwrap.dedent(yml))
    return folder / "bindings.yaml"


def test_two_bindings_of_one_name_are_refused(lab):
    path = kernel(
        lab,
        "dup",
        GOOD + "  - { name: b, kind: buffer, access: write, element: f32, count: 4 }\n",
    )
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/dup")
    assert str(info.value) == (
        f"{path}: bindings[b]: expected distinct binding names in each variant (two bindings "
        "'b' hold in every variant), got 'b'"
    )


def test_two_bindings_of_one_name_in_overlapping_variants_are_refused(lab):
    path = kernel(
        lab,
        "dupwhen",
        """
        bindings:
          - { name: a, kind: buffer, access: read, element: f32 }
          - { name: b, kind: buffer, access: write, element: f32, count: domain, when: "M=x|y" }
          - { name: b, kind: buffer, access: write, element: f32, count: 4, when: "M=y" }
        specialize:
          - { name: M, options: [x, y, z] }
        """,
    )
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/dupwhen")
    assert str(info.value) == (
        f"{path}: bindings[b]: expected distinct binding names in each variant (two bindings "
        "'b' hold in M=y), got 'b'"
    )


def test_one_name_per_variant_is_accepted(lab):
    kernel(
        lab,
        "onename",
        """
        bindings:
          - { name: a, kind: buffer, access: read, element: f32 }
          - { name: b, kind: buffer, access: write, element: f32, count: domain, when: "M=x" }
          - { name: b, kind: buffer, access: write, element: f32, count: 4, when: "M=y" }
        specialize:
          - { name: M, options: [x, y] }
        """,
    )
    ref = asset.resolve("hardlab/onename")
    assert ref.variant({"M": "y"}).bindings["b"].count == 4
    assert ref.variant({"M": "x"}).bindings["b"].count == "domain"


def test_yaml_aliases_are_refused_fast(lab):
    # the 388-byte "billion laughs" shape: nine levels of nine aliases each
    lines = ["bindings: []", 'x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, 9):
        refs = ",".join([f"*a{k - 1}"] * 9)
        lines.append(f"x{k}: &a{k} [{refs}]")
    path = kernel(lab, "bomb", "\n".join(lines) + "\n")
    t0 = time.perf_counter()
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/bomb")
    assert time.perf_counter() - t0 < 2.0
    assert str(info.value).startswith(
        f"{path}: expected YAML without aliases, merge keys or repeated keys, got an alias *a0 at"
    )


def test_a_merge_key_is_refused(lab):
    path = kernel(
        lab,
        "merge",
        """
        base: &base { kind: buffer, access: read, element: f32 }
        bindings:
          - { <<: *base, name: a }
        """,
    )
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/merge")
    assert str(info.value).startswith(
        f"{path}: expected YAML without aliases, merge keys or repeated keys, got"
    )


def test_a_repeated_key_is_refused(lab):
    path = kernel(
        lab,
        "rekey",
        """
        bindings:
          - { name: a, name: b, kind: buffer, access: read, element: f32 }
        """,
    )
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/rekey")
    assert str(info.value).startswith(
        f"{path}: expected YAML without aliases, merge keys or repeated keys, got the key "
        "'name' twice in one mapping at"
    )


def test_a_bindings_file_past_the_size_limit_is_refused(lab):
    from procgen_nb.asset._bindings import MAX_BYTES

    path = kernel(lab, "huge", GOOD + "#" * MAX_BYTES + "\n")
    size = path.stat().st_size
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/huge")
    assert str(info.value) == f"{path}: expected at most {MAX_BYTES} bytes, got {size}"


@pytest.mark.parametrize(
    "length, expected",
    [
        ("-1", "an integer >= 0"),
        ("many", "'domain', 'any' or an integer >= 0"),
        ("true", "'domain', 'any' or an integer >= 0"),
    ],
)
def test_a_bad_length_is_refused(lab, length, expected):
    path = kernel(
        lab,
        "badlen",
        GOOD.replace("element: f32 }", f"element: f32, length: {length} }}", 1),
    )
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/badlen")
    value = {"-1": -1, "many": "many", "true": True}[length]
    assert str(info.value) == f"{path}: bindings[a].length: expected {expected}, got {value!r}"


def test_length_rules_of_the_library():
    gather = asset.resolve("procgen/gather").variant({})
    assert gather.bindings["src"].length_rule() == "any"
    assert gather.bindings["idx"].length_rule() == "domain"
    assert gather.bindings["dst"].length_rule() == "domain"
    jump = asset.resolve("procgen/jump").variant({})
    assert jump.bindings["moved"].length_rule() == 1
    assert asset.resolve("procgen/hash_hook").variant({}).bindings["slots"].length_rule() == "any"


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "a\\b", "", "a b"])
def test_an_identity_that_leaves_its_folder_is_refused(lab, name):
    # a bindings.yaml one level up would load from the parent of the added folder
    (lab / "bindings.yaml").write_text(GOOD)
    with pytest.raises(AssetError) as info:
        asset.resolve(f"hardlab/{name}")
    assert str(info.value) == (
        "asset.resolve(identity): expected a kernel name of letters, digits, '_', '.' and '-' "
        f"not starting with '.' (inside its folder), got {name!r} in {'hardlab/' + name!r}"
    )


def test_a_kernel_folder_linked_outside_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    kernel(outside, "away", GOOD)
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside / "away", root / "away")
    asset.add_path("hardlink", root)
    try:
        with pytest.raises(AssetError) as info:
            asset.resolve("hardlink/away")
        assert str(info.value) == (
            f"asset.resolve(identity): expected a kernel folder inside {str(root.resolve())!r}, "
            f"got 'hardlink/away' leading to {str((outside / 'away').resolve())!r}"
        )
    finally:
        asset.remove_path("hardlink")


def test_a_kernel_file_linked_outside_its_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.py").write_text(SRC.format(name="linked"))
    root = tmp_path / "root"
    root.mkdir()
    folder = kernel(root, "linked", GOOD).parent
    (folder / "linked.py").unlink()
    os.symlink(outside / "elsewhere.py", folder / "linked.py")
    asset.add_path("hardfile", root)
    try:
        with pytest.raises(AssetError) as info:
            asset.resolve("hardfile/linked")
        assert str(info.value) == (
            f"asset.resolve(identity): expected linked.py inside {str(folder.resolve())!r}, "
            f"got 'hardfile/linked' leading to {str((outside / 'elsewhere.py').resolve())!r}"
        )
    finally:
        asset.remove_path("hardfile")


def test_a_bindings_file_that_is_not_utf8_is_refused(lab):
    path = kernel(lab, "latin", GOOD)
    path.write_bytes(b"doc: \xff\xfe\n" + GOOD.encode())
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/latin")
    assert str(info.value).startswith(f"{path}: expected UTF-8 text, got ")


def test_a_deeply_nested_bindings_file_is_refused(lab):
    path = kernel(lab, "deep", "doc: " + "[" * 50_000 + "]" * 50_000 + "\n" + GOOD)
    with pytest.raises(BindingsFileError) as info:
        asset.resolve("hardlab/deep")
    assert str(info.value) == (
        f"{path}: expected YAML nested a few levels deep, got nesting past Python's recursion limit"
    )
