"""A float uniform or upload takes only what float32 holds: a finite value past its range
(an int past float64, 1e300) is refused naming it, never made inf or a bare OverflowError
(issue 21, the uniforms and uploads rows). NaN and inf given as floats pass."""

from __future__ import annotations

import numpy as np
import pytest

import procgen_nb as pg
from procgen_nb import asset, ops

INSIDE = asset.resolve("procgen/inside", "computeShader")
F32_MAX = float(np.finfo(np.float32).max)
POINTS = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, -2.0]], np.float32)


def _flags(radius):
    @pg.node
    def n():
        pts = ops.transfer.upload(values={"p": POINTS})["columns"]["p"]
        out = ops.device.kernel(
            kernel=INSIDE,
            specialize={"SHAPE": "disk"},
            bind={"points": pts},
            domain=pts,
            uniforms={"center": (0.0, 0.0), "radius": radius},
        )
        return out["columns"]["flags"]

    g = pg.Graph("uniform_ranges")
    g.add("n", n)
    return g.cook().outputs["n"].numpy()


@pytest.mark.parametrize(
    "radius, shown",
    [
        (10**400, "an int of 401 digits"),
        (np.float64(1e300), "np.float64(1e+300)"),
        (3.5e38, "3.5e+38"),
        (-(10**39), "-1" + "0" * 39),
    ],
)
def test_a_float_uniform_past_float32_is_refused_naming_it(radius, shown):
    with pytest.raises(pg.CookError) as info:
        _flags(radius)
    text = str(info.value)
    assert "uniform 'radius'" in text and "float32's range" in text and shown in text


@pytest.mark.parametrize("radius", [F32_MAX, 2**70, 1e20, float("inf"), 2.5])
def test_a_float_uniform_float32_holds_runs(radius):
    # the disk test of procgen/inside, by NumPy in float32: |p - c| <= r
    want = (np.sqrt((POINTS**2).sum(axis=1)) <= np.float32(radius)).astype(int)
    got = _flags(radius)
    assert got.tolist() == want.tolist()


def test_nan_stays_the_callers_choice():
    assert _flags(float("nan")).tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "values, shown, index",
    [
        ([10**400], "an int of 401 digits", 0),
        ([1.0, -(10**400)], "an int of 401 digits", 1),
        ([2.0, 1e300], "1e+300", 1),
        (np.array([0.5, -3.5e38]), "-3.5e+38", 1),
    ],
)
def test_an_upload_past_float32_is_refused_naming_the_value(values, shown, index):
    with pytest.raises(pg.UploadError) as info:
        ops.transfer.upload(values={"a": values})
    text = str(info.value)
    assert "float32's range" in text and shown in text and f"at index {index}" in text


def test_an_upload_float32_holds_keeps_its_values():
    values = [F32_MAX, -F32_MAX, 2.0**70, float("nan"), float("inf")]
    col = ops.transfer.upload(values={"a": values})["columns"]["a"]
    want = np.asarray(values, np.float32)  # NumPy's cast: the reference
    assert np.array_equal(col.numpy(), want, equal_nan=True)
