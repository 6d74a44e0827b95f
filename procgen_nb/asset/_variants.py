"""Kernel variants: a kernel asset's source preprocessed for one set of specialize options.

Each variant is written once to the variant cache (``PROCGEN_NB_CACHE`` or
``~/.cache/procgen_nb``), imported as its own module, checked against its schema and
built by Warp once per process and device; Warp's kernel cache keeps the build across
processes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any

import warp as wp

from .. import _warp_compat, abi
from ..device import _init_warp
from ..elements import ELEMENTS
from ..errors import BindingsFileError, DirectLimitError
from ._bindings import Binding, KernelSpec
from ._preprocess import Layout, accessors, preprocess, reads_by_name, when_holds

WP_ELEMENTS = {n: e.dtype for n, e in ELEMENTS.items()}
_SCALARS = {wp.float32: float, wp.int32: int, wp.uint32: int, float: float, int: int, bool: bool}
_lock = threading.RLock()


def cache_dir() -> Path:
    """Returns the folder where preprocessed variants are written."""
    root = os.environ.get("PROCGEN_NB_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "procgen_nb"
    )
    path = Path(root) / "variants"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclasses.dataclass
class Variant:
    """One built variant of a kernel.

    Attributes:
        identity: the kernel's identity (``procgen/gather``).
        options: the specialize choices of this variant.
        kernel: the Warp kernel.
        bindings: the bindings active in this variant, by name.
        elements: the element (f32, i32, ...) of each active binding.
        uniforms: the scalar params the kernel declares, name -> Python type.
        args: the kernel's parameter names in order.
        buffers: how many storage buffers the variant binds.
        by_name: columns binding -> the columns its source reads as ``NAME_col_<column>``.
        layouts: columns binding -> the packed layout its accessors were generated for.
    """

    identity: str
    spec: KernelSpec
    options: dict[str, str]
    kernel: Any
    module: Any
    bindings: dict[str, Binding]
    elements: dict[str, str]
    uniforms: dict[str, type]
    args: list[str]
    buffers: int
    by_name: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    layouts: dict[str, Layout] = dataclasses.field(default_factory=dict)
    _built_on: set[str] = dataclasses.field(default_factory=set)

    def ensure_built(self, device: str) -> None:
        """Builds (or loads from Warp's cache) the variant's program on ``device`` once."""
        if device in self._built_on:
            return
        with _lock:
            if device not in self._built_on:
                wp.load_module(self.module, device=device)
                self._built_on.add(device)  # (the load, and a compile, counted by the hook)


def _arg_element(arg: Any) -> tuple[str, str] | None:
    t = arg.type
    if isinstance(t, wp.array) or hasattr(t, "dtype") and hasattr(t, "ndim"):
        for k, v in WP_ELEMENTS.items():
            if t.dtype == v:
                return k, f"{t.ndim}d"
        return "?", f"{t.ndim}d"
    return None


def build_variant(
    identity: str,
    spec: KernelSpec,
    options: dict[str, str],
    layouts: dict[str, Layout] | None = None,
) -> Variant:
    """Preprocesses, imports and checks one variant.

    With ``layouts`` (columns binding -> the columns bound, in packed order, and their
    lanes), the variant's source gets the accessors ``NAME_col_<column>`` of those columns.

    Raises:
        BindingsFileError: the source does not match its schema.
        DirectLimitError: the variant binds more than ``abi.direct_limit`` buffers.
    """
    _init_warp()
    tag = ",".join(f"{k}={v}" for k, v in sorted(options.items())) or "default"
    where = str(spec.source_path)
    text = preprocess(spec.source_path.read_text(), options, where)
    by_name = {
        b.name: reads_by_name(text, b.name)
        for b in spec.bindings
        if b.kind == "columns" and reads_by_name(text, b.name)
    }
    layouts = {k: tuple(v) for k, v in (layouts or {}).items()}
    if layouts:
        text += accessors(layouts, where)
        tag += " " + ";".join(
            f"{k}=" + ",".join(f"{c}:{n}" for c, n in v) for k, v in sorted(layouts.items())
        )
    digest = hashlib.sha256(f"{identity}|{tag}|{text}".encode()).hexdigest()[:16]
    modname = f"procgen_variant_{spec.name}_{digest}"
    path = cache_dir() / f"{modname}.py"
    header = f"# {identity} [{tag}] preprocessed from {spec.source_path}\n"
    if not path.exists() or path.read_text() != header + text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(header + text)
        os.replace(tmp, path)
    module = sys.modules.get(modname)
    if module is None:
        mspec = importlib.util.spec_from_file_location(modname, path)
        assert mspec is not None and mspec.loader is not None
        module = importlib.util.module_from_spec(mspec)
        sys.modules[modname] = module
        try:
            mspec.loader.exec_module(module)
            wp.set_module_options({"enable_backward": False}, module=module)  # no adjoints
        except Exception as e:
            sys.modules.pop(modname, None)
            raise BindingsFileError(
                f"{where} [{tag}]: expected Warp source that imports, got {type(e).__name__}: {e}"
            ) from e
    kernel = getattr(module, spec.entry, None)
    if not isinstance(kernel, wp.Kernel):
        raise BindingsFileError(
            f"{where}: expected a @wp.kernel named {spec.entry!r}, got {type(kernel).__name__}"
        )
    active = {
        b.name: b
        for b in spec.bindings
        if when_holds(b.when, options, f"{spec.yaml_path}: bindings[{b.name}].when")
    }
    elements = {n: options.get(b.element, b.element) for n, b in active.items()}
    kargs = {a.label: a for a in _warp_compat.kernel_args(kernel)}
    expected_arrays: dict[str, str] = {}
    for n, b in active.items():
        expected_arrays[n] = elements[n] if b.kind != "columns" else "f32"
        if b.appended:
            expected_arrays[f"{n}_count"] = "u32"
    uniforms: dict[str, type] = {}
    for label, a in kargs.items():
        el = _arg_element(a)
        if el is None:
            py = _SCALARS.get(a.type)
            if py is None:
                raise BindingsFileError(
                    f"{where} [{tag}]: param {label!r}: expected a float, int, uint32 or bool "
                    f"uniform, got {a.type}"
                )
            uniforms[label] = py
            continue
        if label not in expected_arrays:
            raise BindingsFileError(
                f"{spec.yaml_path} [{tag}]: bindings: expected an entry for the kernel's array "
                f"param {label!r}, got none"
            )
        want = expected_arrays[label]
        if el[0] != want:
            raise BindingsFileError(
                f"{spec.yaml_path} [{tag}]: bindings[{label}].element: the kernel declares "
                f"{el[0]}, the schema states {want}"
            )
    missing = sorted(set(expected_arrays) - set(kargs))
    if missing:
        raise BindingsFileError(
            f"{where} [{tag}]: expected kernel params for the bindings {missing}, got none"
        )
    buffers = len(expected_arrays)
    if buffers > abi.direct_limit:
        raise DirectLimitError(
            f"kernel {identity} variant [{tag}]: expected at most abi.direct_limit="
            f"{abi.direct_limit} storage buffers, got {buffers}"
        )
    return Variant(
        identity=identity,
        spec=spec,
        options=dict(options),
        kernel=kernel,
        module=module,
        bindings=active,
        elements=elements,
        uniforms=uniforms,
        args=list(kargs),
        buffers=buffers,
        by_name=by_name,
        layouts=layouts,
    )
