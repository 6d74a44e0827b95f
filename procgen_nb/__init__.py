"""procgen_nb: a Jupyter toolkit for exploring procedural generation on NVIDIA Warp.

Write procgen *nodes* (Python functions that wire *ops*), cook them as a graph through the
Warp runtime, generate race tracks for thousands of environments at once, and look at the
results in a notebook. Warp on the CPU is the default; a CUDA device is used when present
(``PROCGEN_DEVICE=cpu|cuda:0`` overrides). Five entry points:

- **Nodes and graphs**: ``pg.node`` turns a function into a node with ``pg.Field``
  parameters; ``pg.Graph`` wires nodes and ``graph.cook(params=...)`` runs them, re-cooking
  only what a change reaches, with a ``CookReport`` of launches, readbacks and time.
- **Ops**: ``pg.ops.device.kernel``, ``pg.ops.transfer.upload`` / ``readback``,
  ``pg.ops.cpu.call`` (Lua): the steps a node is built from, each stating where it runs.
- **Assets**: ``pg.asset.resolve("procgen/gather", "computeShader")`` names a kernel asset
  (Warp source plus ``bindings.yaml``); ``pg.asset.add_path`` adds your own folder of them.
- **track_gen**: ``pg.track_gen.presets.track("polar", num_envs=1024)`` makes track
  centerlines, ``pg.track_gen.build(...)`` courses with gates; generators are plugins.
- **explore / plot**: ``pg.explore(generator_or_graph)`` shows sliders and a live view in a
  notebook; ``pg.plot`` draws tracks, gates and counts with matplotlib.

Kernels compile on first use (a progress bar shows it) and are cached by Warp;
``procgen-nb warmup`` builds them all ahead of time. Names are imported on first use, so
``import procgen_nb`` is cheap and ``procgen-nb --help`` does not load Warp.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_ERRORS = (
    "AssetError",
    "BindingError",
    "BindingsFileError",
    "CapacityError",
    "CookError",
    "DeviceError",
    "DirectLimitError",
    "DuplicateSpecError",
    "GeneratorError",
    "GraphError",
    "GuardError",
    "LegacyPluginStreamError",
    "LuaCeilingError",
    "LuaError",
    "LuaReturnError",
    "LuaSandboxError",
    "NotCapturableError",
    "ParamsError",
    "ProcgenError",
    "UploadError",
)

#: Every public name -> (module, attribute); None imports the module itself.
_LAZY: dict[str, tuple[str, str | None]] = {
    **{name: ("procgen_nb.errors", name) for name in _ERRORS},
    **{name: ("procgen_nb._traffic", name) for name in ("Traffic", "collect", "traffic")},
    **{
        name: ("procgen_nb.columns", name)
        for name in ("Column", "Domain", "Geometry", "LiveCount", "Part", "Record", "Texture")
    },
    **{name: ("procgen_nb.counts", name) for name in ("Count", "count", "count_max", "count_min")},
    **{
        name: ("procgen_nb.device", name)
        for name in ("available_devices", "get_device", "set_device")
    },
    **{
        name: ("procgen_nb.graph", name)
        for name in ("Const", "CookResult", "Graph", "Node", "node")
    },
    **{
        name: ("procgen_nb.launch", name)
        for name in ("LaunchContext", "Recording", "default_context")
    },
    "Field": ("procgen_nb.params", "Field"),
    "Params": ("procgen_nb.params", "Params"),
    "CookReport": ("procgen_nb.report", "CookReport"),
    "NodeReport": ("procgen_nb.report", "NodeReport"),
    "abi": ("procgen_nb.abi", None),
    "asset": ("procgen_nb.asset", None),
    "ops": ("procgen_nb.ops", None),
    "explore": ("procgen_nb.ui", "explore"),
    "fieldc": ("procgen_nb.fieldc", None),
    "lua": ("procgen_nb.lua", None),
    "mesh": ("procgen_nb.mesh", None),
    "plot": ("procgen_nb.plot", None),
    "track_gen": ("procgen_nb.track_gen", None),
    "ui": ("procgen_nb.ui", None),
}


def __getattr__(name: str) -> Any:
    """Imports a public name's module on first use (Warp loads with the first of them)."""
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'procgen_nb' has no attribute {name!r}")
    module, attr = target
    mod = importlib.import_module(module)
    value = getattr(mod, attr) if attr else mod
    if attr is not None:
        globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    """Lists the public names (lazy ones included) with the module's own attributes."""
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AssetError",
    "BindingError",
    "BindingsFileError",
    "CapacityError",
    "Column",
    "Const",
    "CookError",
    "CookReport",
    "CookResult",
    "Count",
    "DeviceError",
    "DirectLimitError",
    "Domain",
    "DuplicateSpecError",
    "Field",
    "GeneratorError",
    "Geometry",
    "Graph",
    "GraphError",
    "GuardError",
    "LaunchContext",
    "LegacyPluginStreamError",
    "LiveCount",
    "LuaCeilingError",
    "LuaError",
    "LuaReturnError",
    "LuaSandboxError",
    "Node",
    "NodeReport",
    "NotCapturableError",
    "Params",
    "ParamsError",
    "Part",
    "ProcgenError",
    "Record",
    "Recording",
    "Texture",
    "Traffic",
    "UploadError",
    "abi",
    "asset",
    "available_devices",
    "collect",
    "count",
    "count_max",
    "count_min",
    "default_context",
    "explore",
    "fieldc",
    "get_device",
    "lua",
    "mesh",
    "node",
    "ops",
    "plot",
    "set_device",
    "track_gen",
    "traffic",
    "ui",
]
