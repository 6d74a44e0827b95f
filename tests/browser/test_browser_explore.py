"""End to end in a real browser: JupyterLab + headless Chromium run the explore notebook.

The test starts JupyterLab on 127.0.0.1 (a free port, no token, a temporary root holding a
copy of ``notebooks/06_explore.ipynb``), opens the notebook in Debian's Chromium driven by
Playwright (no browser download: ``executable_path`` is the system Chromium), runs all
cells, drags the first slider of the explore view, and checks that the drawn view and the
live counts changed. A screenshot is kept under ``artifacts/``. Every wait is bounded.

Skipped, with the reason, where Chromium, Playwright or JupyterLab is missing (see
``tools/install_browser.sh``); with ``CI=true`` a missing piece fails the test instead.
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

import pytest

pytestmark = pytest.mark.browser

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06_explore.ipynb"
ARTIFACTS = ROOT / "artifacts"
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
RUN_ALL_S = 150
FOLLOW_S = 60


def _chromium() -> str | None:
    """Returns the Chromium to drive: ``$CHROMIUM`` when set (only it), else Debian's."""
    if "CHROMIUM" in os.environ:
        c = os.environ["CHROMIUM"]
        return c if os.access(c, os.X_OK) else None
    for c in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if os.access(c, os.X_OK):
            return c
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _missing() -> str | None:
    if _chromium() is None:
        where = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        return f"Chromium is not installed at {where} (run: bash tools/install_browser.sh)"
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if importlib.util.find_spec("jupyterlab") is None:
        return "jupyterlab is not installed (pip install -e '.[test]')"
    return None


_REASON = _missing()
if _REASON is not None:
    if os.environ.get("CI") == "true":
        pytest.fail(
            f"browser test: {_REASON} (CI=true: tools/install_browser.sh must install it)",
            pytrace=False,
        )
    pytest.skip(f"browser test skipped: {_REASON}", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - 127.0.0.1 only
        return r.read()


def _clean_copy(dst: pathlib.Path) -> None:
    nb = json.loads(NOTEBOOK.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb["metadata"].pop("widgets", None)
    dst.write_text(json.dumps(nb, indent=1))


def _warm_kernel_cache() -> None:
    """Builds the notebook's kernels here first (Warp's disk cache), so the notebook's own
    kernel loads them instead of compiling them inside the browser's bounded waits."""
    from procgen_nb.demo import build_demo_graph
    from procgen_nb.track_gen import presets
    from procgen_nb.track_gen.gates import build

    presets.track(generator="polar", num_envs=2, num_points=16).generate()
    build(2, gate_generator="arc_length", num_points=16)
    build_demo_graph().cook()


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


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on 127.0.0.1 over a temporary root; stopped after the module."""
    _warm_kernel_cache()
    work = pathlib.Path(tempfile.mkdtemp(prefix="procgen_nb_lab_"))
    root = work / "root"
    root.mkdir()
    _clean_copy(root / NOTEBOOK.name)
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
                pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{_tail(work)}")
            try:
                _get(f"{base}/api/status", 2.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer in {SERVER_START_S}s:\n{_tail(work)}")
                time.sleep(0.5)
        yield base
    finally:
        _stop(base, proc)
        log.close()
        shutil.rmtree(work, ignore_errors=True)


def _tail(work: pathlib.Path) -> str:
    with contextlib.suppress(OSError):
        return (work / "server.log").read_text()[-3000:]
    return ""


def _stop(base: str, proc: subprocess.Popen) -> None:
    """Shuts the kernels down, then the server (its process group, which this test started)."""
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


_IMAGE_DIGEST = """async (img) => {
    const r = await fetch(img.src);
    const d = await crypto.subtle.digest("SHA-256", await r.arrayBuffer());
    return Array.from(new Uint8Array(d)).map(b => b.toString(16).padStart(2, "0")).join("");
}"""

_IDLE = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
    return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
}"""


def test_explore_notebook_follows_a_slider(lab):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "browser_explore.png"
    profile = tempfile.mkdtemp(prefix="procgen_nb_chromium_")
    try:
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                profile,
                executable_path=_chromium(),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1400, "height": 1800},
                permissions=["clipboard-read", "clipboard-write"],
            )
            ctx.set_default_timeout(30_000)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            try:
                _drive(page, lab, shot)
            except Exception:
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(ARTIFACTS / "browser_explore_failure.png"))
                raise
            finally:
                ctx.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert shot.stat().st_size > 0


def _drive(page, lab: str, shot: pathlib.Path) -> None:
    page.goto(f"{lab}/lab/tree/{NOTEBOOK.name}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    accept = page.locator(".jp-Dialog .jp-mod-accept")
    with contextlib.suppress(Exception):  # older settings: the kernel dialog may still ask
        accept.wait_for(state="visible", timeout=3_000)
        accept.click()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(_IDLE, timeout=RUN_ALL_S * 1000, polling=500)

    view = page.locator(".procgen-explore").first
    view.wait_for(state="visible", timeout=30_000)
    img = view.locator("img.procgen-view")
    counts = view.locator(".procgen-counts-text")
    page.wait_for_function(
        "el => el.textContent.includes('valid envs')", arg=counts.element_handle()
    )
    view.scroll_into_view_if_needed()
    before_src = img.get_attribute("src")
    before_digest = img.evaluate(_IMAGE_DIGEST)
    before_counts = counts.inner_text()
    before_text = counts.text_content()
    slider = view.locator(".widget-slider").first
    readout = slider.locator(".widget-readout")
    before_readout = readout.inner_text()

    handle = slider.locator(".noUi-handle").first
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    for dx in range(10, 70, 10):  # a drag: several values on the way
        page.mouse.move(box["x"] + box["width"] / 2 + dx, box["y"] + box["height"] / 2)
        page.wait_for_timeout(50)
    page.mouse.up()
    if readout.inner_text() == before_readout:  # a short track: step with the keyboard
        handle.focus()
        for _ in range(3):
            page.keyboard.press("ArrowRight")
    assert readout.inner_text() != before_readout

    page.wait_for_function(
        "([el, old]) => el.textContent !== old",
        arg=[counts.element_handle(), before_text],
        timeout=FOLLOW_S * 1000,
    )
    page.wait_for_function(
        "([el, old]) => el.getAttribute('src') !== old",
        arg=[img.element_handle(), before_src],
        timeout=FOLLOW_S * 1000,
    )
    status = view.locator(".procgen-status")
    page.wait_for_function(
        "el => el.textContent.includes('cooked in')",
        arg=status.element_handle(),
        timeout=FOLLOW_S * 1000,
    )
    after_counts = counts.inner_text()
    after_digest = img.evaluate(_IMAGE_DIGEST)

    # "Copy as code" writes the current parameters to the clipboard, as Python
    lobes = readout.inner_text().strip()
    view.locator(".procgen-copy-button").click()
    page.wait_for_function(
        "el => el.textContent.includes('copied the parameters')",
        arg=view.locator(".procgen-copy-note").element_handle(),
        timeout=FOLLOW_S * 1000,
    )
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "presets.track(" in copied and f"'lobes': {lobes}," in copied, copied
    view.screenshot(path=str(shot))
    assert after_counts != before_counts
    assert after_digest != before_digest
    assert "valid envs" in after_counts
