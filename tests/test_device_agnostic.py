"""Device-agnostic library code: no allocation or context on a literal device.

Every array takes its context's device; only ``procgen_nb/device.py`` (the device choice)
names a device. A scan of the package's syntax trees finds a device literal (``"cpu"``,
``"cuda"``, ``"cuda:N"``) passed as ``device=``, as a parameter's default, or to a call that
picks a device (``LaunchContext``, ``default_context``, ``wp.get_device``, ...), and a Warp
allocation without ``device=`` (Warp's default device, which need not be the context's).
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "procgen_nb"
DEVICE_CHOICE = {"procgen_nb/device.py"}
LITERAL = re.compile(r"cpu|cuda(:\d+)?")
PICKERS = {
    "LaunchContext",
    "default_context",
    "get_device",
    "ScopedDevice",
    "resolve_device",
    "set_device",
    "synchronize_device",
}


#: Warp's allocators: without ``device=`` they take Warp's default device, not the context's.
ALLOCATORS = {"zeros", "empty", "full", "ones", "array", "zeros_like", "empty_like", "full_like"}


def _is_literal(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and LITERAL.fullmatch(node.value) is not None
    )


def device_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, what)`` for each device literal the scan refuses in one module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            for kw in node.keywords:
                if kw.arg == "device" and _is_literal(kw.value):
                    found.append((node.lineno, f"device={kw.value.value!r}"))
            if name in PICKERS and node.args and _is_literal(node.args[0]):
                found.append((node.lineno, f"{name}({node.args[0].value!r})"))
            if (
                name in ALLOCATORS
                and isinstance(fn, ast.Attribute)
                and getattr(fn.value, "id", "") in ("wp", "warp")
                and (node.args or name != "array")  # wp.array(dtype=...): a type
                and not any(kw.arg == "device" for kw in node.keywords)
            ):
                found.append((node.lineno, f"wp.{name}(...) on Warp's default device"))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip(pos[len(pos) - len(a.defaults) :], a.defaults))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            for arg, default in pairs:
                if "device" in arg.arg and _is_literal(default):
                    found.append((node.lineno, f"{node.name}({arg.arg}={default.value!r})"))
    return sorted(found)


def test_the_scan_finds_each_form_and_leaves_comparisons_alone():
    src = textwrap.dedent(
        """
        import warp as wp
        a = wp.zeros(3, dtype=float, device="cpu")
        ctx = LaunchContext("cuda:0")
        d = wp.get_device("cuda")
        def f(n, device="cpu"): ...
        def g(*, out_device: str = "cuda:1"): ...
        ok = ctx.device == "cpu" or runs == "cpu"
        b = wp.zeros(3, dtype=float, device=ctx.device)
        c = LaunchContext(ctx.device)
        wp.empty(1, device="cpux")
        e = wp.full(4, 1.0)
        t = wp.array(dtype=float)
        """
    )
    assert device_literals(ast.parse(src)) == [
        (3, "device='cpu'"),
        (4, "LaunchContext('cuda:0')"),
        (5, "get_device('cuda')"),
        (6, "f(device='cpu')"),
        (7, "g(out_device='cuda:1')"),
        (12, "wp.full(...) on Warp's default device"),
    ]


def test_no_library_code_names_a_device_outside_the_device_choice():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE.parent))
        hits = device_literals(ast.parse(path.read_text(encoding="utf-8")))
        if hits and rel not in DEVICE_CHOICE:
            found[rel] = hits
    assert found == {}
