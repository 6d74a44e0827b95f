"""Bad input to the exporters: the package's error, naming the input, and nothing written."""

from __future__ import annotations

import os

import pytest

from procgen_nb.errors import ExportError, ProcgenError
from procgen_nb.track_gen import export, presets


@pytest.fixture(scope="module")
def gen():
    return presets.track("polar", num_envs=3, num_points=64)


def _left(path) -> list[str]:
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def _refused(match: str, *args, **kwargs) -> ExportError:
    with pytest.raises(ExportError, match=match) as info:
        export.export(*args, **kwargs)
    assert isinstance(info.value, ProcgenError) and isinstance(info.value, ValueError)
    assert "expected" in str(info.value) and "got" in str(info.value)
    return info.value


def test_unknown_format(gen, tmp_path):
    err = _refused("format", gen, "kml", tmp_path / "o")
    assert "'kml'" in str(err) and "tumftm" in str(err)
    assert not (tmp_path / "o").exists()


def test_unknown_option(gen, tmp_path):
    _refused("tumftm options", gen, "tumftm", tmp_path, resolution=2)
    assert _left(tmp_path) == []


@pytest.mark.parametrize("env", [3, -1, 1.5, True, [0, 7]])
def test_env_out_of_range(gen, tmp_path, env):
    err = _refused("env", gen, "tumftm", tmp_path, env=env)
    assert "[0, 3)" in str(err)
    assert _left(tmp_path) == []


def test_width_too_wide(gen, tmp_path):
    err = _refused("width", gen, "opendrive", tmp_path, env=1, width=0.9)
    assert "boundaries cross" in str(err) and "polar_s1_e0" in str(err)
    assert _left(tmp_path) == []
    # every env asked for at once: still nothing written
    _refused("width", gen, "tumftm", tmp_path, env=[0, 1, 2], width=(0.9, 0.02))
    assert _left(tmp_path) == []
    # with env=None, such tracks are skipped and listed
    entry = export.export(gen, "tumftm", tmp_path, width=0.9)
    assert entry["tracks"] == [] and len(entry["skipped"]) == 3


@pytest.mark.parametrize("width", [0, -1.0, "wide", (0.1,), float("nan")])
def test_bad_width_value(gen, tmp_path, width):
    _refused("width", gen, "tumftm", tmp_path, width=width)


@pytest.mark.parametrize("scale", [0, -2.0, float("inf"), "1"])
def test_bad_scale(gen, tmp_path, scale):
    _refused("scale", gen, "tumftm", tmp_path, scale=scale)


def test_out_is_a_file(gen, tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    err = _refused("out", gen, "tumftm", f)
    assert "taken" in str(err)
    assert f.read_text() == "x"


def test_invalid_env_asked_for(tmp_path):
    g = presets.track("polar", num_envs=2, num_points=64, width={"left": 0.8, "right": 0.8})
    err = _refused("env", g, "tumftm", tmp_path, env=0, width=0.01)
    assert "boundaries cross" in str(err)  # the pipeline's reason, named


def test_gates_need_a_course(gen, tmp_path):
    _refused("gates", gen, "gates", tmp_path, env=0)
    assert _left(tmp_path) == []


def test_bad_source(tmp_path):
    _refused("source", [1, 2], "tumftm", tmp_path)


@pytest.mark.parametrize(
    "fmt, opts, needle",
    [
        ("opendrive", {"tolerance": 0}, "tolerance"),
        ("ros-map", {"resolution": -1.0}, "resolution"),
        ("ros-map", {"wall": 0}, "wall"),
        ("ros-map", {"resolution": 1e-9}, "2\\*\\*28"),
        ("fs-cones", {"spacing": 0}, "spacing"),
        ("obj", {"wall_height": -1}, "wall_height"),
    ],
)
def test_bad_format_options(gen, tmp_path, fmt, opts, needle):
    _refused(needle, gen, fmt, tmp_path, env=0, **opts)
    assert _left(tmp_path) == []


def test_a_failed_write_leaves_no_temporary_file(gen, tmp_path, monkeypatch):
    calls = []
    real = os.replace

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(ExportError, match="out"):
        export.export(gen, "ros-map", tmp_path, env=0)
    assert not [n for n in _left(tmp_path) if n.endswith(".tmp")]


def test_a_bare_result_is_named_by_env_and_needs_a_width(gen, tmp_path):
    # a TrackResult alone knows no seed, epoch or validity width
    _refused("width", gen.result, "tumftm", tmp_path, env=0)
    assert _left(tmp_path) == []
    entry = export.export(gen.result, "tumftm", tmp_path, env=[1], width=0.02)
    assert entry["tracks"][0]["files"] == ["track_env1.csv"]
    assert entry["tracks"][0]["seed"] is None


def test_an_env_asked_for_twice_is_refused(gen, tmp_path):
    _refused(
        r"env: expected each env index once, got \[0\] more than once",
        gen,
        "tumftm",
        tmp_path,
        env=(0, 0),
    )
    _refused(r"got \[1, 2\] more than once", gen, "tumftm", tmp_path, env=[2, 1, 0, 1, 2])
    assert _left(tmp_path) == []


def test_tracks_with_the_same_file_names_are_refused(gen, tmp_path):
    (t,) = export.tracks(gen, 0)
    _refused(
        r"source: expected tracks with distinct file names, got \['polar_s",
        [t, t],
        "tumftm",
        tmp_path,
    )
    assert _left(tmp_path) == []


def test_a_cone_spacing_too_small_for_the_track_is_refused_with_its_bound(
    gen, tmp_path, monkeypatch
):
    import numpy as np

    from procgen_nb.track_gen.export import _cones

    (t,) = export.tracks(gen, 0)
    lb, rb = t.boundaries()
    # the boundaries' lengths, each a closed ring
    total = sum(np.hypot(*(np.roll(b, -1, 0) - b).T).sum() for b in (lb, rb))
    err = _refused(
        r"fs-cones spacing: expected metres >= ", gen, "fs-cones", tmp_path, env=0, spacing=1e-9
    )
    assert "got 1e-09" in str(err) and f"{total / 1e6:.6g}" in str(err)
    assert _left(tmp_path) == []
    monkeypatch.setattr(_cones, "MAX_CONES", 100)  # the bound, at a size quick to write
    _refused("at most 100 cones", gen, "fs-cones", tmp_path, env=0, spacing=total / 100 * 0.99)
    c = export.cones(t, spacing=total / 100 * 1.01)
    assert len(c["blue"]) + len(c["yellow"]) <= 100


def _bytes(folder) -> dict[str, bytes]:
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}


@pytest.mark.parametrize("k", range(1, 15))  # 7 files: a backup and a rename each
def test_a_failed_rename_gives_every_file_its_old_bytes(gen, tmp_path, monkeypatch, k):
    export.export(gen, "ros-map", tmp_path, env=[0, 1])
    old = _bytes(tmp_path)
    calls = []
    real = os.replace

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == k:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(ExportError, match="disk full"):
        export.export(gen, "ros-map", tmp_path, env=[0, 1], scale=2.0)
    monkeypatch.setattr(os, "replace", real)
    assert _bytes(tmp_path) == old  # every track's files and the index, no hidden file left
    new = export.export(gen, "ros-map", tmp_path, env=[0, 1], scale=2.0)
    assert new["scale"] == 2.0 and _bytes(tmp_path) != old


@pytest.mark.parametrize("k", [1, 3, 7])
def test_a_failed_rename_into_a_new_folder_leaves_it_empty(gen, tmp_path, monkeypatch, k):
    calls = []
    real = os.replace

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == k:
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(ExportError, match="disk full"):
        export.export(gen, "ros-map", tmp_path, env=[0, 1])
    assert _left(tmp_path) == []
