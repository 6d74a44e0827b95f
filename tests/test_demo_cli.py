"""``procgen-nb demo --generator``, its figure's titles, and ``python -m procgen_nb``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from procgen_nb import demo
from procgen_nb.cli import main
from procgen_nb.track_gen.gates import build


def _titles(monkeypatch, **kwargs):
    """Runs the demo with ``demo_figure`` wrapped; returns the figure's titles and labels."""
    seen = {}
    draw = demo.demo_figure

    def spy(*a, **k):
        fig = draw(*a, **k)
        seen["titles"] = [ax.get_title() for ax in fig.axes]
        seen["texts"] = [t.get_text() for ax in fig.axes for t in ax.texts]
        seen["legend"] = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
        return fig

    monkeypatch.setattr(demo, "demo_figure", spy)
    return seen


def test_demo_draws_the_courses_of_the_generator_asked_for(tmp_path, monkeypatch, capsys):
    seen = _titles(monkeypatch)
    out = tmp_path / "d.png"
    assert (
        main(["demo", "--out", str(out), "--n", "50", "--tracks", "3", "--generator", "hull"]) == 0
    )
    text = capsys.readouterr().out
    # the reference: the same courses built directly
    course = build(3, generator="hull", gate_generator="arc_length", num_points=128, seed=7)
    valid = int(np.asarray(course.numpy()["valid"]).astype(bool).sum())
    assert f"{valid} of 3 hull courses valid; " in text
    title = seen["titles"][1]
    assert title.startswith(f"3 hull race-track courses, seed 7: {valid}/3 valid")
    assert "--" not in title and "--" not in seen["titles"][0]  # no command-line notes
    assert "gate number" in seen["legend"]


def test_one_course_is_singular_and_many_leave_the_numbers_out(tmp_path, monkeypatch, capsys):
    seen = _titles(monkeypatch)
    assert main(["demo", "--out", str(tmp_path / "a.png"), "--n", "10", "--tracks", "1"]) == 0
    assert "of 1 polar course valid;" in capsys.readouterr().out
    assert seen["titles"][1].startswith("1 polar race-track course, seed 7")
    assert main(["demo", "--out", str(tmp_path / "b.png"), "--n", "10", "--tracks", "13"]) == 0
    assert "of 13 polar courses valid;" in capsys.readouterr().out
    # 13 cells are too small for gate numbers and env labels: none is written
    assert [t for t in seen["texts"] if t] == [] and "gate number" not in seen["legend"]


def test_demo_says_how_many_modules_it_compiled_and_loaded(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "a.png"), "--n", "10", "--tracks", "1"]) == 0
    out = capsys.readouterr().out
    # the demo loads its modules before the cook: the cook itself loads and builds none
    (total,) = [ln for ln in out.splitlines() if ln.startswith("total: ")]
    assert " loads=0 builds=0 " in total, total
    assert "builds are loads" not in out
    line = [ln for ln in out.splitlines() if ln.startswith("kernel modules:")]
    (line,) = line
    loaded, compiled, cached = (int(w) for w in line.replace(",", " ").split() if w.isdigit())
    assert loaded == compiled + cached  # in this process: whatever earlier tests left unloaded


@pytest.mark.parametrize("name", ["nope", ""])
def test_demo_refuses_an_unknown_generator_before_any_work(tmp_path, name, capsys):
    out = tmp_path / "d.png"
    assert main(["demo", "--out", str(out), "--generator", name]) == 2
    err = capsys.readouterr().err
    assert "--generator: expected one of ['bezier', 'checkpoint', " in err
    assert err.rstrip().endswith(f"got {name!r}")
    assert not out.exists()


def test_python_dash_m_procgen_nb_runs_the_command_line():
    res = subprocess.run(
        [sys.executable, "-m", "procgen_nb", "--help"], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: procgen-nb ")
    assert "demo" in res.stdout and "warmup" in res.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "procgen_nb", "demo", "--n", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "argument --n: expected an integer" in bad.stderr
