"""benchmarks/gpu.sh: its plumbing runs here (``--smoke``: the CPU, a small size), and its GPU
steps' time limits add up to less than eight minutes."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from procgen_nb.track_gen import plugin

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu.sh"


def test_the_gpu_steps_fit_in_eight_minutes_and_name_files_that_exist():
    text = SCRIPT.read_text()
    gpu_branch = text.split('if [ "$smoke" = 1 ]; then')[1].split("else", 1)[1].split("fi\n")[0]
    devices = int(re.search(r"^step devices (\d+) ", text, re.M)[1])
    gpu_steps = [int(n) for n in re.findall(r"step \w+ (\d+) ", gpu_branch)]
    assert len(gpu_steps) == 2  # the CUDA tests and the checks
    assert devices + sum(gpu_steps) < 8 * 60
    for path in re.findall(r"(tests/[\w/]+\.py|tests/\w+|benchmarks/\w+\.py)", text):
        assert (ROOT / path).exists(), path


def test_the_smoke_run_prints_one_table_with_every_generator_passing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    res = subprocess.run(
        ["bash", str(SCRIPT), "--smoke", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    table = res.stdout.split("== the table:\n")[1].splitlines()
    assert table[0].startswith("device cpu, N=64")
    rows = {ln.split("  ")[0].strip(): ln for ln in table[2:-1]}
    for name in plugin.registry.available("generator"):
        assert " PASS " in rows[f"replay {name}"], rows
        assert re.search(r"[\d,]+ valid/s", rows[f"throughput {name} E=64"]), rows
    assert " PASS " in rows["replay graph with live counts"]
    assert " PASS " in rows["guards read deferred"]
    assert table[-1] == f"{len(table) - 3} rows, 0 failed"
    assert (tmp_path / "checks.txt").exists() and (tmp_path / "devices.txt").exists()
