"""kernel_form: a kernel's specialize options and uniforms as controls, fed to device.kernel."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import pytest

from procgen_nb import asset, ops
from procgen_nb.errors import ParamsError
from procgen_nb.ui import kernel_form

INSIDE = asset.resolve("procgen/inside", "computeShader")
REDUCE = asset.resolve("procgen/reduce", "computeShader")


def test_options_are_choices_and_uniforms_number_boxes():
    form = kernel_form(INSIDE)
    assert list(form.controls) == [
        "specialize.SHAPE",
        "uniforms.center",
        "uniforms.radius",
        "uniforms.inner",
    ]
    assert type(form.widget("specialize.SHAPE")) is widgets.ToggleButtons
    assert [v for _, v in form.widget("specialize.SHAPE").options] == ["disk", "square", "ring"]
    assert [type(w) for w in form.controls["uniforms.center"].widgets] == [widgets.FloatText] * 2
    assert type(form.widget("uniforms.radius")) is widgets.FloatText
    assert "specialize.COUNT" not in form.controls  # device.kernel picks it from the domain
    assert type(kernel_form(REDUCE).widget("specialize.FOLD")) is widgets.ToggleButtons


def test_kernel_args_follow_the_chosen_variant():
    form = kernel_form(INSIDE, specialize={"SHAPE": "ring"}, uniforms={"radius": 0.6})
    form.widget("uniforms.inner").value = 0.25
    assert form.kernel_args() == {
        "specialize": {"SHAPE": "ring"},
        "uniforms": {"center": (0.0, 0.0), "radius": 0.6, "inner": 0.25},
    }
    form.widget("specialize.SHAPE").value = "square"
    args = form.kernel_args()
    assert args["specialize"] == {"SHAPE": "square"} and "inner" not in args["uniforms"]


@pytest.mark.parametrize("shape", ["disk", "square", "ring"])
def test_form_values_drive_the_kernel_like_numpy(device, shape):
    rng = np.random.default_rng(4)
    pts = rng.uniform(-1, 1, size=(500, 2)).astype(np.float32)
    form = kernel_form(INSIDE)
    form.widget("specialize.SHAPE").value = shape
    form.widget("uniforms.center", 0).value = 0.25
    form.widget("uniforms.radius").value = 0.5
    form.widget("uniforms.inner").value = 0.2
    col = ops.transfer.upload(values={"P": pts}, device=device)["columns"]["P"]
    flags = ops.device.kernel(kernel=INSIDE, bind={"points": col}, domain=col, **form.kernel_args())
    got = np.array(ops.transfer.readback(columns={"f": flags["columns"]["flags"]})["values"]["f"])
    d = pts - np.array([0.25, 0.0], np.float32)
    r = np.hypot(d[:, 0], d[:, 1])
    want = {
        "disk": r <= np.float32(0.5),
        "square": (np.abs(d) <= np.float32(0.5)).all(axis=1),
        "ring": (r <= np.float32(0.5)) & (r >= np.float32(0.2)),
    }[shape]
    np.testing.assert_array_equal(got, want.astype(int))


def test_refusals():
    with pytest.raises(ParamsError, match="expected a resolved kernel"):
        kernel_form("procgen/inside")
    with pytest.raises(ParamsError, match=r"specialize: expected keys among \['SHAPE'\]"):
        kernel_form(INSIDE, specialize={"COUNT": "device"})
    with pytest.raises(ParamsError, match="uniforms: expected names among"):
        kernel_form(INSIDE, uniforms={"center_x": 1.0})
    with pytest.raises(ParamsError, match="expected one of"):
        kernel_form(INSIDE, specialize={"SHAPE": "hex"})


def test_uniform_bounds_doc_and_unit_from_bindings_when_given():
    """A bindings.yaml may give a uniform bounds, soft bounds, a doc and a unit; the form
    uses them (and works as before where none are given)."""
    import types

    class Spec:
        uniforms = {
            "radius": {"bounds": [0.0, 2.0], "soft": [0.0, 1.0], "unit": "world", "doc": "r"}
        }

        def option_names(self):
            return {}

    class Kernel:
        identity = "test/fake"
        spec = Spec()

        def variant(self, spec):
            return types.SimpleNamespace(uniforms={"radius": float, "gain": float})

    form = kernel_form(Kernel())
    r = form.widget("uniforms.radius")
    # the slider starts on the soft range (its step from it), widens to the bounds
    assert isinstance(r, widgets.FloatSlider) and (r.min, r.max) == (0.0, 1.0)
    assert r.description == "radius [world]" and "r" in r.tooltip
    assert isinstance(form.widget("uniforms.gain"), widgets.FloatText)
