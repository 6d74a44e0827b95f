"""Every object a notebook shows displays richly: a one-line repr and an HTML table
(with a small picture of the tracks where there are tracks), through IPython's display
formatter as a notebook cell would."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
import warp as wp
from IPython.core.formatters import DisplayFormatter

import procgen_nb as pg
from procgen_nb import ops
from procgen_nb.demo import build_demo_graph
from procgen_nb.track_gen.gates import build

FORMAT = DisplayFormatter()


def shown(obj) -> tuple[str, str]:
    """(text/plain, text/html) as a notebook cell's last line would display ``obj``."""
    data, _ = FORMAT.format(obj)
    assert "text/html" in data, f"{type(obj).__name__} has no HTML view"
    return data["text/plain"], data["text/html"]


def picture(html_text: str) -> np.ndarray:
    """Decodes the inline PNG of an HTML view into an [H, W, 4] RGBA array."""
    import matplotlib.image as mpimg

    (uri,) = re.findall(r"src='data:image/png;base64,([^']+)'", html_text)
    from io import BytesIO

    return mpimg.imread(BytesIO(base64.b64decode(uri)), format="png")


def green_pixels(img: np.ndarray) -> int:
    """Pixels of plot.VALID_COLOR (#2a9d4b) or near it: the valid centerlines drawn."""
    rgb = img[..., :3]
    target = np.array([0x2A, 0x9D, 0x4B]) / 255.0
    return int((np.abs(rgb - target).max(axis=-1) < 0.12).sum())


@pytest.fixture(scope="module")
def tracks():
    return pg.track_gen.presets.track("polar", num_envs=4, num_points=64, seed=2)


def test_track_generator_and_result_show_one_line_and_a_picture(tracks):
    text, html = shown(tracks)
    assert text == "TrackGenerator('polar', 4 envs x 64 points, seed=2, device='cpu')"
    assert "\n" not in text
    res = tracks.generate()
    valid = int(res.valid.numpy().sum())  # the reference: NumPy's count of the flags
    assert f"{valid} of 4 valid" in html and "polar" in html
    assert green_pixels(picture(html)) > 50  # the valid centerlines are drawn
    text, html = shown(res)
    assert text == "TrackResult(4 envs x 64 points, device='cpu', attributes=['z'])" or (
        text == "TrackResult(4 envs x 64 points, device='cpu')"
    )
    assert f"<td style='text-align:left'>{valid} of 4</td>" in html
    assert green_pixels(picture(html)) > 50


def test_an_all_invalid_result_draws_no_valid_colour():
    tg = pg.track_gen.presets.track(
        "polar", num_envs=2, num_points=64, seed=2, validity={"min_turn_radius": 50.0}
    )
    res = tg.generate()
    assert int(res.valid.numpy().sum()) == 0
    _, html = shown(res)
    assert "0 of 2" in html and green_pixels(picture(html)) == 0


def test_course_shows_its_generators_and_valid_count():
    course = build(3, generator="polar", gate_generator="arc_length", num_points=64, seed=1)
    text, html = shown(course)
    assert text == "Course('polar' centerlines, 'arc_length' gates, 3 envs, track_width=0.2)"
    valid = int(np.asarray(course.numpy()["valid"]).astype(bool).sum())
    assert f"{valid} of 3" in html
    picture(html)


def test_graph_record_column_and_cook_report_show_tables():
    g = build_demo_graph()
    text, html = shown(g)
    assert text == "<Graph 'quickstart' nodes=['points', 'keep', 'kept', 'offsets']>"
    assert (
        "4 nodes, in cook order" in html
        and ">points=points; shape=&#x27;disk&#x27;, radius=0.6, inner=0.3<" in html
    )
    result = g.cook(params={"points.n": 100, "points.seed": 1})
    text, html = shown(result.report)
    assert text.startswith("CookReport(4 nodes, ") and "\n" not in text
    assert "launches=4" in text and "replayed=False" in text
    assert "<th>launches</th>" in html
    rec = result["offsets"]
    text, html = shown(rec)
    assert "\n" not in text and text.startswith("Record(")
    for key in rec:
        assert f">{key}</th>" in html
    col = result["points"]
    text, html = shown(col)
    assert text.startswith("Column(") and "\n" not in text
    pts = np.random.default_rng(1).uniform(-1, 1, size=(100, 2)).astype(np.float32)
    # the first values are NumPy's first points
    assert np.array2string(pts[:8], precision=4, separator=", ") in html.replace("&#x27;", "'")


def test_a_live_column_shows_its_live_count():
    g = build_demo_graph()
    result = g.cook(params={"points.n": 200, "points.seed": 4, "keep.radius": 0.5})
    kept = result["kept"]
    pts = np.random.default_rng(4).uniform(-1, 1, size=(200, 2)).astype(np.float32)
    n = int((np.linalg.norm(pts, axis=1) <= np.float32(0.5)).sum())
    _, html = shown(kept)
    assert f"{n} of capacity {kept.live.capacity}" in html


def test_vector_columns_read_back_as_numpy_arrays():
    xy = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)
    col = ops.transfer.upload(values={"P": xy})["columns"]["P"]
    arr = col.numpy()
    assert arr.dtype == np.float32 and arr.shape == (3, 2)
    np.testing.assert_array_equal(arr, [[1, 2], [3, 4], [5, 6]])


def test_readback_as_numpy_gives_arrays_of_the_live_slots():
    xy = np.arange(8, dtype=np.float32).reshape(4, 2)
    col = ops.transfer.upload(values={"P": xy, "f": [1.0, 2.0]})["columns"]
    live = pg.LiveCount(wp.array([3], dtype=wp.uint32, device=col["P"].device), 4)
    got = ops.transfer.readback(
        columns={"P": col["P"].with_live(live), "t": {"f": col["f"]}, "n": live}, as_numpy=True
    )["values"]
    np.testing.assert_array_equal(got["P"], xy[:3])  # only the three live slots
    assert got["P"].shape == (3, 2) and got["P"].dtype == np.float32
    np.testing.assert_array_equal(got["t"]["f"], [1.0, 2.0])
    assert got["n"] == 3
    # the default stays the list of tables the 0.1 interface reads
    plain = ops.transfer.readback(columns={"P": col["P"]})["values"]["P"]
    assert plain[1] == {"x": 2.0, "y": 3.0}


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_readback_refuses_an_as_numpy_that_is_not_a_bool(bad):
    col = ops.transfer.upload(values={"f": [1.0]})["columns"]["f"]
    with pytest.raises(pg.errors.UploadError, match=r"as_numpy: expected True or False, got "):
        ops.transfer.readback(columns={"f": col}, as_numpy=bad)


def test_the_display_helpers_use_plots_colours_and_import_nothing_of_the_package():
    import ast
    from pathlib import Path

    from procgen_nb import _display, plot

    assert (_display.VALID_COLOR, _display.INVALID_COLOR) == (
        plot.VALID_COLOR,
        plot.INVALID_COLOR,
    )
    tree = ast.parse(Path(_display.__file__).read_text())
    relative = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    assert relative == []  # the base layer: every class that shows itself can import it
