"""The abi seed's columns bindings read by NAME_col_<column>, with no order, against NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import warp as wp
from hypothesis import given, settings
from hypothesis import strategies as st

import procgen_nb as pg
from procgen_nb import asset, ops
from procgen_nb.asset._preprocess import accessors, reads_by_name
from procgen_nb.columns import Geometry, column_from_numpy
from procgen_nb.errors import BindingError, BindingsFileError

KERNELS = Path(__file__).parent / "assets" / "kernels"


@pytest.fixture(scope="module")
def byname():
    asset.add_path("tkbyname", KERNELS)
    yield asset.resolve("tkbyname/tk_byname", "computeShader")
    asset.remove_path("tkbyname")


def _table(device, speed, mass, pos, extra):
    t = {
        "speed": column_from_numpy(speed, "Float", device),
        "mass": column_from_numpy(mass, "Int", device),
        "pos": column_from_numpy(pos, "Vec2", device),
    }
    for name in extra:  # other columns move the packed rows of the ones read
        t[name] = column_from_numpy(np.full((len(speed), 3), 9.0, np.float32), "Vec3", device)
    return t


def _host(col):
    wp.synchronize()
    return col.data.numpy()


@settings(max_examples=8, deadline=None)
@given(
    n=st.integers(1, 9),
    extra=st.sampled_from([(), ("aa",), ("mid", "zz"), ("a0", "n", "q", "zzz")]),
    mode=st.sampled_from(["sum", "product"]),
    seed=st.integers(0, 2**16),
)
def test_a_kernel_reads_its_columns_by_name_without_order(byname, n, extra, mode, seed):
    """Seed: "A columns binding takes a table of Columns, packed on the device into one
    buffer in the order the binding's order field states ..., and in sorted-name order
    where the binding states none. A kernel that reads its columns by slot number states
    order; one that reads them by NAME_col_<column> needs none." Wherever sorting puts
    speed, mass and pos among the other columns, the kernel reads the right ones."""
    rng = np.random.default_rng(seed)
    speed = rng.uniform(-2, 2, n).astype(np.float32)
    mass = rng.integers(-50, 50, n).astype(np.int32)
    pos = rng.uniform(-3, 3, (n, 2)).astype(np.float32)
    out = ops.device.kernel(
        kernel=byname,
        specialize={"MODE": mode},
        bind={"cols": _table("cpu", speed, mass, pos, extra)},
        domain=n,
    )["columns"]
    want = speed + 100.0 * mass if mode == "sum" else speed * mass
    np.testing.assert_allclose(_host(out["dst"]), want.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(_host(out["dpos"]), pos * speed[:, None], rtol=1e-6)


def test_by_name_over_a_geometry_class_and_on_each_device(byname, device):
    """Seed: "columns (input) is a table of Columns, or a class of a Geometry, whose
    columns every read binding left unbound takes by its own name" and "an unbound
    columns binding takes every column of it"."""
    speed = np.asarray([1.0, 2.0, 3.0], np.float32)
    mass = np.asarray([4, 5, 6], np.int32)
    pos = np.asarray([[1, 2], [3, 4], [5, 6]], np.float32)
    geo = Geometry(point=_table(device, speed, mass, pos, ("b",)))
    out = ops.device.kernel(kernel=byname, columns=geo.point)["columns"]
    np.testing.assert_array_equal(_host(out["dst"]), [401.0, 502.0, 603.0])  # hand-worked
    np.testing.assert_array_equal(_host(out["dpos"]), [[1, 2], [6, 8], [15, 18]])


def test_one_variant_per_layout(byname):
    """Each variant is generated for the columns actually bound: one build per layout."""
    t = _table("cpu", np.ones(2, np.float32), np.ones(2, np.int32), np.ones((2, 2)), ("q1",))
    ops.device.kernel(kernel=byname, bind={"cols": t}, domain=2)
    before = pg.traffic()
    ops.device.kernel(kernel=byname, bind={"cols": dict(t)}, domain=2)
    assert (pg.traffic() - before).builds == 0
    v = byname.variant(
        {"MODE": "sum"}, {"cols": (("mass", 1), ("pos", 2), ("q1", 3), ("speed", 1))}
    )
    assert v.by_name == {"cols": {"speed", "mass", "pos"}}
    assert v.layouts["cols"][1] == ("pos", 2)


def test_a_table_without_a_column_read_by_name_is_refused(byname):
    t = _table("cpu", np.ones(2, np.float32), np.ones(2, np.int32), np.ones((2, 2)), ())
    del t["mass"]
    with pytest.raises(
        BindingError,
        match=r"binding 'cols': expected the columns the kernel reads by name "
        r"\(cols_col_mass\), got a table of \['pos', 'speed'\]",
    ):
        ops.device.kernel(kernel=byname, bind={"cols": t}, domain=2)


def test_accessor_text_reads_rows_in_packed_order():
    """Hand-worked layout: a (1 lane), v (3 lanes), z (1 lane) sit at rows 0, 1-3, 4."""
    text = accessors({"cols": (("a", 1), ("v", 3), ("z", 1))})
    assert "def cols_col_a(cols: wp.array2d(dtype=wp.float32), i: int) -> float:" in text
    assert "return wp.vec3f(cols[1, i], cols[2, i], cols[3, i])" in text
    assert "return cols[4, i]" in text
    assert reads_by_name("x = cols_col_a(cols, i) + cols_col_z (cols, i)", "cols") == {"a", "z"}
    with pytest.raises(BindingsFileError, match=r"expected column names that are identifiers"):
        accessors({"cols": (("not a name", 1),)})
