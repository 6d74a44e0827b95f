"""Progress of Warp module builds: a bar while kernels compile, nothing when all is cached.

Warp compiles a module (every kernel of one Python module, or one kernel variant) the first
time one of its kernels launches on a device, and keeps the binary in its kernel cache
(``wp.config.kernel_cache_dir``, ``WARP_CACHE_PATH``). A first run on an empty cache spends
most of its time there. ``install()`` (called once by ``init_warp``, Warp's quiet initialisation) wraps Warp's
``Module._compile`` and ``Module._run_codegen`` from outside so that a build that really
compiles shows a tqdm bar naming the module (on stderr in a terminal, a widget in a
notebook through ``tqdm.auto``); a module found in the cache shows nothing.

``PROCGEN_NB_BUILD_LOG=<file>`` appends one line per compiled module (pid, seconds, name)
to a file, in child build processes too (``benchmarks/cold_start.py`` reads it).
``PROCGEN_NB_PROGRESS=0`` turns the bar off, ``=1`` on; unset, it is on except while pytest
runs a test (``PYTEST_CURRENT_TEST``), so that test and notebook outputs stay the same on a
cold and a warm cache.

``_pch`` shares Warp's precompiled header between processes (its build is most of a
process's first compile). ``build`` compiles a list of modules ahead of their first launch, shared out between this
process and child processes (Warp's CPU compiler does not scale across threads).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import _pch, _traffic, _warp_compat

_init_lock = threading.Lock()
_initialized = False


def init_warp() -> None:
    """Initialises Warp once, quietly (the CPU-only driver warning is not an error here).

    Warp's own messages stay off; instead ``install()`` hooks Warp's module builds
    so that a kernel build that really compiles shows a progress bar naming the module.
    """
    global _initialized
    if _initialized:
        return
    import logging

    import warp as wp

    with _init_lock:
        if _initialized:
            return
        wp.config.log_level = logging.WARNING
        wp.config.quiet = True
        fd = os.dup(2)
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 2)
                wp.init()
        finally:
            os.dup2(fd, 2)
            os.close(fd)
        install()
        _initialized = True


_lock = threading.RLock()
_installed = False


def enabled() -> bool:
    """Returns whether builds show a progress bar (see the module docstring)."""
    flag = os.environ.get("PROCGEN_NB_PROGRESS", "").strip().lower()
    if flag in ("0", "off", "false", "no"):
        return False
    if flag in ("1", "on", "true", "yes"):
        return True
    return "PYTEST_CURRENT_TEST" not in os.environ


def cache_dir() -> str:
    """Returns the folder of Warp's kernel cache (where built modules are kept)."""
    import warp as wp

    init_warp()
    return str(wp.config.kernel_cache_dir)


def display_name(module: Any) -> str:
    """Returns a readable name for a Warp module.

    A kernel variant's module (``procgen_variant_<name>_<digest>``) is named by the
    identity and options its preprocessed file records on its first line
    (``procgen/inside [COUNT=plain,SHAPE=disk]``); any other module by its Python name
    with a leading ``procgen_nb.`` dropped.
    """
    name = str(getattr(module, "name", module))
    if name.startswith("procgen_variant_"):
        pymod = sys.modules.get(name)
        path = getattr(pymod, "__file__", None)
        if path:
            try:
                with open(path, encoding="utf-8") as f:
                    first = f.readline()
            except OSError:
                first = ""
            if first.startswith("# ") and " preprocessed from " in first:
                return first[2:].split(" preprocessed from ")[0]
    return name.removeprefix("procgen_nb.")


class Stats:
    """What the builds inside a ``session`` did.

    Attributes:
        compiled: modules Warp compiled.
        cached: modules Warp found in its kernel cache.
        seconds: the session's wall time.
    """

    def __init__(self) -> None:
        self.compiled = 0
        self.cached = 0
        self.seconds = 0.0


class _Bar:
    """One tqdm bar shared by every build that overlaps it; closed when builds go quiet."""

    IDLE_CLOSE_S = 0.75
    TICK_S = 0.25

    def __init__(self) -> None:
        self.bar: Any = None
        self.building: dict[int, str] = {}
        self.last_activity = 0.0
        self.total: int | None = None
        self.held = 0  # sessions that keep the bar open until they end
        self.stats: list[Stats] = []
        self.ticker: threading.Thread | None = None

    def _open(self) -> None:
        from tqdm.auto import tqdm

        fmt = (
            "{desc}: {n_fmt}/{total_fmt} {bar} [{elapsed}<{remaining}{postfix}]"
            if self.total
            else "{desc}: {n_fmt} built [{elapsed}{postfix}]"
        )
        done = self.stats[-1].compiled + self.stats[-1].cached if self.stats and self.total else 0
        self.bar = tqdm(
            total=self.total,
            initial=done,
            desc="procgen_nb: building Warp kernels",
            unit="module",
            file=sys.stderr,
            leave=True,
            bar_format=fmt,
            dynamic_ncols=True,
        )
        self.live = _live(self.bar)
        if self.live and (self.ticker is None or not self.ticker.is_alive()):
            self.ticker = threading.Thread(target=self._tick, name="procgen-build-progress")
            self.ticker.daemon = True
            self.ticker.start()

    def _postfix(self) -> None:
        names = list(self.building.values())
        self.bar.set_postfix_str(("now: " + ", ".join(names)) if names else "", refresh=True)

    def started(self, token: int, name: str) -> None:
        with _lock:
            if not enabled():
                return
            if self.bar is None:
                self._open()
            self.building[token] = name
            self.last_activity = time.monotonic()
            self._postfix()

    def finished(self, token: int, compiled: bool | None) -> None:
        """Notes a ``_compile`` that returned ``compiled`` (None: it raised)."""
        with _lock:
            for st in self.stats:
                if compiled:
                    st.compiled += 1
                elif compiled is not None:
                    st.cached += 1
            was_building = self.building.pop(token, None) is not None
            if self.bar is None:
                return
            self.last_activity = time.monotonic()
            if compiled is not None and (was_building or self.total):
                self.bar.update(1)
            self._postfix()

    def close(self) -> None:
        with _lock:
            if self.bar is None:
                return
            bar, self.bar = self.bar, None
            self.building.clear()
            bar.set_description_str("procgen_nb: built Warp kernels", refresh=False)
            bar.set_postfix_str(f"cache {human_path(cache_dir())}", refresh=False)
            bar.close()

    def _tick(self) -> None:
        while True:
            time.sleep(self.TICK_S)
            with _lock:
                if self.bar is None:
                    self.ticker = None
                    return
                if self.building:
                    self.bar.refresh()  # the elapsed time moves while a module compiles
                elif not self.held and time.monotonic() - self.last_activity > self.IDLE_CLOSE_S:
                    self.close()


def _live(bar: Any) -> bool:
    """Whether a bar redraws in place: a notebook widget, or a terminal on stderr."""
    if type(bar).__module__.startswith("tqdm.notebook"):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


_bar = _Bar()
atexit.register(_bar.close)


@contextlib.contextmanager
def session(total: int | None = None) -> Iterator[Stats]:
    """Keeps one bar for every build inside the block (closed at its end, if one opened).

    Args:
        total: how many module loads the block expects (``None``: unknown); with a total,
            loads found in the cache move the bar too once it is open.

    Yields:
        The block's ``Stats``, filled in as modules load.
    """
    st = Stats()
    t0 = time.perf_counter()
    with _lock:
        _bar.held += 1
        _bar.stats.append(st)
        if total is not None:
            _bar.total = total
    try:
        yield st
    finally:
        with _lock:
            _bar.held -= 1
            _bar.stats.remove(st)
            if not _bar.held:
                _bar.close()
                _bar.total = None
        st.seconds = time.perf_counter() - t0


# ---------------------------------------------------------------------------- the Warp hook

_local = threading.local()


def install() -> None:
    """Wraps Warp's ``Module._compile`` and ``Module._run_codegen`` once (idempotent).

    Each ``_compile`` (Warp's step of a module load) counts a load in ``traffic()``, and a
    build when it really compiled.

    On a Warp without those names (``_warp_compat``), builds run without a bar or a log.
    """
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return

        def make_compile(compile_: Any) -> Any:
            def _compile(self: Any, device: Any = None, *args: Any, **kwargs: Any) -> Any:
                token = id(threading.current_thread()) ^ id(self)
                outer = getattr(_local, "token", None)
                _local.token = token
                result = None
                t0 = time.perf_counter()
                try:
                    result = bool(_pch.compile_and_publish(compile_, self, device, *args, **kwargs))
                    _traffic._count_load(result)  # a load; a build too when Warp compiled
                    if result and os.environ.get("PROCGEN_NB_BUILD_LOG"):
                        _log_build(self, time.perf_counter() - t0)
                    return result
                finally:
                    _local.token = outer
                    if not (result is False and getattr(_local, "silent", False)):
                        _bar.finished(token, result)  # (a child's build, loaded here: once)

            return _compile

        def make_codegen(codegen: Any) -> Any:
            def _run_codegen(self: Any, *args: Any, **kwargs: Any) -> Any:
                token = getattr(_local, "token", None)
                if token is not None:
                    _bar.started(token, display_name(self))
                return codegen(self, *args, **kwargs)

            return _run_codegen

        if _warp_compat.wrap_module_method("_compile", make_compile):
            _warp_compat.wrap_module_method("_run_codegen", make_codegen)
        _pch.install()
        _installed = True


def _log_build(module: Any, seconds: float) -> None:
    with contextlib.suppress(OSError), open(os.environ["PROCGEN_NB_BUILD_LOG"], "a") as f:
        f.write(f"{os.getpid()}\t{seconds:.3f}\t{display_name(module)}\n")


def warp_modules(prefix: str) -> list[Any]:
    """Returns the imported Warp modules named ``prefix`` or under ``prefix.`` that hold kernels."""
    return [
        m
        for name, m in sorted(_warp_compat.user_modules().items())
        if (name == prefix or name.startswith(prefix + ".")) and _warp_compat.kernels(m)
    ]


def loaded(module: Any, device: str) -> bool:
    """Returns whether ``module`` is already loaded on ``device`` in this process."""
    return _warp_compat.is_loaded(module, device)


def cached(module: Any, device: str) -> bool:
    """Returns whether Warp's kernel cache holds ``module``'s binary for ``device``."""
    return _warp_compat.is_cached(module, device)


def _plain_options(module: Any) -> dict[str, Any]:
    """A Warp module's options a child process sets again before it builds the module (the
    JSON-able ones: a variant's ``enable_backward=False`` is set after its import, so the
    child's module would otherwise hash, and build, differently)."""
    return {
        k: v for k, v in module.options.items() if v is None or type(v) in (bool, int, float, str)
    }


_CHILD = r"""
import importlib, importlib.util, json, sys
job = json.loads(sys.argv[1])
sys.path[:] = job["path"]
from procgen_nb import _progress
from procgen_nb.device import _init_warp
_init_warp()
import warp as wp
dev = wp.get_device(job["device"])
import os, time
from procgen_nb import _pch, _warp_compat
deadline = time.monotonic() + float(os.environ.get("PROCGEN_NB_WAIT_PCH", "0"))
while time.monotonic() < deadline and not _pch.shared_files():
    time.sleep(0.05)  # the parent is building the precompiled header
for name, file, options in job["modules"]:
    if name not in sys.modules:
        if file:
            spec = importlib.util.spec_from_file_location(name, file)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        else:
            importlib.import_module(name)
    m = _warp_compat.module_of(sys.modules[name])
    m.options.update(options)  # the parent's (a variant's enable_backward=False): one hash
    was_cached = _progress.cached(m, job["device"])
    if not was_cached:
        print("START", _progress.display_name(m), flush=True)
    _warp_compat.load(m, dev)
    print("DONE", 0 if was_cached else 1, flush=True)
"""


def _cost(module: Any) -> int:
    return _warp_compat.source_size(module) + 2000


def _split(modules: list[Any], bins: int) -> list[list[Any]]:
    """Splits modules into ``bins`` lists of about equal source size (largest first)."""
    out: list[list[Any]] = [[] for _ in range(bins)]
    load = [0] * bins
    for m in sorted(modules, key=_cost, reverse=True):
        k = load.index(min(load))
        out[k].append(m)
        load[k] += _cost(m)
    return out


def _spawn(modules: list[Any], device: str, wait_pch: bool = False) -> Any:
    import json
    import subprocess

    import warp as wp

    job = {
        "path": [p for p in sys.path if p],
        "device": device,
        "modules": [
            [m.name, getattr(sys.modules.get(m.name), "__file__", None), _plain_options(m)]
            for m in modules
        ],
    }
    env = dict(os.environ, PROCGEN_NB_PROGRESS="0")
    if wait_pch:
        env["PROCGEN_NB_WAIT_PCH"] = "60"  # seconds at most
    cache = os.path.normpath(str(wp.config.kernel_cache_dir))
    if os.path.basename(cache) == wp.config.version:
        env["WARP_CACHE_PATH"] = os.path.dirname(cache)
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(job)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _follow(proc: Any) -> None:
    """Moves the bar along a child's START/DONE lines."""
    token = id(proc)
    for line in proc.stdout:
        if line.startswith("START "):
            _bar.started(token, line[6:].strip())
        elif line.startswith("DONE"):
            _bar.finished(token, line.split()[-1] == "1")
    proc.wait()
    _bar.finished(token, None)


def build(modules: list[Any], device: str, workers: int = 2) -> list[tuple[str, Exception]]:
    """Builds and loads ``modules`` on ``device``, ``workers`` compiles at once.

    On the CPU, modules missing from Warp's kernel cache are shared out (by source size)
    between this process and ``workers - 1`` child processes that compile into the same
    cache (Warp's CPU compiler scales across processes, not across threads); then every
    module is loaded here. A module the children could not build is built here, so its
    error is the one Warp raises.

    Returns:
        ``(name, error)`` for each module that failed to build.
    """
    import threading as _threading

    import warp as wp

    init_warp()
    dev = wp.get_device(device)
    todo = [m for m in modules if not loaded(m, str(dev))]
    children: list[Any] = []
    theirs: set[int] = set()  # modules a child process builds
    failed: list[tuple[str, Exception]] = []
    if dev.is_cpu and workers > 1:
        missing = [m for m in todo if not cached(m, str(dev))]
        first = None
        if len(missing) > 1 and _pch.enabled() and not _pch.shared_files():
            # this process builds the precompiled header (with its smallest module) while
            # the children start up; they wait for it instead of each building their own
            first = min(missing, key=_cost)
            missing.remove(first)
        shares = _split(missing, min(workers, max(1, len(missing))))
        for share in shares[1:]:
            proc = _spawn(share, str(dev), wait_pch=first is not None)
            t = _threading.Thread(target=_follow, args=(proc,), daemon=True)
            t.start()
            children.append((proc, t))
            theirs |= {id(m) for m in share}
        todo.sort(key=lambda m: (m is not first, id(m) in theirs))  # own loads first
    failed += _load_all(todo, dev, theirs, children)
    return failed


def _load_all(
    modules: list[Any], dev: Any, theirs: set[int], children: list[Any] = ()
) -> list[tuple[str, Exception]]:
    """Loads ``modules`` here; waits for the children before the first one they build."""
    failed = []
    waited = False
    for m in modules:
        if not waited and id(m) in theirs:
            for _proc, t in children:
                t.join()
            waited = True
        _local.silent = id(m) in theirs  # built by a child: loaded here from the cache
        try:
            _warp_compat.load(m, dev)
        except Exception as e:  # noqa: BLE001  (reported per module by the caller)
            failed.append((display_name(m), e))
        finally:
            _local.silent = False
    for _proc, t in children:
        t.join()
    return failed


def human_path(path: str | Path) -> str:
    """Returns ``path`` with the home folder written ``~``."""
    p = str(path)
    home = os.path.expanduser("~")
    return "~" + p[len(home) :] if home and home != "/" and p.startswith(home + os.sep) else p
