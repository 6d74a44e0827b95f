"""JupyterLab + headless Chromium, for the browser test and ``benchmarks/browser_latency.py``.

``lab_server(notebooks)`` starts JupyterLab on 127.0.0.1 (a free port, no token, a
temporary root holding clean copies of the notebooks) and stops it, its kernels first;
``browser()`` opens Debian's Chromium through Playwright (no browser download);
``open_and_run(page, base, name)`` opens a notebook, runs all its cells and waits until
every cell ran. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_S = 90
RUN_ALL_S = 240

IDLE = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""


def chromium() -> str | None:
    """Returns the Chromium to drive: ``$CHROMIUM`` when set (only it), else Debian's."""
    if "CHROMIUM" in os.environ:
        c = os.environ["CHROMIUM"]
        return c if os.access(c, os.X_OK) else None
    for c in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.access(c, os.X_OK):
            return c
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing() -> str | None:
    """Says what is missing to drive JupyterLab in Chromium (None: nothing)."""
    if chromium() is None:
        where = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        return f"Chromium is not installed at {where} (run: bash tools/install_browser.sh)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if importlib.util.find_spec("jupyterlab") is None:
        return "jupyterlab is not installed (pip install -e '.[test]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - 127.0.0.1 only
        return r.read()


def clean_copy(src: pathlib.Path, dst: pathlib.Path, replace: dict[str, str] | None = None) -> None:
    """Writes ``src`` without outputs or widget state to ``dst`` (``replace``: text
    substitutions in the code cells)."""
    nb = json.loads(src.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            if replace:
                text = "".join(cell["source"])
                for a, b in replace.items():
                    text = text.replace(a, b)
                cell["source"] = text
    nb["metadata"].pop("widgets", None)
    dst.write_text(json.dumps(nb, indent=1))


def write_notebook(dst: pathlib.Path, cells: list[str]) -> None:
    """Writes a notebook of these code cells to ``dst``."""
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": c,
            }
            for c in cells
        ],
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "name": "python3",
            }
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    dst.write_text(json.dumps(nb, indent=1))


def _lab_settings(folder: pathlib.Path) -> None:
    """Starts the notebook's kernel without asking, and fetches no news."""
    settings = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "autoStartDefaultKernel": True
        },
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for name, value in settings.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


class Lab(str):
    """The base URL of a running JupyterLab (a str), with ``runtime``: its runtime folder."""

    runtime: pathlib.Path


def kernel_client(server: Lab, timeout: float = 30.0):
    """Returns a blocking client of the (one) kernel the server runs: code runs in the
    notebook's own kernel, beside the browser."""
    from jupyter_client import BlockingKernelClient

    deadline = time.monotonic() + timeout
    while True:
        kernels = json.loads(_get(f"{server}/api/kernels"))
        if kernels:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("kernel_client: expected a running kernel, got none")
        time.sleep(0.5)
    path = server.runtime / f"kernel-{kernels[0]['id']}.json"
    client = BlockingKernelClient(connection_file=str(path))
    client.load_connection_file()
    client.start_channels()
    client.wait_for_ready(timeout)
    return client


def run_code(client, code: str, timeout: float = 60.0) -> str:
    """Runs ``code`` in the kernel; returns what it printed.

    Raises:
        RuntimeError: the code raised (its traceback's last line).
    """
    out: list[str] = []
    error: list[str] = []

    def hook(msg):
        kind = msg["header"]["msg_type"]
        if kind == "stream":
            out.append(msg["content"]["text"])
        elif kind == "error":
            error.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")

    client.execute_interactive(code, timeout=timeout, output_hook=hook, allow_stdin=False)
    if error:
        raise RuntimeError(f"run_code: {error[0]}")
    return "".join(out)


@contextlib.contextmanager
def lab_server(fill) -> Iterator[Lab]:
    """Starts JupyterLab over a temporary root that ``fill(root)`` writes notebooks into;
    yields its base URL (a ``Lab``); stops it (kernels first) afterwards.

    Raises:
        RuntimeError: the server exited or did not answer in ``SERVER_START_S``.
    """
    work = pathlib.Path(tempfile.mkdtemp(prefix="procgen_nb_lab_"))
    root = work / "root"
    root.mkdir()
    fill(root)
    _lab_settings(work / "config" / "lab" / "user-settings")
    port = _free_port()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        JUPYTER_CONFIG_DIR=str(work / "config"),
        JUPYTER_RUNTIME_DIR=str(work / "runtime"),
        IPYTHONDIR=str(work / "ipython"),
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    log = open(work / "server.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited ({proc.returncode}):\n{_tail(work)}")
            try:
                _get(f"{base}/api/status", 2.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not answer in {SERVER_START_S}s:\n{_tail(work)}"
                    ) from None
                time.sleep(0.5)
        server = Lab(base)
        server.runtime = work / "runtime"
        yield server
    finally:
        _stop(base, proc)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def _tail(work: pathlib.Path) -> str:
    with contextlib.suppress(OSError):
        return (work / "server.log").read_text()[-3000:]
    return ""


def _stop(base: str, proc: subprocess.Popen) -> None:
    """Shuts the kernels down, then the server (its process group, which we started)."""
    with contextlib.suppress(Exception):
        for k in json.loads(_get(f"{base}/api/kernels")):
            req = urllib.request.Request(f"{base}/api/kernels/{k['id']}", method="DELETE")
            urllib.request.urlopen(req, timeout=5).close()  # noqa: S310 - 127.0.0.1 only
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@contextlib.contextmanager
def browser(viewport: tuple[int, int] = (1280, 800)) -> Iterator:
    """Yields (Playwright context, page) in headless Chromium; closes them afterwards."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="procgen_nb_chromium_")
    try:
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                profile,
                executable_path=chromium(),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": viewport[0], "height": viewport[1]},
                permissions=["clipboard-read", "clipboard-write"],
            )
            ctx.set_default_timeout(30_000)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            try:
                yield ctx, page
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def open_and_run(page, base: str, name: str, run_all_s: float = RUN_ALL_S) -> None:
    """Opens notebook ``name``, runs all cells and waits until each has run."""
    page.goto(f"{base}/lab/tree/{name}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    with contextlib.suppress(Exception):  # older settings: the kernel dialog may still ask
        accept.wait_for(state="visible", timeout=3_000)
        accept.click()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(IDLE, timeout=run_all_s * 1000, polling=500)


def warm_kernel_cache() -> None:
    """Builds the notebooks' kernels here first (Warp's disk cache), so the notebook's own
    kernel loads them instead of compiling them inside the browser's bounded waits."""
    from procgen_nb.demo import build_demo_graph
    from procgen_nb.track_gen import presets
    from procgen_nb.track_gen.gates import build

    presets.track(generator="polar", num_envs=2, num_points=16).generate()
    build(2, gate_generator="arc_length", num_points=16)
    build_demo_graph().cook()
