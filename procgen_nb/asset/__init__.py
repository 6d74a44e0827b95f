"""Kernel assets: ``asset.resolve("<identity>", "computeShader")`` and ``asset.add_path``.

A kernel asset is a folder ``<name>/`` holding ``<name>.py`` (Warp source) and
``bindings.yaml``. The built-in kernels are ``procgen/<name>``; a folder of kernels a
user adds with ``add_path(prefix, folder)`` gives ``<prefix>/<name>``. A bare name is
refused: a kernel is named by identity.
"""

from __future__ import annotations

import importlib.resources
import re
import threading
from pathlib import Path

from ..errors import AssetError, BindingError
from ._bindings import Binding, KernelSpec, Specialize, load_spec
from ._preprocess import Layout, preprocess
from ._variants import Variant, build_variant, cache_dir

__all__ = [
    "Binding",
    "KernelRef",
    "KernelSpec",
    "Specialize",
    "Variant",
    "add_path",
    "builtin_folder",
    "cache_dir",
    "identities",
    "paths",
    "preprocess",
    "remove_path",
    "resolve",
]

_PREFIX = re.compile(r"^[a-z][a-z0-9_.-]*$")
#: a kernel's folder name: no separators, no leading dot (``..`` would leave the folder)
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_lock = threading.RLock()


def builtin_folder() -> Path:
    """Returns the folder of the built-in kernels (inside the wheel, or the source tree's)."""
    packaged = importlib.resources.files("procgen_nb") / "_assets" / "kernels"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "kernels"


_paths: dict[str, Path] = {}


def paths() -> dict[str, Path]:
    """Returns prefix -> folder for every kernel folder known (``procgen`` included)."""
    return {"procgen": builtin_folder(), **_paths}


def add_path(prefix: str, folder: str | Path) -> None:
    """Adds a folder of kernel assets under ``prefix`` (identities ``<prefix>/<name>``).

    Raises:
        AssetError: a prefix that is not a lowercase name, ``procgen``, or a missing folder.
    """
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise AssetError(
            f"add_path(prefix): expected a lowercase name like 'mylab', got {prefix!r}"
        )
    if prefix == "procgen":
        raise AssetError(
            "add_path(prefix): expected a prefix other than the built-in 'procgen', got 'procgen'"
        )
    path = Path(folder)
    if not path.is_dir():
        raise AssetError(f"add_path(folder): expected an existing folder, got {str(folder)!r}")
    with _lock:
        _paths[prefix] = path.resolve()
        for key in [k for k in _refs if k.startswith(prefix + "/")]:
            del _refs[key]


def remove_path(prefix: str) -> None:
    """Forgets the folder added under ``prefix``."""
    with _lock:
        _paths.pop(prefix, None)
        for key in [k for k in _refs if k.startswith(prefix + "/")]:
            del _refs[key]


def identities() -> list[str]:
    """Returns every kernel identity that resolves, sorted."""
    out = []
    for prefix, folder in paths().items():
        if folder.is_dir():
            out += [
                f"{prefix}/{p.name}" for p in folder.iterdir() if (p / "bindings.yaml").is_file()
            ]
    return sorted(out)


class KernelRef:
    """A resolved kernel: its identity, its schema and its variants (built once each)."""

    def __init__(self, identity: str, spec: KernelSpec):
        self.identity = identity
        self.spec = spec
        self._variants: dict[tuple[tuple[str, str], ...], Variant] = {}

    def __repr__(self) -> str:
        return f"KernelRef({self.identity!r})"

    def options(self, specialize: dict | None) -> dict[str, str]:
        """Returns the full specialize choices: the given ones checked, the defaults for the rest.

        Raises:
            BindingError: a key the kernel does not specialize, or an option it does not list.
        """
        known = self.spec.option_names()
        given = dict(specialize or {})
        out: dict[str, str] = {}
        for key, value in given.items():
            if key not in known:
                raise BindingError(
                    f"{self.identity}: specialize: expected keys among {sorted(known)}, got {key!r}"
                )
            if str(value) not in known[key]:
                raise BindingError(
                    f"{self.identity}: specialize {key}: expected one of {list(known[key])}, got {value!r}"
                )
            out[key] = str(value)
        for key, opts in known.items():
            out.setdefault(key, opts[0])
        return out

    def variant(
        self, specialize: dict | None = None, layouts: dict[str, Layout] | None = None
    ) -> Variant:
        """Returns the variant for ``specialize`` (built on first use, then cached).

        Args:
            specialize: the specialize choices (defaults for the keys left out).
            layouts: for a kernel that reads columns by name (``NAME_col_<column>``),
                columns binding -> ``((column, lanes), ...)`` as packed: the variant gets
                the accessors of exactly those columns (one variant per layout).
        """
        opts = self.options(specialize)
        lay = tuple(sorted((k, tuple(v)) for k, v in (layouts or {}).items()))
        key = (tuple(sorted(opts.items())), lay)
        v = self._variants.get(key)
        if v is None:
            with _lock:
                v = self._variants.get(key)
                if v is None:
                    v = self._variants[key] = build_variant(
                        self.identity, self.spec, opts, dict(lay)
                    )
        return v


_refs: dict[str, KernelRef] = {}


def resolve(identity: str, kind: str = "computeShader") -> KernelRef:
    """Resolves a kernel identity (``procgen/<name>`` or ``<prefix>/<name>``) to a KernelRef.

    Raises:
        AssetError: a bare name, an unknown prefix or kernel, or a kind other than computeShader.
        BindingsFileError: the kernel's bindings.yaml is malformed.
    """
    if kind != "computeShader":
        raise AssetError(f"asset.resolve(kind): expected 'computeShader', got {kind!r}")
    if not isinstance(identity, str) or identity.count("/") != 1:
        raise AssetError(
            "asset.resolve(identity): expected '<prefix>/<name>' such as 'procgen/gather' "
            f"(a bare name is refused), got {identity!r}"
        )
    with _lock:
        ref = _refs.get(identity)
        if ref is not None:
            return ref
        prefix, name = identity.split("/")
        folders = paths()
        if prefix not in folders:
            raise AssetError(
                f"asset.resolve(identity): expected a prefix among {sorted(folders)}, got {prefix!r} "
                f"in {identity!r}"
            )
        if not _NAME.match(name):
            raise AssetError(
                "asset.resolve(identity): expected a kernel name of letters, digits, '_', '.' "
                f"and '-' not starting with '.' (inside its folder), got {name!r} in {identity!r}"
            )
        root = folders[prefix].resolve()
        folder = (root / name).resolve()
        if folder.parent != root:
            raise AssetError(
                f"asset.resolve(identity): expected a kernel folder inside {str(root)!r}, got "
                f"{identity!r} leading to {str(folder)!r}"
            )
        for leaf in ("bindings.yaml", f"{name}.py"):
            target = (folder / leaf).resolve()
            if (folder / leaf).exists() and target.parent != folder:
                raise AssetError(
                    f"asset.resolve(identity): expected {leaf} inside {str(folder)!r}, got "
                    f"{identity!r} leading to {str(target)!r}"
                )
        if not (folder / "bindings.yaml").is_file():
            known = [i for i in identities() if i.startswith(prefix + "/")]
            raise AssetError(f"asset.resolve(identity): expected one of {known}, got {identity!r}")
        ref = _refs[identity] = KernelRef(identity, load_spec(folder, name))
        return ref
