"""The abi seed's transfer.readback of a Geometry or a Part of one, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from procgen_nb import ops
from procgen_nb.columns import Geometry, LiveCount, Part, column_from_numpy
from procgen_nb.errors import BindingError


def _geometry(device: str, rng: np.random.Generator):
    pos = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    w = rng.uniform(0, 1, 6).astype(np.float32)
    ids = rng.integers(-5, 5, 6).astype(np.int32)
    tri = rng.integers(0, 6, 4).astype(np.int32)
    geo = Geometry(
        point={
            "P": column_from_numpy(pos, "Vec3", device),
            "w": column_from_numpy(w, "Float", device),
            "id": column_from_numpy(ids, "Int", device),
        },
        prim={"v0": column_from_numpy(tri, "Int", device)},
    )
    return geo, pos, w, ids, tri


def _vec(rows: np.ndarray) -> list[dict[str, float]]:
    return [{c: float(x) for c, x in zip("xyz", r)} for r in rows]


def read(value):
    return ops.transfer.readback(columns={"v": value})["values"]["v"]


def test_a_part_answers_the_copy_holding_what_its_columns_held(device):
    """Seed: "columns is a Record of Columns, live counts, ... or a Geometry or a Part,
    which answers the copy holding what its columns held." A Part is classes of a Geometry
    and of each the columns chosen, over the class's count."""
    geo, pos, w, ids, tri = _geometry(device, np.random.default_rng(3))
    whole = read(geo)
    assert whole == {
        "point": {"count": 6, "P": _vec(pos), "w": w.tolist(), "id": ids.tolist()},
        "prim": {"count": 4, "v0": tri.tolist()},
    }
    part = geo.part(point=["w", "P"])
    assert isinstance(part, Part) and sorted(part.classes) == ["point"]
    assert read(part) == {"point": {"count": 6, "w": w.tolist(), "P": _vec(pos)}}
    assert read(Part(geo, "prim")) == {"prim": {"count": 4, "v0": tri.tolist()}}
    assert read(geo.part("prim", point="id")) == {
        "prim": {"count": 4, "v0": tri.tolist()},
        "point": {"count": 6, "id": ids.tolist()},
    }


def test_a_part_over_a_live_class_count_holds_the_live_elements(device):
    """Seed: "a geometry carries it (class.count = count)": the copy holds the elements
    the class's count states (the first count of each column), read when it is read."""
    geo, pos, w, ids, _ = _geometry(device, np.random.default_rng(4))
    part = geo.part(point="id w")
    words = column_from_numpy(np.asarray([4], np.uint32), "UInt", device)
    geo.point.count = LiveCount(words.data, 6)  # set after the part was made
    assert read(part) == {"point": {"count": 4, "id": ids[:4].tolist(), "w": w[:4].tolist()}}
    geo.point.count = 0
    assert read(part) == {"point": {"count": 0, "id": [], "w": []}}


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (
            lambda g: Part(g),
            r"Part classes: expected at least one of \['point', 'prim'\], got none",
        ),
        (lambda g: g.part("edge"), r"Part class: expected one of \['point', 'prim'\], got 'edge'"),
        (lambda g: g.part(point=["Q"]), r"Part columns of 'point': expected names among .*\['Q'\]"),
        (lambda g: g.part(point=[1]), r"Part columns\['point'\]: expected a list of column names"),
        (lambda g: Part({"point": {}}, "point"), r"Part geometry: expected a Geometry"),
    ],
)
def test_part_refusals(make, match):
    geo, *_ = _geometry("cpu", np.random.default_rng(5))
    with pytest.raises(BindingError, match=match):
        make(geo)
