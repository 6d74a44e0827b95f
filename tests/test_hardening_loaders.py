"""Issue 21, item 4: bindings.yaml's duplicate-name check is quadratic, not exponential,
and ``init``/``count`` values are checked against the element type when the file loads."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procgen_nb import asset
from procgen_nb.asset import _bindings
from procgen_nb.asset._preprocess import when_holds
from procgen_nb.errors import BindingsFileError

SRC = """
import warp as wp

@wp.kernel
def {name}(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32)):
    i = wp.tid()
    b[i] = a[i]
"""


@pytest.fixture
def lab(tmp_path):
    asset.add_path("loadlab", tmp_path)
    yield tmp_path
    asset.remove_path("loadlab")


def kernel(root: Path, name: str, yml: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / f"{name}.py").write_text(SRC.format(name=name))
    (folder / "bindings.yaml").write_text(textwrap.dedent(yml))
    return folder / "bindings.yaml"


def _count_meets(monkeypatch) -> list[int]:
    """Counts the pairs of alternatives the duplicate check compares (its work)."""
    calls = [0]
    real = _bindings._meet

    def counted(*a):
        calls[0] += 1
        return real(*a)

    monkeypatch.setattr(_bindings, "_meet", counted)
    return calls


def test_26_two_option_keys_load_at_once(lab, monkeypatch):
    keys = [f"K{i}" for i in range(26)]
    spec = "".join(f"  - {{ name: {k}, options: [p, q] }}\n" for k in keys)
    when_a = " ".join(f"{k}=p" for k in keys)
    when_b = " ".join(f"{k}=q" for k in keys[:-1]) + f" {keys[-1]}=p|q"
    yml = (
        "bindings:\n"
        "  - { name: a, kind: buffer, access: read, element: f32 }\n"
        f"  - {{ name: b, kind: buffer, access: write, element: f32, when: '{when_a}' }}\n"
        f"  - {{ name: b, kind: buffer, access: write, element: f32, when: '{when_b}' }}\n"
        "specialize:\n" + spec
    )
    kernel(lab, "wide", yml)
    meets = _count_meets(monkeypatch)
    spec_obj = _bindings.load_spec(lab / "wide", "wide")  # disjoint: K0=p vs K0=q
    assert meets == [1]  # one pair of alternatives checked (2^26 combinations before)
    assert len(spec_obj.bindings) == 3
    # overlapping on every key: refused, naming a variant where both hold
    yml2 = yml.replace(when_b, " ".join(f"{k}=p|q" for k in keys))
    path = kernel(lab, "wide2", yml2)
    with pytest.raises(BindingsFileError, match=r"two bindings 'b' hold in K0=p,") as info:
        _bindings.load_spec(lab / "wide2", "wide2")
    assert str(path) in str(info.value)


def test_400_same_named_bindings_load_fast(lab, monkeypatch):
    opts = ", ".join(f"o{i}" for i in range(400))
    rows = "".join(
        f"  - {{ name: b, kind: buffer, access: write, element: f32, when: 'M=o{i}' }}\n"
        for i in range(400)
    )
    yml = (
        "bindings:\n  - { name: a, kind: buffer, access: read, element: f32 }\n"
        + rows
        + f"specialize:\n  - {{ name: M, options: [{opts}] }}\n"
    )
    kernel(lab, "many", yml)
    meets = _count_meets(monkeypatch)
    spec = _bindings.load_spec(lab / "many", "many")  # was 122 s
    assert meets == [400 * 399 // 2]  # one check per pair of bindings
    assert len(spec.bindings) == 401


def _brute(a: str | None, b: str | None, keys: dict) -> bool:
    """Whether both ``when``s hold in some variant: every combination of every key."""
    names = sorted(keys)
    for combo in itertools.product(*(keys[k] for k in names)):
        opts = dict(zip(names, combo))
        if when_holds(a, opts, "t") and when_holds(b, opts, "t"):
            return True
    return False


_KEYS = {"A": ("x", "y", "z"), "B": ("p", "q"), "C": ("u", "v")}


@st.composite
def _when(draw):
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    alts = []
    for _ in range(draw(st.integers(1, 3))):
        terms = []
        for k in draw(st.lists(st.sampled_from(sorted(_KEYS)), max_size=4)):
            vals = draw(st.lists(st.sampled_from(_KEYS[k]), min_size=1, max_size=3))
            terms.append(f"{k}={'|'.join(vals)}")
        alts.append(" ".join(terms))
    return ";".join(alts)


@settings(max_examples=150, deadline=None)
@given(_when(), _when())
def test_the_pairwise_check_agrees_with_every_combination(a, b):
    bind = [
        _bindings.Binding(name="n", kind="buffer", access="write", element="f32", when=w)
        for w in (a, b)
    ]
    want = _brute(a, b, _KEYS)
    try:
        _bindings._check_names(Path("f.yaml"), tuple(bind), _KEYS)
        got = False
    except BindingsFileError:
        got = True
    assert got == want, (a, b)


# -- init and count against the element type ---------------------------------------------
@pytest.mark.parametrize(
    ("element", "init", "expected"),
    [
        ("i32", "1099511627777", "from -2147483648 to 2147483647 for a i32"),
        ("i32", "2147483648", "from -2147483648 to 2147483647 for a i32"),
        ("u32", "-1", "from 0 to 4294967295 for a u32"),
        ("i32", "2.7", "a whole number for a i32"),
        ("u32", ".nan", "a whole number for a u32"),
        ("f32", "1.0e+30", None),
        ("f32", "1.0e+39", "within float32's range for a f32"),
        ("vec3", "-1.0e+39", "within float32's range for a vec3"),
        ("f32", ".nan", "within float32's range for a f32"),
        ("f32", ".inf", "within float32's range for a f32"),
        ("i32", "1.0e+30", "from -2147483648 to 2147483647 for a i32"),
        ("i32", "-2147483648", None),
        ("u32", "4294967295", None),
        ("i32", "3.0", None),
    ],
)
def test_init_is_checked_against_the_element(lab, element, init, expected):
    name = f"k{abs(hash((element, init))) % 10**8}"
    yml = (
        "bindings:\n  - { name: a, kind: buffer, access: read, element: f32 }\n"
        f"  - {{ name: b, kind: buffer, access: write, element: {element}, init: {init} }}\n"
    )
    path = kernel(lab, name, yml)
    if expected is None:
        spec = _bindings.load_spec(lab / name, name)
        assert spec.bindings[1].init is not None
        return
    with pytest.raises(BindingsFileError, match=expected) as info:
        _bindings.load_spec(lab / name, name)
    assert str(info.value).startswith(f"{path}: bindings[b].init: expected")


def test_init_is_checked_against_every_element_a_key_can_give(lab):
    yml = (
        "bindings:\n  - { name: a, kind: buffer, access: read, element: f32 }\n"
        "  - { name: b, kind: buffer, access: write, element: T, init: 2.5 }\n"
        "specialize:\n  - { name: T, options: [f32, i32] }\n"
    )
    kernel(lab, "keyed", yml)
    with pytest.raises(BindingsFileError, match="whole number for a i32"):
        _bindings.load_spec(lab / "keyed", "keyed")


@pytest.mark.parametrize("count", [2147483648, 2**63, -1])
def test_count_past_int32_is_refused(lab, count):
    name = f"c{abs(count) % 10**6}{'n' if count < 0 else ''}"
    yml = (
        "bindings:\n  - { name: a, kind: buffer, access: read, element: f32 }\n"
        f"  - {{ name: b, kind: buffer, access: write, element: f32, count: {count} }}\n"
    )
    path = kernel(lab, name, yml)
    with pytest.raises(
        BindingsFileError, match=r"count: expected an integer >= 0 and <= 2147483647"
    ):
        _bindings.load_spec(lab / name, name)
    assert str(path) in str(
        pytest.raises(BindingsFileError, _bindings.load_spec, lab / name, name).value
    )
