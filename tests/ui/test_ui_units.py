"""The built-in generators' and gate generators' Params state units, and the form shows them."""

from __future__ import annotations

import pytest

from procgen_nb.track_gen.plugin import registry
from procgen_nb.ui import params_form

#: fields with a length, an angle or a ratio to something: the unit each states
UNITS = {
    ("generator", "polar"): {"radius_jitter": "x radius", "min_radius": "x radius"},
    ("generator", "checkpoint"): {"angle_jitter": "x sector"},
    ("generator", "bezier"): {"grid": "cells", "jitter": "x cell"},
    ("generator", "hull"): {"displacement": "x edge", "grid": "cells"},
    ("generator", "voronoi"): {"ring": "x scale", "wobble": "x ring", "jitter": "x cell"},
    ("gate_generator", "arc_length"): {"spacing": "world", "jitter": "x gap", "max_count": "gates"},
    ("gate_generator", "curvature"): {"threshold": "rad", "window": "points"},
    ("gate_generator", "free"): {"min_distance": "x half-side", "tries": "per gate"},
}


def _params(kind, name):
    obj = registry.get(kind, name)
    return obj.Params if isinstance(getattr(obj, "Params", None), type) else obj.params


@pytest.mark.parametrize(("kind", "name"), list(UNITS))
def test_the_form_labels_show_each_fields_unit(kind, name):
    cls = _params(kind, name)
    fields = cls.fields()
    for key, unit in UNITS[kind, name].items():
        assert fields[key].unit == unit, key
    form = params_form(cls)
    try:
        for key, f in fields.items():
            label = form.widget(key).description
            if f.unit:
                assert label.endswith(f"[{f.unit}]"), (key, label)
            else:
                assert "[" not in label
    finally:
        form.close()
